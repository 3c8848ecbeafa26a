#!/usr/bin/env bash
# Client CPU per streamed token and send lag: simbench's load generator
# (BenchmarkStream) and vegeta side by side, against one streaming server
# in its own process (the loadgen test binary as openaitest.FastServer),
# each client run REPEATS times in alternation, so that a noisy machine
# shifts both alike.
#
#   loadgen/scripts/vegeta_compare.sh [RATE] [SECONDS] [TOKENS] [ITL] [REPEATS]
#
# from the repo root; defaults 500 req/s for 20 s of 50-token streams,
# first token after ITL and one every ITL (default 10ms), 3 repeats. The
# issue's second load is `2000 20 100 20ms`. BASE=<git revision> also runs
# that revision's client (built from a temporary worktree) in the same
# alternation, for base-vs-head ratios; revisions before this script's own
# commit lack the benchmark's SIMBENCH_BENCH_URL and cannot be compared.
#
# CPU is each client process's user+sys time (rusage, /usr/bin/time) over
# the tokens it received: for vegeta 2xx responses × TOKENS (it reads the
# body and parses nothing), for simbench the content chunks' token counts
# (its whole test process: workload synthesis, SSE and JSON parsing, record
# writing). simbench's send lag is its records' send_lag (start − intended).
# vegeta writes no intended send times, so its send lag is measured the
# same way but anchored to its least-late request (hit k is due at
# began + k/rate). vegeta (pinned) is installed with `go install` into
# ~/.cache/simbench, outside go.mod.
#
# On a shared machine other work steals the CPUs, and a starved client
# reads several chunks per wake-up: its CPU per token drops and its send
# lag soars. PRIO=rt runs the server and the clients round-robin real-time
# (chrt -r 10, root) so that they see an almost idle machine. Use it only
# at loads the machine can carry: a real-time process that wants more CPU
# than there is starves everything else (and, SCHED_FIFO, could starve its
# own threads), so each client run is also bounded by a timeout.
#
# PROF=DIR writes a CPU profile of each simbench run to DIR/NAME-REP.pprof
# (go tool pprof -top DIR/head-1.pprof), for the test binary of that run.
set -euo pipefail
RATE=${1:-500}
SECS=${2:-20}
TOKENS=${3:-50}
ITL=${4:-10ms}
REPEATS=${5:-3}
VEGETA_VERSION=v12.13.0
RUN=()
[ "${PRIO:-}" = rt ] && RUN=(chrt -r 10)
LIMIT=$((${SECS%.*} * 4 + 120)) # seconds a client run may take
ROOT=$(pwd)
WORK=$(mktemp -d)
SERVER_PID=
cleanup() {
  [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null || true
  [ -d "$WORK/base" ] && git -C "$ROOT" worktree remove --force "$WORK/base" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/simbench/vegeta-$VEGETA_VERSION
VEGETA=$CACHE/vegeta
if [ ! -x "$VEGETA" ]; then
  mkdir -p "$CACHE"
  (cd "$WORK" && GOBIN="$CACHE" GOFLAGS=-mod=mod go install "github.com/tsenart/vegeta/v12@$VEGETA_VERSION")
fi

go test -c -o "$WORK/head.test" ./loadgen
CLIENTS="vegeta head"
if [ -n "${BASE:-}" ]; then
  git -C "$ROOT" worktree add --detach "$WORK/base" "$BASE" >/dev/null
  (cd "$WORK/base" && go test -c -o "$WORK/base.test" ./loadgen)
  CLIENTS="vegeta head base"
fi

SIMBENCH_OPENAITEST_SERVE=127.0.0.1:0 SIMBENCH_BENCH_TOKENS=$TOKENS SIMBENCH_BENCH_TTFT=$ITL SIMBENCH_BENCH_ITL=$ITL \
  "${RUN[@]}" "$WORK/head.test" > "$WORK/server.out" &
SERVER_PID=$!
for _ in $(seq 50); do grep -q listening "$WORK/server.out" 2>/dev/null && break; sleep 0.1; done
ADDR=$(awk '/listening/ {print $2}' "$WORK/server.out")
WORDS=$(python3 -c "print(' '.join(['the']*100))")
printf '{"messages":[{"role":"user","name":"text","content":"%s"}],"model":"bench","stream":true,"max_completion_tokens":%d}' \
  "$WORDS" "$TOKENS" > "$WORK/body.json"
printf 'POST http://%s/v1/chat/completions\nContent-Type: application/json\n@%s\n' "$ADDR" "$WORK/body.json" > "$WORK/targets"

# run_vegeta REP appends one row to rows.tsv.
run_vegeta() {
  timeout "$LIMIT" "${RUN[@]}" /usr/bin/time -f "%U %S" -o "$WORK/cpu" "$VEGETA" attack -rate="$RATE" -duration="${SECS}s" -timeout=60s \
    -targets="$WORK/targets" > "$WORK/results.bin"
  "$VEGETA" encode --to json "$WORK/results.bin" > "$WORK/results.json"
  python3 - "$WORK/results.json" "$WORK/cpu" "$RATE" "$TOKENS" "$1" >> "$WORK/rows.tsv" <<'PY'
import json, sys, datetime
path, cpu, rate, tokens, rep = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
rows = []
for line in open(path):
    r = json.loads(line)
    ts = r["timestamp"]
    main, frac = ts.split(".") if "." in ts else (ts[:19], "0Z")
    frac = frac.rstrip("Z").split("+")[0].split("-")[0]
    t = datetime.datetime.fromisoformat(main[:19]).timestamp() * 1e9 + int((frac + "000000000")[:9])
    rows.append((r["seq"], t, r["code"], r["latency"], r["error"]))
rows.sort()
iv = 1e9 / rate
began = min(t - s * iv for s, t, *_ in rows)
lags = sorted((t - began - s * iv) / 1e6 for s, t, *_ in rows)
def pct(p):
    k = (len(lags) - 1) * p / 100; f = int(k); c = min(f + 1, len(lags) - 1)
    return lags[f] + (lags[c] - lags[f]) * (k - f)
starts = sorted(t for _, t, *_ in rows)
span = (starts[-1] - starts[0]) / 1e9
ok = sum(1 for r in rows if r[2] == 200 and not r[4])
ends = sorted([(t, 1) for _, t, _, lat, _ in rows] + [(t + lat, -1) for _, t, _, lat, _ in rows])
openn = peak = 0
for _, d in ends:
    openn += d; peak = max(peak, openn)
u, s = map(float, open(cpu).read().split()[-2:])
got = ok * tokens
print("\t".join(map(str, ["vegeta", rep, f"{(len(rows)-1)/span:.1f}", got, f"{(u+s)*1e6/max(got,1):.3f}",
                          f"{pct(50):.3f}", f"{pct(99):.3f}", peak, len(rows) - ok])))
PY
}

# run_simbench NAME REP appends one row to rows.tsv.
run_simbench() {
  local prof=()
  [ -n "${PROF:-}" ] && mkdir -p "$PROF" && prof=(-test.cpuprofile "$(cd "$PROF" && pwd)/$1-$2.pprof")
  (cd "$WORK" && SIMBENCH_BENCH_URL="http://$ADDR" SIMBENCH_BENCH_RATE=$RATE SIMBENCH_BENCH_SECONDS=$SECS SIMBENCH_BENCH_TOKENS=$TOKENS \
    timeout "$LIMIT" "${RUN[@]}" /usr/bin/time -f "%U %S" -o "$WORK/cpu" "./$1.test" -test.run '^$' -test.bench '^BenchmarkStream$' -test.benchtime 1x "${prof[@]}" > "$WORK/bench.out")
  python3 - "$WORK/bench.out" "$WORK/cpu" "$1" "$2" >> "$WORK/rows.tsv" <<'PY'
import sys
out, cpu, name, rep = sys.argv[1:]
line = next(l for l in open(out) if l.startswith("BenchmarkStream"))
f = line.split()
m = {f[i + 1]: float(f[i]) for i in range(2, len(f) - 1, 2)}
u, s = map(float, open(cpu).read().split()[-2:])
tok = int(m["tokens"])
print("\t".join(map(str, [f"simbench-{name}", rep, f"{m['req/s']:.1f}", tok, f"{(u+s)*1e6/max(tok,1):.3f}",
                          f"{m['lag-p50-ms']:.3f}", f"{m['lag-p99-ms']:.3f}", int(m["open-streams"]), int(m["errors"])])))
PY
}

echo "== $RATE req/s for $SECS s, $TOKENS-token streams $ITL apart, $REPEATS repeats of: $CLIENTS${PRIO:+ (PRIO=$PRIO)}"
: > "$WORK/rows.tsv"
for rep in $(seq "$REPEATS"); do
  order=$CLIENTS
  [ $((rep % 2)) -eq 0 ] && order=$(echo "$CLIENTS" | tr ' ' '\n' | tac | tr '\n' ' ')
  for c in $order; do
    if [ "$c" = vegeta ]; then run_vegeta "$rep"; else run_simbench "$c" "$rep"; fi
    tail -n 1 "$WORK/rows.tsv" >&2
  done
done

python3 - "$WORK/rows.tsv" <<'PY'
import sys, statistics
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
cols = ["client", "run", "req/s", "tokens", "cpu-µs/token", "lag-p50-ms", "lag-p99-ms", "open-streams", "errors"]
def table(rs):
    w = [max(len(c), *(len(r[i]) for r in rs)) for i, c in enumerate(cols)]
    print("  ".join(c.rjust(w[i]) if i else c.ljust(w[i]) for i, c in enumerate(cols)))
    for r in rs:
        print("  ".join(v.rjust(w[i]) if i else v.ljust(w[i]) for i, v in enumerate(r)))
table(rows)
print()
by = {}
for r in rows:
    by.setdefault(r[0], []).append(r)
med = {}
for name, rs in by.items():
    f = lambda i: [float(r[i]) for r in rs]
    med[name] = {c: statistics.median(f(i)) for i, c in enumerate(cols) if i >= 2}
    med[name]["spread"] = (min(f(4)), max(f(4)))
print("medians (cpu-µs/token min..max over runs; ratio = median of per-repeat cpu ratios to vegeta):")
for name, m in med.items():
    ratio = ""
    if name != "vegeta" and "vegeta" in by:
        v = {r[1]: float(r[4]) for r in by["vegeta"]}
        ratio = f"  {statistics.median(float(r[4]) / v[r[1]] for r in by[name] if r[1] in v):.3f}× vegeta"
    lo, hi = m["spread"]
    print(f"  {name:14s} {m['req/s']:8.1f} req/s  cpu {m['cpu-µs/token']:7.3f} µs/token ({lo:.3f}..{hi:.3f})"
          f"  lag p50 {m['lag-p50-ms']:7.3f} ms  p99 {m['lag-p99-ms']:8.3f} ms{ratio}")
PY

#!/usr/bin/env bash
# Runs simbench's loadgen benchmark and vegeta side by side against the same
# streaming server (openaitest.FastServer in its own process: 100-token
# streams, first token after 20 ms, then one every 20 ms).
#
#   loadgen/scripts/vegeta_compare.sh [RATE] [SECONDS]     (from the repo root)
#
# vegeta is installed into a temporary directory from the Go module proxy;
# nothing is added to go.mod. vegeta has no intended send times in its
# output, so its send lag is measured as simbench measures it but anchored
# to its least-late request (hit k is due at began + (k+1)/rate).
set -euo pipefail
RATE=${1:-2000}
SECS=${2:-30}
ROOT=$(pwd)
WORK=$(mktemp -d)
trap 'kill $SERVER_PID 2>/dev/null || true; rm -rf "$WORK"' EXIT

go test -c -o "$WORK/loadgen.test" ./loadgen
(cd "$WORK" && GOBIN="$WORK" GOFLAGS=-mod=mod go install github.com/tsenart/vegeta/v12@latest)

echo "== simbench loadgen: $RATE req/s for $SECS s"
(cd "$WORK" && SIMBENCH_BENCH_RATE=$RATE SIMBENCH_BENCH_SECONDS=$SECS \
  ./loadgen.test -test.run '^$' -test.bench '^BenchmarkStream$' -test.benchtime 1x | grep Benchmark | tr '\t' '\n' | sed 's/^ *//' | tail -n +3)

SIMBENCH_OPENAITEST_SERVE=127.0.0.1:0 "$WORK/loadgen.test" > "$WORK/server.out" &
SERVER_PID=$!
for _ in $(seq 50); do grep -q listening "$WORK/server.out" 2>/dev/null && break; sleep 0.1; done
ADDR=$(awk '/listening/ {print $2}' "$WORK/server.out")
WORDS=$(python3 -c "print(' '.join(['the']*100))")
printf '{"messages":[{"role":"user","name":"text","content":"%s"}],"model":"bench","stream":true,"max_completion_tokens":100}' "$WORDS" > "$WORK/body.json"
printf 'POST http://%s/v1/chat/completions\nContent-Type: application/json\n@%s\n' "$ADDR" "$WORK/body.json" > "$WORK/targets"

echo "== vegeta: $RATE req/s for $SECS s"
/usr/bin/time -f "%U %S" -o "$WORK/cpu" "$WORK/vegeta" attack -rate="$RATE" -duration="${SECS}s" -timeout=60s \
  -targets="$WORK/targets" > "$WORK/results.bin"
"$WORK/vegeta" encode --to json "$WORK/results.bin" > "$WORK/results.json"
python3 - "$WORK/results.json" "$WORK/cpu" "$RATE" <<'PY'
import json, sys, datetime
rate = float(sys.argv[3])
rows = []
for line in open(sys.argv[1]):
    r = json.loads(line)
    ts = r["timestamp"]
    main, frac = ts.split(".") if "." in ts else (ts[:19], "0Z")
    frac = frac.rstrip("Z").split("+")[0].split("-")[0]
    t = datetime.datetime.fromisoformat(main[:19]).timestamp() * 1e9 + int((frac + "000000000")[:9])
    rows.append((r["seq"], t, r["code"], r["latency"], r["error"]))
rows.sort()
iv = 1e9 / rate
began = min(t - (s + 1) * iv for s, t, *_ in rows)
lags = sorted((t - began - (s + 1) * iv) / 1e6 for s, t, *_ in rows)
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
u, s = map(float, open(sys.argv[2]).read().split()[-2:])
tokens = ok * 100
print(f"requests {len(rows)} ok {ok}")
print(f"req/s {(len(rows)-1)/span:.1f} (requested {rate:g}, {((len(rows)-1)/span/rate-1)*100:+.3f}%)")
print(f"lag-p50-ms {pct(50):.3f} lag-p99-ms {pct(99):.3f} lag-max-ms {lags[-1]:.3f} late>1ms-% {100*sum(l > 1 for l in lags)/len(lags):.2f}")
print(f"cpu-s {u+s:.2f} cpu-µs/token {(u+s)*1e6/max(tokens,1):.3f} open-streams {peak}")
PY

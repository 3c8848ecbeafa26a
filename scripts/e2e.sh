#!/usr/bin/env bash
# make e2e: the CPU real-engine tier. Starts Ollama (built from the Go module
# proxy, cached) serving the generated tiny model, then on the same
# workloads runs `simbench run` against it and `simbench sim --engine
# llamacpp` with 4 slots, and compares each pair:
#
#   sweep-c1 … sweep-c8   closed loop, concurrency 1, 2, 4, 8, fixed ISL/OSL
#   trace                 testdata/e2e/conversation_slice.jsonl (40 Mooncake
#                         rows), lengths scaled to what a 2-core CPU serves
#
# Artifacts go to artifacts/e2e/<workload>/{real,sim,compare.txt,
# compare.json,plots/}. The assertions (every request ok with exact OSL and
# one chunk per token, ISL = intended + chat template, TTFT rises from
# concurrency 4 to 8, compare files and PNGs present) live in
# cmd/simbench/e2e_test.go, which also prints the sim-vs-real table
# (reported, not gated). The engine is stopped by PID on exit, also on
# failure.
#
#   scripts/e2e.sh [SIMBENCH_BINARY]      default bin/simbench (built if missing)
# Knobs (environment): E2E_ARTIFACTS, E2E_REQUESTS, E2E_ISL, E2E_OSL,
# E2E_CONCURRENCY, E2E_TRACE_FLAGS, ENGINE_PORT, ENGINE_CFLAGS.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=engine/lib.sh
. scripts/engine/lib.sh

SB="${1:-bin/simbench}"
ART="${E2E_ARTIFACTS:-artifacts/e2e}"
REQUESTS="${E2E_REQUESTS:-24}"
ISL="${E2E_ISL:-128}"
OSL="${E2E_OSL:-64}"
CONCURRENCY="${E2E_CONCURRENCY:-1 2 4 8}"
TRACE="testdata/e2e/conversation_slice.jsonl"
# Mooncake ISL averages ~12k tokens and OSL ~360: a tenth of that, capped,
# is ~880 prompt and ~38 output tokens per request. The 40 rows span 12 s of
# bursts (10 to 16 requests at one instant); --speedup 0.1 stretches the
# schedule to 120 s, keeping the bursts, so the run takes about two minutes.
read -r -a TRACE_FLAGS <<<"${E2E_TRACE_FLAGS:---scale-lengths 0.1 --max-isl 1536 --max-osl 96 --speedup 0.1}"
SIM_CONFIG="testdata/e2e/sim-ollama.yaml"

start=$(date +%s)
work="$(mktemp -d "${TMPDIR:-/tmp}/simbench-e2e.XXXXXX")"
cleanup() {
	engine_stop
	if [ -d "$work/engine" ]; then
		mkdir -p "$ART/engine"
		cp "$work/engine/serve.log" "$work/engine/Modelfile" "$ART/engine/" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[ -x "$SB" ] || go build -o "$SB" ./cmd/simbench
rm -rf "$ART"
mkdir -p "$ART"

engine_up "$work/engine" "$SB"

# Both sides get the same workload flags; run adds the Ollama specifics:
# max_tokens (Ollama ignores max_completion_tokens), server token counts
# (usage.completion_tokens is exact; the client cannot tokenize), and no
# grace-period cancellation of requests still streaming.
real() {
	local dir="$1"
	shift
	engine_log "run  $dir: $*"
	"$SB" run --url "$ENGINE_URL" --model tiny --use-legacy-max-tokens --use-server-token-count \
		--benchmark-grace-period 0 --quiet -o "$ART/$dir/real" "$@" | tee "$ART/$dir/real.txt"
}

simulate() {
	local dir="$1"
	shift
	"$SB" sim --config "$SIM_CONFIG" --engine llamacpp --quiet -o "$ART/$dir/sim" "$@" >"$ART/$dir/sim.txt"
}

compare_pair() {
	local dir="$ART/$1"
	"$SB" compare "$dir/real" "$dir/sim" -o "$dir/compare.txt"
	"$SB" compare "$dir/real" "$dir/sim" --format json -o "$dir/compare.json" --plots "$dir/plots" >/dev/null
}

for c in $CONCURRENCY; do
	d="sweep-c$c"
	mkdir -p "$ART/$d"
	flags=(--concurrency "$c" --request-count "$REQUESTS" --isl "$ISL" --osl "$OSL" --seed 1)
	real "$d" "${flags[@]}"
	simulate "$d" "${flags[@]}"
	compare_pair "$d"
done

mkdir -p "$ART/trace"
real trace --trace "$TRACE" "${TRACE_FLAGS[@]}"
simulate trace --trace "$TRACE" "${TRACE_FLAGS[@]}"
compare_pair trace

engine_stop
engine_log "real and simulated runs done in $(($(date +%s) - start))s; checking"
SIMBENCH_E2E_DIR="$(cd "$ART" && pwd)" go test -count=1 -run '^TestE2E' ./cmd/simbench/ -v 2>&1 |
	tee "$ART/check.txt" | grep -v '^=== RUN'
engine_log "e2e passed in $(($(date +%s) - start))s; artifacts in $ART"

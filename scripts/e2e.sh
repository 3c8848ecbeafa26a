#!/usr/bin/env bash
# make e2e: the CPU real-engine tier, calibrate → predict. Starts Ollama
# (built from the Go module proxy, cached) serving the generated tiny model,
# then, on the engine:
#
#   1. `simbench calibrate --url` on the live engine, from a base config that
#      names only the engine structure (testdata/e2e/base-llamacpp.yaml): its
#      plan's runs land in calibration/, the fitted config in
#      calibrated-first.yaml;
#   2. held-out workloads, none of them in the plan:
#        load-sweep            a load sweep (run --sweep-concurrency 1,2,4,8,
#                              ISL 128, OSL 64) with the SLO E2E_SLO (TTFT ≤ 300 ms,
#                              attainment ≥ 0.9); its points are also the workloads
#        sweep-c1 … sweep-c8   (symbolic links to load-sweep/*/cN), and
#                              load-sweep/compare.* compares the capacities
#        isl384-c3             concurrency 3, ISL 384, OSL 96
#        trace                 testdata/e2e/conversation_slice.jsonl (40 Mooncake
#                              rows), lengths scaled to what a 2-core CPU serves
#   3. sweep-c4, the trace and sweep-c1 once more (real-repeat): the
#      real-vs-real spread (the trace's bursts reach the server in a
#      different order every run), and the drift since the first held-out run;
#   4. `calibrate --url` again, the same plan into calibration-after/
#      (calibrated-after.yaml).
#
# Then, with the engine stopped, calibrated.yaml is fitted on both plans
# together (`calibrate --real`), and every held-out workload is simulated
# with it (sim), with calibrated-first.yaml (sim-first: what calibrating
# first gives) and with the a-priori testdata/e2e/sim-ollama.yaml
# (sim-uncal). The host's speed moves in regimes of minutes (docs/e2e.md):
# a fit on runs before and after the predictions sees the
# host as it was on average over them, so the table's calibrated errors are
# the model's more than the host's; calibrated-first beside them shows what
# the drift costs a fit made first, and the table's host-drift section
# gives the plan's own runs after against before.
#
# Artifacts go to artifacts/e2e/<workload>/{real,sim,sim-first,sim-uncal,
# compare.txt,compare.json,plots/}, and sim-seeds/, sim-first-seeds/,
# sim-uncal-seeds/: each simulator once per simulator seed (E2E_SIM_SEEDS,
# 16), whose median the fidelity table takes (compare and the plots use
# the one run sim/ of calibrated.yaml). The assertions (every request ok
# with exact OSL and one chunk per token, ISL = intended + chat template,
# TTFT rises from concurrency 4 to 8, compare files, PNGs and the fidelity
# table present) live in cmd/simbench/e2e_test.go. `simbench validate
# fidelity` writes the fidelity table (fidelity.txt, fidelity.json: per
# workload and field each configuration's error beside the real-vs-real
# spread, and the host drift; reported, not gated) and summary.txt. The
# engine is stopped by PID on exit, also on failure.
#
#   scripts/e2e.sh [SIMBENCH_BINARY]      default bin/simbench (built if missing)
#   E2E_REPLAY=artifacts/e2e-old E2E_ARTIFACTS=artifacts/e2e-new scripts/e2e.sh
#                                         no engine: the real runs of an earlier
#                                         e2e, the fits, sims and table anew
# Knobs (environment): E2E_ARTIFACTS, E2E_REPLAY, E2E_REQUESTS, E2E_ISL,
# E2E_OSL, E2E_CONCURRENCY, E2E_SLO, E2E_SIM_SEEDS, E2E_TRACE_FLAGS,
# ENGINE_PORT, ENGINE_CFLAGS, ENGINE_NUM_THREAD (the runner's ggml threads).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=engine/lib.sh
. scripts/engine/lib.sh

SB="${1:-bin/simbench}"
ART="${E2E_ARTIFACTS:-artifacts/e2e}"
REQUESTS="${E2E_REQUESTS:-48}"
ISL="${E2E_ISL:-128}"
OSL="${E2E_OSL:-64}"
CONCURRENCY="${E2E_CONCURRENCY:-1 2 4 8}"
# The load sweep's SLO, fixed (never derived from the data): on the 2-core
# CPU engine with 4 slots, TTFT is ~50 ms at concurrency 1 and ≤ 250 ms at 4
# (every request has a slot), ~700 ms at 8 (half of them queue for a whole
# request), so the capacity lies between 4 and 8.
SLO="${E2E_SLO:-time_to_first_token:300}"
# Simulator seeds per workload and configuration for the fidelity table,
# which takes their median: one seed is one draw of the order in which a
# burst's simultaneous sends reach the server, and of the step jitter.
SIM_SEEDS="${E2E_SIM_SEEDS:-16}"
TRACE="testdata/e2e/conversation_slice.jsonl"
# Mooncake ISL averages ~12k tokens and OSL ~360: a tenth of that, capped,
# is ~880 prompt and ~38 output tokens per request. The 40 rows span 12 s of
# bursts (10 to 16 requests at one instant); --speedup 0.1 stretches the
# schedule to 120 s, keeping the bursts, so the run takes about two minutes.
read -r -a TRACE_FLAGS <<<"${E2E_TRACE_FLAGS:---scale-lengths 0.1 --max-isl 1536 --max-osl 96 --speedup 0.1}"
UNCAL_CONFIG="testdata/e2e/sim-ollama.yaml"
BASE_CONFIG="testdata/e2e/base-llamacpp.yaml"
SIM_CONFIG="$ART/calibrated.yaml"
FIRST_CONFIG="$ART/calibrated-first.yaml"

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
if [ -n "${E2E_REPLAY:-}" ] && [ "$(realpath -m "$E2E_REPLAY")" = "$(realpath -m "$ART")" ]; then
	engine_log "E2E_REPLAY must name another directory than E2E_ARTIFACTS ($ART)"
	exit 2
fi
rm -rf "$ART"
mkdir -p "$ART"

SWEEP=(--sweep-concurrency "${CONCURRENCY// /,}" --goodput "$SLO" --attainment 0.9
	--request-count "$REQUESTS" --isl "$ISL" --osl "$OSL" --seed 1)
ISL384=(--concurrency 3 --request-count "$((REQUESTS / 2))" --isl 384 --osl 96 --seed 2)
TRACE_WL=(--trace "$TRACE" "${TRACE_FLAGS[@]}")

ENDPOINT=() # the live engine's, set by engine_runs

# plan DIR CONFIG: the calibration plan on the live engine into $ART/DIR,
# its fit to CONFIG, the report to $ART/DIR.txt.
plan() {
	engine_log "calibrate on the live engine (plan runs in $ART/$1)"
	"$SB" calibrate "${ENDPOINT[@]}" --config "$BASE_CONFIG" -o "$2" --artifacts "$ART/$1" | tee "$ART/$1.txt"
}

# Both sides get the same workload flags; run adds the endpoint and no
# grace-period cancellation of requests still streaming.
real() {
	local dir="$1" name="$2"
	shift 2
	mkdir -p "$ART/$dir"
	engine_log "run  $dir/$name: $*"
	"$SB" run "${ENDPOINT[@]}" --benchmark-grace-period 0 --quiet -o "$ART/$dir/$name" "$@" |
		tee "$ART/$dir/$name.txt"
}

# engine_runs: every run on the live engine, in order.
engine_runs() {
	engine_up "$work/engine" "$SB"
	# Ollama's endpoint flags: max_tokens (Ollama ignores
	# max_completion_tokens), server token counts (usage.completion_tokens
	# is exact; the client cannot tokenize).
	ENDPOINT=(--url "$ENGINE_URL" --model tiny --use-legacy-max-tokens --use-server-token-count)
	plan calibration "$FIRST_CONFIG"
	real load-sweep real "${SWEEP[@]}"
	real isl384-c3 real "${ISL384[@]}"
	real trace real "${TRACE_WL[@]}"
	# The same workloads again on the engine: silicon's own run-to-run spread,
	# at the slot count, on the trace (whose simultaneous sends reach the
	# server in a new order every run: its few short-output requests' ITL swings
	# the average by tens of percent) and at concurrency 1. sweep-c1 ran first
	# after the calibration, so its repeat also shows how far the machine's
	# speed drifted over the predictions (up to a third on a shared 2-vCPU VM).
	real sweep-c4 real-repeat --concurrency 4 --request-count "$REQUESTS" --isl "$ISL" --osl "$OSL" --seed 1
	real trace real-repeat "${TRACE_WL[@]}"
	real sweep-c1 real-repeat --concurrency 1 --request-count "$REQUESTS" --isl "$ISL" --osl "$OSL" --seed 1
	plan calibration-after "$ART/calibrated-after.yaml"
	engine_stop
}

# replay SRC: the real runs of an earlier e2e's artifacts instead of the
# engine's (E2E_REPLAY), to score another simulator on the same silicon.
# The plan before the predictions is fitted anew from them, on the base
# that run's `calibrate --url` discovered (its calibrated-first.yaml: the
# same fit byte for byte when the simulator is unchanged).
replay() {
	local src="$1" d
	[ -f "$src/calibrated-first.yaml" ] || { engine_log "E2E_REPLAY: $src holds no e2e artifacts"; exit 1; }
	cp -R "$src/calibration" "$src/calibration-after" "$ART/"
	# Every workload's real runs, whatever engine_runs made; sweep-cN/real
	# are links into load-sweep/real, made again below.
	for d in "$src"/*/real "$src"/*/real-repeat; do
		[ -d "$d" ] && [ ! -L "$d" ] || continue
		d="${d#"$src"/}"
		mkdir -p "$ART/$(dirname "$d")"
		cp -R "$src/$d" "$ART/$d"
	done
	# In the order the plan ran them (their start times): the fit takes the
	# client's gap from the first.
	local runs=()
	while IFS=$'\t' read -r _ d; do
		runs+=(--real "$d")
	done < <(for d in "$ART"/calibration/*/; do
		printf '%s\t%s\n' "$(grep -m1 -o '"start_time": *"[^"]*"' "$d/profile_export_aiperf.json")" "${d%/}"
	done | sort)
	engine_log "replaying the real runs of $src"
	"$SB" calibrate "${runs[@]}" --config "$src/calibrated-first.yaml" -o "$FIRST_CONFIG" | tee "$ART/calibration.txt"
}

if [ -n "${E2E_REPLAY:-}" ]; then
	replay "$E2E_REPLAY"
else
	engine_runs
fi
engine_log "real runs done in $(($(date +%s) - start))s; fitting on both plans, simulating"

plan_runs=()
for d in "$ART"/calibration/*/ "$ART"/calibration-after/*/; do
	plan_runs+=(--real "${d%/}")
done
"$SB" calibrate "${plan_runs[@]}" --config "$FIRST_CONFIG" -o "$SIM_CONFIG" | tee "$ART/calibration-both.txt"

# simulate DIR FLAGS…: each configuration's one run of the workload.
simulate() {
	local dir="$1"
	shift
	"$SB" sim --config "$SIM_CONFIG" --quiet -o "$ART/$dir/sim" "$@" >"$ART/$dir/sim.txt" 2>&1
	"$SB" sim --config "$FIRST_CONFIG" --quiet -o "$ART/$dir/sim-first" "$@" >"$ART/$dir/sim-first.txt" 2>&1
	"$SB" sim --config "$UNCAL_CONFIG" --engine llamacpp --quiet -o "$ART/$dir/sim-uncal" "$@" >"$ART/$dir/sim-uncal.txt"
}

# seeds DIR FLAGS…: each configuration again, once per simulator seed
# (seed, seed+1, …), into DIR/<sim>-seeds/run_NNNN; what sim printed goes
# to DIR/<sim>-seeds.txt (shown when it fails).
seeds() {
	local dir="$1"
	shift
	seed_runs "$dir" sim --config "$SIM_CONFIG" "$@"
	seed_runs "$dir" sim-first --config "$FIRST_CONFIG" "$@"
	seed_runs "$dir" sim-uncal --config "$UNCAL_CONFIG" --engine llamacpp "$@"
}

seed_runs() {
	local dir="$1" sub="$2"
	shift 2
	"$SB" sim --quiet --repeat "$SIM_SEEDS" -o "$ART/$dir/$sub-seeds" "$@" >"$ART/$dir/$sub-seeds.txt" 2>&1 ||
		{ cat "$ART/$dir/$sub-seeds.txt" >&2; return 1; }
}

compare_pair() {
	local dir="$ART/$1"
	"$SB" compare "$dir/real" "$dir/sim" -o "$dir/compare.txt"
	"$SB" compare "$dir/real" "$dir/sim" --format json -o "$dir/compare.json" --plots "$dir/plots" >/dev/null
}

predict() {
	local d="$1"
	shift
	simulate "$d" "$@"
	seeds "$d" "$@"
	compare_pair "$d"
}

# The concurrency sweep as one load sweep per side; each point is also a
# workload of its own (sweep-cN/{real,sim,…} link to the points).
simulate load-sweep "${SWEEP[@]}"
for c in $CONCURRENCY; do
	mkdir -p "$ART/sweep-c$c"
	for side in real sim sim-first sim-uncal; do
		ln -s "../load-sweep/$side/c$c" "$ART/sweep-c$c/$side"
	done
	# A sweep cannot be repeated: each point's seeds run as its own
	# closed loop, the same workload (its digest is checked).
	seeds "sweep-c$c" --concurrency "$c" --request-count "$REQUESTS" --isl "$ISL" --osl "$OSL" --seed 1
	compare_pair "sweep-c$c"
done
compare_pair load-sweep
predict isl384-c3 "${ISL384[@]}"
predict trace "${TRACE_WL[@]}"

engine_log "real and simulated runs done in $(($(date +%s) - start))s; the fidelity table, checking"
"$SB" validate fidelity "$ART"
SIMBENCH_E2E_DIR="$(cd "$ART" && pwd)" go test -count=1 -run '^TestE2E' ./cmd/simbench/ -v 2>&1 |
	tee "$ART/check.txt" | grep -v '^=== RUN'
engine_log "e2e passed in $(($(date +%s) - start))s; artifacts in $ART"

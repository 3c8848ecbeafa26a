#!/usr/bin/env bash
# make demo: the main job on the embedded default, with bundled data only.
#  1. describe and simulate a slice of the Mooncake conversation trace (4 workers, KV router);
#  2. fit the simulator to a bundled real AIPerf run (Qwen3-0.6B, RTX 6000 Ada, concurrency 1),
#     replay that run's workload on the fitted simulator, and compare real vs simulated
#     field for field, with PNG plots;
#  3. predict the same workload at concurrency 2 and 4, and show where the TTFT goes (the
#     simulator's server-side TTFT breakdown, compared stage by stage).
# Everything lands in ./artifacts.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=./bin/simbench
OUT=artifacts
REAL=testdata/aiperf/qwen_concurrency1
rm -rf "$OUT/demo"
mkdir -p "$OUT/demo"

echo "== trace slice"
"$BIN" trace info testdata/traces/conversation_slice.jsonl
"$BIN" sim --trace testdata/traces/conversation_slice.jsonl --workers 4 --router kv --seed 7 \
	-o "$OUT/demo/sim-trace" --quiet
"$BIN" plot "$OUT/demo/sim-trace" -o "$OUT/demo/sim-trace/plots"

echo "== calibrate on the bundled real run"
"$BIN" calibrate --real "$REAL" --config testdata/sim/qwen3-0.6b-rtx-6000-ada.yaml -o "$OUT/demo/sim.yaml"
"$BIN" sim --config "$OUT/demo/sim.yaml" --concurrency 1 --request-count 64 --warmup-request-count 1 \
	--isl 100 --osl 200 --seed 100 -o "$OUT/demo/sim-c1" --quiet

echo "== compare real vs simulated"
status=0
"$BIN" compare "$REAL" "$OUT/demo/sim-c1" --gate --plots "$OUT/demo/plots" \
	--format markdown -o "$OUT/demo/compare.md" || status=$?
"$BIN" compare "$REAL" "$OUT/demo/sim-c1" --format text -o "$OUT/demo/compare.txt"
head -n 40 "$OUT/demo/compare.txt"
if [ "$status" -ne 0 ] && [ "$status" -ne 3 ]; then exit "$status"; fi
[ "$status" -eq 3 ] && echo "(the default gate is breached somewhere: see $OUT/demo/compare.md)"

echo "== predict concurrency 2 and 4"
for c in 2 4; do
	"$BIN" sim --config "$OUT/demo/sim.yaml" --concurrency "$c" --request-count 64 --warmup-request-count 1 \
		--isl 100 --osl 200 --seed 100 -o "$OUT/demo/predict-c$c" --quiet
done

echo "== where the TTFT goes: server-side breakdown, predicted concurrency 2 vs 4"
"$BIN" compare "$OUT/demo/predict-c2" "$OUT/demo/predict-c4" --plots "$OUT/demo/plots-c2-c4" \
	--format text -o "$OUT/demo/compare-c2-c4.txt"
sed -n '/^TTFT breakdown/,/^$/p' "$OUT/demo/compare-c2-c4.txt"
ls "$OUT/demo/plots" "$OUT/demo/plots-c2-c4"
echo "demo artifacts in $OUT/demo/"

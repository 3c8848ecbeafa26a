#!/usr/bin/env bash
# make e2e: the CPU real-engine tier, calibrate → predict (docs/e2e.md).
# Starts Ollama (built from the Go module proxy, cached) serving the
# generated tiny model, runs one pipeline on it,
#
#   simbench validate --pipeline testdata/e2e/pipeline.yaml -o ARTIFACTS --url ENGINE
#
# (the calibration plan, the held-out workloads, three of them again, the plan
# again, the fits, every candidate simulated with its seeds, the comparisons
# and the fidelity table: the file lists every step), stops the engine and
# checks the artifacts (cmd/simbench/e2e_test.go, which only reads them). The
# engine is stopped by PID on exit, also on failure.
#
#   scripts/e2e.sh [SIMBENCH_BINARY]      default bin/simbench (built if missing)
#   E2E_REPLAY=artifacts/e2e-old E2E_ARTIFACTS=artifacts/e2e-new scripts/e2e.sh
#                                         no engine: the real runs of an earlier
#                                         e2e (validate --replay), the fits, sims
#                                         and table anew
# Knobs (environment): E2E_ARTIFACTS, E2E_REPLAY, E2E_PIPELINE (another
# pipeline file), ENGINE_PORT, ENGINE_CFLAGS, ENGINE_NUM_THREAD (the runner's
# ggml threads).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=engine/lib.sh
. scripts/engine/lib.sh

SB="${1:-bin/simbench}"
ART="${E2E_ARTIFACTS:-artifacts/e2e}"
PIPELINE="${E2E_PIPELINE:-testdata/e2e/pipeline.yaml}"

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
if [ -n "${E2E_REPLAY:-}" ]; then
	"$SB" validate --pipeline "$PIPELINE" -o "$ART" --replay "$E2E_REPLAY"
else
	engine_up "$work/engine" "$SB"
	"$SB" validate --pipeline "$PIPELINE" -o "$ART" --url "$ENGINE_URL"
	engine_stop
fi
engine_log "pipeline done in $(($(date +%s) - start))s; checking the artifacts"
SIMBENCH_E2E_DIR="$(cd "$ART" && pwd)" go test -count=1 -run '^TestE2E' ./cmd/simbench/ -v 2>&1 |
	tee "$ART/check.txt" | grep -v '^=== RUN'
engine_log "e2e passed in $(($(date +%s) - start))s; artifacts in $ART"

#!/usr/bin/env bash
# make demo: the main job on the embedded default. It grows with the project;
# see README.md for what it does today.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=./bin/simbench
OUT=artifacts
mkdir -p "$OUT"
"$BIN" trace info testdata/traces/conversation_slice.jsonl
"$BIN" summarize testdata/aiperf/qwen_concurrency1/profile_export.jsonl -o "$OUT/summarize"
echo "demo artifacts in $OUT/"

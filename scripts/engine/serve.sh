#!/usr/bin/env bash
# Starts the CPU real engine by hand: Ollama (built once, cached) serving the
# generated tiny model as "tiny" on 127.0.0.1, until Ctrl-C. Everything it
# starts is stopped by PID on exit.
#   scripts/engine/serve.sh                  # port 11500 or the next free one
#   ENGINE_PORT=11600 ENGINE_MODEL_FLAGS="--layers 8 --hidden 1024 --ff 2816 --heads 16 --kv-heads 4 --vocab 8192" scripts/engine/serve.sh
#   curl -N http://127.0.0.1:11500/v1/chat/completions -d '{"model":"tiny","max_tokens":50,"stream":true,"messages":[{"role":"user","content":"hi"}]}'
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=lib.sh
. scripts/engine/lib.sh
work="$(mktemp -d "${TMPDIR:-/tmp}/simbench-engine.XXXXXX")"
trap 'engine_stop; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
go build -o "$work/simbench" ./cmd/simbench
engine_up "$work" "$work/simbench"
engine_log "serving; Ctrl-C stops it"
wait "$ENGINE_PID"

#!/usr/bin/env bash
# Builds (or finds in the cache) the Ollama binary for the real-engine tier
# and prints its path. Re-running on the same machine is instant.
#   scripts/engine/build.sh            -> /root/.cache/simbench/ollama-v0.17.4-<hash>/ollama
#   ENGINE_CFLAGS=-O3 scripts/engine/build.sh   (force a non-AVX2 build)
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
engine_build

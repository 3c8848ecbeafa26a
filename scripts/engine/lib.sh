# shellcheck shell=bash
# Shared functions for the CPU real-engine tier (Ollama built from the Go
# module proxy). Source it; it defines functions and variables only, and
# starts nothing by itself. Facts behind every choice here are in
# ../shared/reference/real-engine.md.

ENGINE_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OLLAMA_VERSION="${OLLAMA_VERSION:-v0.17.4}"
OLLAMA_PKG="github.com/ollama/ollama@${OLLAMA_VERSION}"
ENGINE_SHIM="$ENGINE_DIR/shim"

engine_log() { printf '[engine] %s\n' "$*" >&2; }

# engine_cflags prints the SIMD C flags: x86-64-v3 (AVX2/FMA/F16C) when the
# CPU has AVX2, plain -O3 otherwise. Without SIMD flags ggml-cpu is compiled
# scalar and prefill is 10-15x slower.
engine_cflags() {
	if [ -n "${ENGINE_CFLAGS:-}" ]; then
		printf '%s\n' "$ENGINE_CFLAGS"
	elif grep -qw avx2 /proc/cpuinfo 2>/dev/null; then
		printf '%s\n' "-O3 -march=x86-64-v3"
	else
		printf '%s\n' "-O3"
	fi
}

# engine_flags_hash identifies one build configuration: engine version, C
# flags, the stub header and the Go toolchain. A different hash rebuilds.
engine_flags_hash() {
	{
		printf '%s\n' "$OLLAMA_PKG" "$(engine_cflags)" "$(go env GOVERSION GOARCH)"
		cat "$ENGINE_SHIM/miniaudio/miniaudio.h"
	} | sha256sum | cut -c1-12
}

engine_cache_dir() {
	printf '%s/simbench/ollama-%s-%s\n' "${XDG_CACHE_HOME:-$HOME/.cache}" \
		"$OLLAMA_VERSION" "$(engine_flags_hash)"
}

engine_bin() { printf '%s/ollama\n' "$(engine_cache_dir)"; }

# engine_deps installs the Debian headers that Go module zips leave out
# (llama.cpp's vendor/ dir), only when they are missing.
engine_deps() {
	if [ -f /usr/include/nlohmann/json.hpp ] && [ -f /usr/include/stb/stb_image.h ]; then
		return 0
	fi
	local sudo=""
	if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
	engine_log "installing nlohmann-json3-dev libstb-dev"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq nlohmann-json3-dev libstb-dev >/dev/null
}

# engine_build prints the path of a cached ollama binary, building it first
# when this configuration was never built on this machine. The build runs
# under `nice -n 19` in a temp GOBIN and is moved into the cache only once
# complete, so an interrupted build never leaves a broken binary behind.
engine_build() {
	local bin dir tmp cflags start
	bin="$(engine_bin)"
	if [ -x "$bin" ]; then
		engine_log "cached: $bin"
		printf '%s\n' "$bin"
		return 0
	fi
	engine_deps
	dir="$(dirname "$bin")"
	mkdir -p "$dir"
	tmp="$(mktemp -d "$dir.tmp.XXXXXX")"
	cflags="$(engine_cflags)"
	start=$(date +%s)
	engine_log "building $OLLAMA_PKG with CGO_CFLAGS='$cflags' (about 5 minutes on 2 cores)"
	if ! (cd "$tmp" && CGO_ENABLED=1 CGO_CFLAGS="$cflags" CGO_CXXFLAGS="$cflags" \
		CGO_CPPFLAGS="-I$ENGINE_SHIM" GOFLAGS=-mod=mod GOBIN="$tmp" \
		nice -n 19 go install "$OLLAMA_PKG" >&2); then
		rm -rf "$tmp"
		engine_log "build failed"
		return 1
	fi
	mv "$tmp/ollama" "$bin"
	rm -rf "$tmp"
	engine_log "built $bin in $(($(date +%s) - start))s"
	printf '%s\n' "$bin"
}

# engine_free_port prints a TCP port on 127.0.0.1 that nothing listens on.
engine_free_port() {
	local port
	for port in $(seq "${1:-11500}" "$((${1:-11500} + 200))"); do
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			printf '%s\n' "$port"
			return 0
		fi
	done
	return 1
}

# engine_start BIN WORKDIR PORT starts `ollama serve` in the background with
# its own HOME and model store under WORKDIR, records its PID in
# ENGINE_PID and WORKDIR/serve.pid, and waits until it answers.
engine_start() {
	local bin="$1" work="$2" port="$3" i
	mkdir -p "$work/home" "$work/models"
	HOME="$work/home" OLLAMA_HOST="127.0.0.1:$port" OLLAMA_MODELS="$work/models" \
		OLLAMA_NUM_PARALLEL="${ENGINE_SLOTS:-4}" OLLAMA_KEEP_ALIVE=-1 OLLAMA_NO_CLOUD=1 \
		"$bin" serve >"$work/serve.log" 2>&1 &
	ENGINE_PID=$!
	printf '%s\n' "$ENGINE_PID" >"$work/serve.pid"
	engine_log "ollama serve pid $ENGINE_PID on 127.0.0.1:$port (log $work/serve.log)"
	for i in $(seq 1 150); do
		if curl -fsS "http://127.0.0.1:$port/api/version" >/dev/null 2>&1; then
			return 0
		fi
		if ! kill -0 "$ENGINE_PID" 2>/dev/null; then
			engine_log "ollama serve exited early:"; tail -20 "$work/serve.log" >&2
			return 1
		fi
		sleep 0.2
	done
	engine_log "ollama serve not healthy after 30s"
	return 1
}

# engine_stop stops the server started by engine_start, by PID only. SIGTERM
# also ends its runner child; SIGKILL after 10 s if it is still there.
engine_stop() {
	local pid="${ENGINE_PID:-}" i
	[ -n "$pid" ] || return 0
	ENGINE_PID=""
	kill -0 "$pid" 2>/dev/null || return 0
	kill -TERM "$pid" 2>/dev/null || true
	for i in $(seq 1 50); do
		kill -0 "$pid" 2>/dev/null || { engine_log "stopped pid $pid"; return 0; }
		sleep 0.2
	done
	engine_log "pid $pid ignored SIGTERM; killing"
	kill -KILL "$pid" 2>/dev/null || true
}

# engine_create BIN WORKDIR PORT GGUF NAME registers GGUF as model NAME with
# the chat template described in real-engine.md. ENGINE_NUM_THREAD is the
# runner's ggml threads: 1 unless set; set it empty for Ollama's default
# (the physical cores). With 2 threads on a 2-vCPU VM, 9-35 % of the decode
# steps wait 15 ms inside llama_decode for the second thread's vCPU, at a
# rate that drifts with the host from one quarter-hour to the next; with 1
# almost none do, and a one-sequence decode is faster (1.8 ms against 3-4
# on average), while a prefill is slower.
engine_create() {
	local bin="$1" work="$2" port="$3" gguf="$4" name="$5" threads="${ENGINE_NUM_THREAD-1}"
	cat >"$work/Modelfile" <<MODELFILE
FROM $gguf
TEMPLATE """{{- range .Messages }}<|{{ .Role }}|>
{{ .Content }}
{{ end }}<|assistant|>
"""
PARAMETER num_ctx ${ENGINE_NUM_CTX:-4096}
${threads:+PARAMETER num_thread $threads}
MODELFILE
	if ! HOME="$work/home" OLLAMA_HOST="127.0.0.1:$port" "$bin" create "$name" -f "$work/Modelfile" \
		>"$work/create.log" 2>&1; then
		engine_log "ollama create failed:"; tail -5 "$work/create.log" >&2
		return 1
	fi
}

# engine_warmup PORT NAME loads the runner and fills every slot once.
engine_warmup() {
	local port="$1" name="$2" i pids=()
	for i in $(seq 1 "${ENGINE_SLOTS:-4}"); do
		curl -fsS "http://127.0.0.1:$port/v1/chat/completions" -H 'Content-Type: application/json' \
			-d "{\"model\":\"$name\",\"max_tokens\":8,\"messages\":[{\"role\":\"user\",\"content\":\"warm up $i\"}]}" \
			>/dev/null &
		pids+=($!)
	done
	for i in "${pids[@]}"; do # not a bare `wait`: the server is a child too
		wait "$i"
	done
}

# engine_up WORKDIR SIMBENCH_BIN: build (or reuse) the engine, write the tiny
# model, start the server, register the model as "tiny" and warm it up.
# Sets ENGINE_PID, ENGINE_PORT and ENGINE_URL (the OpenAI base URL). The
# caller must `trap engine_stop EXIT` BEFORE calling it.
engine_up() {
	local work="$1" simbench="$2" bin
	bin="$(engine_build)"
	mkdir -p "$work"
	"$simbench" tiny-model -o "$work/tiny.gguf" --seed "${ENGINE_MODEL_SEED:-1}" ${ENGINE_MODEL_FLAGS:-} >&2
	ENGINE_PORT="${ENGINE_PORT:-$(engine_free_port 11500)}"
	engine_start "$bin" "$work" "$ENGINE_PORT"
	engine_create "$bin" "$work" "$ENGINE_PORT" "$work/tiny.gguf" tiny
	engine_warmup "$ENGINE_PORT" tiny
	ENGINE_URL="http://127.0.0.1:$ENGINE_PORT"
	engine_log "ready: $ENGINE_URL/v1 model tiny ($(grep -o 'CPU\.[0-9]\.[A-Z0-9_]*=1' "$work/serve.log" | sort -u | tr '\n' ' '))"
}

package sim

import (
	"cmp"
	"strings"

	"github.com/simbench/simbench/sim/timing"
)

// vLLM's OpenAI-compatible server schedules by default (EngineArgs' batch
// defaults, pinned by vLLM's test_defaults_with_usage_context): on a
// device of 70 GiB or more that is not an A100 (H100, H200, B200, GB200,
// RTX PRO 6000) 8192 tokens and 1024 sequences a step, on any other (A100
// 40 and 80 GB, L40S, RTX 4090) 2048 and 256. A CPU goes by its memory
// alike.
const (
	vllmLargeDeviceGiB             = 70
	vllmLargeTokens, vllmLargeSeqs = 8192, 1024
	vllmSmallTokens, vllmSmallSeqs = 2048, 256
	gibBytes                       = 1 << 30
)

// sglangMaxRunning is SGLang's max_running_requests when unset: the size
// of its request pool, which it sets between 2048 and 4096 by its KV pool
// over the context length; the lower bound (a worker's KV admission binds
// long before it in every workload the simulator runs).
const sglangMaxRunning = 2048

// ResolveEngine is c's engine with the engine's own defaults in place of
// the zeros that ask for them: max_num_seqs and max_num_batched_tokens
// (vLLM's server defaults for the device, SGLang's request pool) and
// SGLang's chunked_prefill_size for the device.
func (c Config) ResolveEngine() (EngineConfig, error) {
	e := c.Engine
	switch e.Type {
	case "vllm":
		if e.MaxNumSeqs > 0 && e.MaxNumBatchedTokens > 0 {
			return e, nil
		}
		tokens, seqs, err := vllmBatchDefaults(c.Hardware)
		if err != nil {
			return e, err
		}
		e.MaxNumSeqs, e.MaxNumBatchedTokens = cmp.Or(e.MaxNumSeqs, seqs), cmp.Or(e.MaxNumBatchedTokens, tokens)
	case "sglang":
		e.MaxNumSeqs = cmp.Or(e.MaxNumSeqs, sglangMaxRunning)
		if e.SGLang.ChunkedPrefillSize == 0 {
			n, err := sglangChunk(c.Hardware)
			if err != nil {
				return e, err
			}
			e.SGLang.ChunkedPrefillSize = n
		}
	}
	return e, nil
}

// vllmBatchDefaults are vLLM's server defaults of max_num_batched_tokens
// and max_num_seqs on h's device (see vllmLargeDeviceGiB).
func vllmBatchDefaults(h HardwareConfig) (tokens, seqs int, err error) {
	d, err := h.ResolveDevice()
	if err != nil {
		return 0, 0, err
	}
	if d.MemGB*1e9 >= vllmLargeDeviceGiB*gibBytes && !isA100(h) {
		return vllmLargeTokens, vllmLargeSeqs, nil
	}
	return vllmSmallTokens, vllmSmallSeqs, nil
}

// isA100 reports whether h names an A100 preset (or alias); a custom GPU
// is judged by its memory alone.
func isA100(h HardwareConfig) bool {
	if h.CPU != "" {
		return false
	}
	return strings.HasPrefix(timing.CanonicalGPU(h.GPU), "a100")
}

package sim

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/results"
)

// TestResolveEngineDefaults: zeros take the engine's own defaults for the
// device (vLLM's server batch defaults: the A100 is held to the smaller
// tier whatever its memory), and set values stay.
func TestResolveEngineDefaults(t *testing.T) {
	custom96 := &GPUSpec{PeakTFLOPS: 500, MemBWGBs: 1792, MemGB: 96, LinkBWGBs: 64}
	for _, tc := range []struct {
		name                string
		engine              string
		gpu                 string
		custom              *GPUSpec
		seqs, tokens        int // configured
		wantSeqs, wantToken int
		wantChunk           int
	}{
		{name: "vllm h100", engine: "vllm", gpu: "h100", wantSeqs: 1024, wantToken: 8192},
		{name: "vllm gb200", engine: "vllm", gpu: "gb200", wantSeqs: 1024, wantToken: 8192},
		{name: "vllm a100 80 GB", engine: "vllm", gpu: "a100", wantSeqs: 256, wantToken: 2048},
		{name: "vllm a100 alias", engine: "vllm", gpu: "A100-80GB", wantSeqs: 256, wantToken: 2048},
		{name: "vllm a100 40 GB", engine: "vllm", gpu: "a100-40gb", wantSeqs: 256, wantToken: 2048},
		{name: "vllm l40s", engine: "vllm", gpu: "l40s", wantSeqs: 256, wantToken: 2048},
		{name: "vllm custom 96 GB", engine: "vllm", gpu: "custom", custom: custom96, wantSeqs: 1024, wantToken: 8192},
		{name: "vllm set values stay", engine: "vllm", gpu: "h100", seqs: 128, tokens: 1024, wantSeqs: 128, wantToken: 1024},
		{name: "vllm one set", engine: "vllm", gpu: "l40s", seqs: 64, wantSeqs: 64, wantToken: 2048},
		{name: "sglang gb200", engine: "sglang", gpu: "gb200", wantSeqs: 2048, wantChunk: 16384},
		{name: "sglang h100", engine: "sglang", gpu: "h100", seqs: 32, wantSeqs: 32, wantChunk: 8192},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			c.Engine.Type, c.Hardware.GPU, c.Hardware.CustomGPU = tc.engine, tc.gpu, tc.custom
			c.Engine.MaxNumSeqs, c.Engine.MaxNumBatchedTokens = tc.seqs, tc.tokens
			e, err := c.ResolveEngine()
			require.NoError(t, err)
			assert.Equal(t, tc.wantSeqs, e.MaxNumSeqs, "max_num_seqs")
			if tc.engine == "vllm" {
				assert.Equal(t, tc.wantToken, e.MaxNumBatchedTokens, "max_num_batched_tokens")
			}
			assert.Equal(t, tc.wantChunk, e.SGLang.ChunkedPrefillSize, "chunked_prefill_size")
		})
	}
}

// TestDefaultStepBudgetFollowsTheGPU: without chunked prefill a vLLM
// prompt must fit one step, so the default budget decides which prompts
// an engine takes: 3,000 tokens fit an H100's 8192 but not an L40S's 2048.
func TestDefaultStepBudgetFollowsTheGPU(t *testing.T) {
	for _, tc := range []struct {
		gpu      string
		rejected int
	}{{"h100", 0}, {"l40s", 1}} {
		t.Run(tc.gpu, func(t *testing.T) {
			cfg := constCfg("vllm", 1, 0)
			cfg.Hardware.GPU = tc.gpu
			cfg.Engine.EnableChunkedPrefill = false
			sum, err := Run(context.Background(), cfg, workload(req(0, 3000, 4), req(1, 1500, 4)), func(*results.Record) error { return nil })
			require.NoError(t, err)
			assert.Equal(t, tc.rejected, sum.Rejected)
			if tc.rejected > 0 {
				require.Len(t, sum.RejectReasons, 1)
				assert.Contains(t, sum.RejectReasons[0].Reason, "max_num_batched_tokens 2048")
			}
		})
	}
}

func TestResolveEngineUnknownGPU(t *testing.T) {
	c := DefaultConfig()
	c.Hardware.GPU = "no-such-gpu"
	_, err := c.ResolveEngine()
	assert.ErrorContains(t, err, "hardware.gpu")
}

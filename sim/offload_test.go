package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/traces"
)

func TestCPUTierLRU(t *testing.T) {
	c := newCPUTier(3, 1000, 1)
	for _, h := range []uint64{1, 2, 3} {
		c.store(h)
	}
	c.store(1) // touched: 2 is now the least recent
	c.store(4)
	assert.Equal(t, 0, c.run([]uint64{2, 3}))
	assert.Equal(t, 3, c.run([]uint64{3, 1, 4, 2}))
	assert.Equal(t, int64(4), c.stored)
	// 1000 bytes a token at 1 GB/s: 1 µs a token.
	assert.Equal(t, int64(2*16*1000), c.loadNs(2, 16))
}

// offloadCase: one worker whose GPU cache holds 24 blocks of 16 tokens.
// Request 0's 20-block prompt is computed, request 1's distinct prompt
// then evicts most of it (tail first), and request 2 repeats request 0's
// prompt.
func offloadCase(offload *KVOffloadConfig) (Config, *traces.Workload) {
	cfg := constCfg("vllm", 1, 0.1)
	cfg.Engine.EnablePrefixCaching = true
	cfg.Engine.NumGPUBlocks = 24
	cfg.Engine.KVOffload = offload
	ids := func(from int64) []int64 {
		out := make([]int64, 20)
		for i := range out {
			out[i] = from + int64(i)
		}
		return out
	}
	a, b, c := req(0, 320, 2), req(100, 320, 2), req(200, 320, 2)
	a.HashIDs, b.HashIDs, c.HashIDs = ids(1), ids(101), ids(1)
	return cfg, workload(a, b, c)
}

func TestKVOffloadLoadsEvictedPrefix(t *testing.T) {
	cfg, wl := offloadCase(nil)
	plain, sum := runAll(t, cfg, wl)
	// Without a CPU tier the repeat finds the three head blocks the GPU
	// cache kept.
	assert.Equal(t, 3*16, plain[2].Sim.CachedTokens)
	assert.Zero(t, sum.Workers[0].OffloadLoadedBlocks)

	cfg, wl = offloadCase(&KVOffloadConfig{CPUBlocks: 64})
	recs, sum := runAll(t, cfg, wl)
	// With one, the rest of the prompt but its last token's block comes
	// back from host memory: blocks 4 to 19.
	assert.Equal(t, 19*16, recs[2].Sim.CachedTokens)
	assert.Equal(t, int64(16), sum.Workers[0].OffloadLoadedBlocks)
	assert.Equal(t, int64(40), sum.Workers[0].OffloadStoredBlocks) // both distinct prompts' full blocks
	assert.Less(t, ttftNs(recs[2]), ttftNs(plain[2]))
	assert.Equal(t, ttftNs(plain[0]), ttftNs(recs[0]), "a request with nothing offloaded is untouched")
}

// The load takes one rank's share of the blocks' KV over the link: the
// repeat's TTFT at 1 GB/s exceeds its TTFT at 1000 GB/s by the difference
// of the two loads. Llama-3.1-8B in bf16: 2·32 layers·8 KV heads·128·2
// bytes = 131072 bytes a token; 16 blocks of 16 tokens.
func TestKVOffloadLoadTime(t *testing.T) {
	ttft := func(gbs float64, tp int) int64 {
		cfg, wl := offloadCase(&KVOffloadConfig{CPUBlocks: 64, BandwidthGBs: gbs})
		cfg.Hardware.TensorParallel = tp
		recs, _ := runAll(t, cfg, wl)
		return ttftNs(recs[2])
	}
	bytes := 256.0 * 131072
	load := func(gbs float64) float64 { return bytes / gbs } // ns
	assert.InDelta(t, load(1)-load(1000), float64(ttft(1, 1)-ttft(1000, 1)), 2)
	// Two ranks each load half the KV heads over their own links.
	assert.InDelta(t, (load(1)-load(1000))/2, float64(ttft(1, 2)-ttft(1000, 2)), 2)
}

func TestKVOffloadValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"sglang", func(c *Config) { c.Engine.Type = "sglang" }, "engine.kv_offload: CPU offloading is vLLM's"},
		{"no prefix caching", func(c *Config) { c.Engine.EnablePrefixCaching = false }, "set engine.enable_prefix_caching"},
		{"no size", func(c *Config) { c.Engine.KVOffload.CPUBlocks = 0 }, "engine.kv_offload: give the CPU tier's size as one of cpu_blocks and size_gib"},
		{"two sizes", func(c *Config) { c.Engine.KVOffload.SizeGiB = 8 }, "engine.kv_offload: give the CPU tier's size as one of cpu_blocks and size_gib"},
		{"negative blocks", func(c *Config) { c.Engine.KVOffload.CPUBlocks = -1 }, "engine.kv_offload.cpu_blocks"},
		{"no block in size", func(c *Config) { c.Engine.KVOffload = &KVOffloadConfig{SizeGiB: 1e-6} }, "engine.kv_offload.size_gib: 1e-06 GiB holds no KV block"},
		{"negative bandwidth", func(c *Config) { c.Engine.KVOffload.BandwidthGBs = -1 }, "engine.kv_offload.bandwidth_gbs"},
		{"custom GPU without a host link", func(c *Config) {
			c.Hardware.GPU = "custom"
			c.Hardware.CustomGPU = &GPUSpec{PeakTFLOPS: 100, MemBWGBs: 1000, MemGB: 80, LinkBWGBs: 100}
		}, "engine.kv_offload.bandwidth_gbs: hardware \"custom\" has no host link bandwidth"},
		{"disaggregated", func(c *Config) {
			c.Disaggregation = DefaultDisaggregation()
			c.Disaggregation.PrefillWorkers, c.Disaggregation.DecodeWorkers, c.Workers = 1, 1, 2
		}, "engine.kv_offload: CPU offloading is modelled on aggregated workers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Engine.KVOffload = &KVOffloadConfig{CPUBlocks: 100}
			tc.edit(&cfg)
			err := cfg.Validate()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	cfg := DefaultConfig()
	cfg.Engine.KVOffload = &KVOffloadConfig{CPUBlocks: 100}
	require.NoError(t, cfg.Validate(), "h100's host link is the default bandwidth")
}

func TestKVOffloadFromYAML(t *testing.T) {
	cfg, err := ParseConfig([]byte("engine:\n  kv_offload:\n    cpu_blocks: 6553\n"))
	require.NoError(t, err)
	require.NotNil(t, cfg.Engine.KVOffload)
	assert.Equal(t, KVOffloadConfig{CPUBlocks: 6553}, *cfg.Engine.KVOffload)
	_, err = ParseConfig([]byte("engine:\n  kv_offload:\n    cpu_bytes: 1\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "engine.kv_offload.cpu_bytes")
	def := DefaultConfig()
	assert.Nil(t, def.Engine.KVOffload, "off unless asked for")
}

// sim's text report and sim_summary.json count the tier's blocks; without
// a tier neither mentions it.
func TestKVOffloadReported(t *testing.T) {
	for _, on := range []bool{true, false} {
		var off *KVOffloadConfig
		if on {
			off = &KVOffloadConfig{CPUBlocks: 64}
		}
		cfg, wl := offloadCase(off)
		_, text, b := writeRunReport(t, cfg, wl)
		if on {
			assert.Contains(t, text, "CPU KV offload (64 blocks a worker): 40 prompt blocks stored, 16 loaded back instead of computed")
			assert.Contains(t, string(b), `"kv_offload_loaded_blocks": 16`)
		} else {
			assert.NotContains(t, text, "offload")
			assert.NotContains(t, string(b), "kv_offload")
		}
	}
}

// size_gib is vLLM's --kv-offloading-size: GiB summed over the ranks.
// Llama-3.1-8B in bf16 keeps 131072 bytes of KV a token: a block of 16
// tokens is 2 MiB, so 1 GiB is 512 blocks, whatever the parallelism.
func TestKVOffloadSizeGiB(t *testing.T) {
	for _, tp := range []int{1, 2} {
		cfg := DefaultConfig()
		cfg.Engine.BlockSize = 16
		cfg.Hardware.TensorParallel = tp
		cfg.Engine.KVOffload = &KVOffloadConfig{SizeGiB: 1}
		require.NoError(t, cfg.Validate())
		n, err := cfg.offloadBlocks()
		require.NoError(t, err)
		assert.Equal(t, 512, n, "tp %d", tp)
	}
}

// A preempted request's prompt comes back from the CPU tier when the
// scheduler returns to it: two requests outgrow a 30-block cache, the
// newer one is preempted, and the older one's growth evicts the tail of
// its prompt before it is readmitted.
func TestKVOffloadServesPreemptedRequests(t *testing.T) {
	run := func(offload *KVOffloadConfig) *results.Record {
		cfg := constCfg("vllm", 1, 0.1)
		cfg.Engine.EnablePrefixCaching = true
		cfg.Engine.NumGPUBlocks = 30
		cfg.Engine.KVOffload = offload
		a, b := req(0, 160, 200), req(1, 160, 200)
		a.HashIDs, b.HashIDs = []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, []int64{11, 12, 13, 14, 15, 16, 17, 18, 19, 20}
		recs, _ := runAll(t, cfg, workload(a, b))
		require.Positive(t, recs[1].Sim.Preemptions)
		return recs[1]
	}
	plain, tiered := run(nil), run(&KVOffloadConfig{CPUBlocks: 64})
	assert.Less(t, plain.Sim.CachedTokens, 160, "the GPU cache lost part of its prompt")
	assert.Equal(t, 160, tiered.Sim.CachedTokens, "the whole prompt came back")
	assert.Less(t, tiered.EndNs, plain.EndNs)
}

// A worker's loads run one after another (the connector's one load
// stream): two evicted prompts asked for at once come back 19 blocks
// each, the second's load after the first's, so its first token is one
// load later. A 60-block prompt evicts both from a 60-block cache first.
func TestKVOffloadLoadsQueue(t *testing.T) {
	cfg := constCfg("vllm", 1, 0.1)
	cfg.Engine.EnablePrefixCaching = true
	cfg.Engine.NumGPUBlocks = 60
	cfg.Engine.KVOffload = &KVOffloadConfig{CPUBlocks: 128, BandwidthGBs: 1}
	ids := func(from int64, n int) []int64 {
		out := make([]int64, n)
		for i := range out {
			out[i] = from + int64(i)
		}
		return out
	}
	a, b, c := req(0, 320, 2), req(100, 320, 2), req(200, 944, 2)
	e, f := req(300, 320, 2), req(300, 320, 2)
	a.HashIDs, b.HashIDs, c.HashIDs = ids(1, 20), ids(101, 20), ids(201, 59)
	e.HashIDs, f.HashIDs = a.HashIDs, b.HashIDs
	recs, sum := runAll(t, cfg, workload(a, b, c, e, f))
	require.Equal(t, 19*16, recs[3].Sim.CachedTokens)
	require.Equal(t, 19*16, recs[4].Sim.CachedTokens)
	assert.Equal(t, int64(38), sum.Workers[0].OffloadLoadedBlocks)
	load := 19 * 16 * 131072.0 // ns at 1 GB/s: Llama-3.1-8B bf16, 131072 bytes a token
	assert.InDelta(t, load, float64(recs[4].Chunks[0].AtNs-recs[3].Chunks[0].AtNs), 2)
}

package sim

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseConfigOverDefaults(t *testing.T) {
	cfg, err := ParseConfig([]byte("workers: 4\nengine:\n  type: sglang\n  block_size: 32\nrouter:\n  policy: kv\n  temperature: 0.5\n"))
	require.NoError(t, err)
	require.NoError(t, cfg.Validate())
	assert.Equal(t, 4, cfg.Workers)
	assert.Equal(t, "sglang", cfg.Engine.Type)
	assert.Equal(t, 32, cfg.Engine.BlockSize)
	assert.Equal(t, 0.7, cfg.Engine.SGLang.NewTokenRatio) // default kept
	assert.Equal(t, 0.5, cfg.Router.Temperature)

	empty, err := ParseConfig(nil)
	require.NoError(t, err)
	assert.Equal(t, DefaultConfig(), empty)
}

func TestConfigYAMLRoundTrip(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Hardware.CustomGPU = &GPUSpec{PeakTFLOPS: 1, MemBWGBs: 2, MemGB: 3, LinkBWGBs: 4}
	b, err := cfg.YAML()
	require.NoError(t, err)
	back, err := ParseConfig(b)
	require.NoError(t, err)
	assert.Equal(t, cfg, back)
}

func TestConfigUnknownKeys(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"wrokers: 2\n", `line 1: unknown key "wrokers"`},
		{"engine:\n  blok_size: 16\n", `line 2: unknown key "engine.blok_size" (known under engine: async_scheduling, block_size,`},
		{"timing:\n  linear:\n    a: 1\n", `unknown key "timing.linear.a"`},
		{"hardware:\n  custom_gpu:\n    tflops: 1\n", `unknown key "hardware.custom_gpu.tflops"`},
		{"calibration:\n  parameters:\n    - name: jitter\n      valu: 1\n", `line 4: unknown key "calibration.parameters[0].valu"`}, // a list of sections
	} {
		_, err := ParseConfig([]byte(tc.yaml))
		require.Error(t, err, tc.yaml)
		assert.Contains(t, err.Error(), tc.want)
	}
	_, err := ParseConfig([]byte("workers: many\n"))
	assert.EqualError(t, err, "line 1: workers: want an integer, got many")
}

// TestConfigRefusesFloatsInIntegerKeys: the YAML decoder truncated them
// (workers: 2.5 ran 2 workers, block_size: 63.9 ran 63).
func TestConfigRefusesFloatsInIntegerKeys(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"workers: 2.5\n", "line 1: workers: want an integer, got 2.5"},
		{"seed: 1\nengine:\n  block_size: 63.9\n", "line 3: engine.block_size: want an integer, got 63.9"},
		{"engine:\n  llamacpp:\n    n_batch: 1e3\n", "line 3: engine.llamacpp.n_batch: want an integer, got 1e3"},
		{"hardware:\n  tensor_parallel: true\n", "line 2: hardware.tensor_parallel: want an integer, got true"},
	} {
		_, err := ParseConfig([]byte(tc.yaml))
		assert.EqualError(t, err, tc.want, tc.yaml)
	}
	cfg, err := ParseConfig([]byte("workers: 3\nengine:\n  block_size: 0x10\n  max_model_len: null\n"))
	require.NoError(t, err)
	assert.Equal(t, 3, cfg.Workers)
	assert.Equal(t, 16, cfg.Engine.BlockSize)
}

// TestConfigBoundsSizes: sizes no deployment reaches are refused before
// they exhaust memory (workers: 100000000 ran to 3.9 GB).
func TestConfigBoundsSizes(t *testing.T) {
	for _, tc := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.Workers = 100000000 }, "workers: must be in [1, 4096], got 100000000"},
		{func(c *Config) { c.Engine.BlockSize = 1 << 20 }, "engine.block_size: must be in [1, 4096], got 1048576"},
		{func(c *Config) { c.Engine.MaxNumSeqs = 1 << 30 }, "engine.max_num_seqs: must be in [0, 65536]"},
		{func(c *Config) { c.Engine.MaxNumBatchedTokens = 1 << 30 }, "engine.max_num_batched_tokens: must be in [0, 2097152]"},
		{func(c *Config) { c.Engine.MaxModelLen = 1 << 30 }, "engine.max_model_len: must be in [0, 16777216]"},
		{func(c *Config) { c.Engine.SGLang.ChunkedPrefillSize = 1 << 30 }, "engine.sglang.chunked_prefill_size: must be in [0, 2097152]"},
		{func(c *Config) { c.Engine.LlamaCpp.Parallel = 1 << 20 }, "engine.llamacpp.parallel: must be in [1, 65536]"},
		{func(c *Config) { c.Engine.LlamaCpp.CtxSize = 1 << 30 }, "engine.llamacpp.ctx_size: must be in [0, 16777216]"},
		{func(c *Config) { c.Engine.LlamaCpp.NBatch = 1 << 30 }, "engine.llamacpp.n_batch: must be in [1, 2097152]"},
		{func(c *Config) { c.Hardware.TensorParallel = 1 << 20 }, "hardware.tensor_parallel: must be in [1, 1024]"},
		{func(c *Config) { c.Workers = 4096; c.Engine.NumGPUBlocks = 1 << 20 }, "workers: 4096 workers × 1048576 KV blocks need 64.0 GiB of KV index up front, more than 4 GiB"},
	} {
		cfg := DefaultConfig()
		tc.edit(&cfg)
		assert.ErrorContains(t, cfg.Validate(), tc.want)
	}
	cfg := DefaultConfig()
	cfg.Workers = 4096
	assert.NoError(t, cfg.Validate(), "4096 workers of the default engine fit")
}

func TestConfigValidateNamesKey(t *testing.T) {
	for _, tc := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.Workers = 0 }, "workers: must be in [1, 4096], got 0"},
		{func(c *Config) { c.Engine.Type = "trtllm" }, `engine.type: must be one of vllm, sglang, llamacpp, got "trtllm"`},
		{func(c *Config) { c.Engine.BlockSize = -1 }, "engine.block_size: must be in [1, 4096], got -1"},
		{func(c *Config) { c.Engine.GPUMemoryUtilization = 1.5 }, "engine.gpu_memory_utilization: must be in [0.01, 1]"},
		{func(c *Config) { c.Engine.Preemption = "swap" }, "engine.preemption"},
		{func(c *Config) { c.Engine.NumGPUBlocks = maxKVBlocks + 1 }, "engine.num_gpu_blocks: at most"},
		{func(c *Config) { c.Engine.LlamaCpp.CtxSize = 3 }, "engine.llamacpp.ctx_size"},
		{func(c *Config) { c.Router.Policy = "p2c" }, "router.policy"},
		{func(c *Config) { c.Router.Temperature = -1 }, "router.temperature"},
		{func(c *Config) { c.Timing.Model = "aic" }, "timing.model"},
		{func(c *Config) { c.Timing.Speedup = 0 }, "timing.speedup"},
		{func(c *Config) { c.Timing.StallMs = 20 }, "timing.stall_ms and timing.stalls_per_step: set both or neither, got 20 and 0"},
		{func(c *Config) { c.Timing.StallMs, c.Timing.StallsPerStep = 20, 11 }, "timing.stalls_per_step: must be in [0, 10], got 11"},
		{func(c *Config) { c.Timing.StallCV = 0.5 }, "timing.stall_cv: needs timing.stall_ms, got 0.5 without it"},
		{func(c *Config) { c.Timing.DriftCV = 0.05 }, "timing.drift_cv and timing.drift_period_ms: set both or neither, got 0.05 and 0"},
		{func(c *Config) { c.Timing.DriftCV, c.Timing.DriftPeriodMs = 1.5, 100 }, "timing.drift_cv: must be in [0, 1], got 1.5"},
		{func(c *Config) { c.Engine.Type, c.Engine.AsyncScheduling = "llamacpp", ptr(true) }, "engine.async_scheduling: vllm and sglang plan a step ahead"},
		{func(c *Config) { c.Timing.Model = "poly"; c.Timing.Poly.Prefill = []float64{1} }, "timing.poly.prefill: want 3 coefficients"},
		{func(c *Config) { c.Timing.Model = "poly"; c.Timing.Poly.Prefill = []float64{-100, 0, 0} },
			"timing.poly.prefill: a prefill of 1 tokens takes -100 ms; step times must be positive for 1..2097152 tokens"},
		{func(c *Config) { c.Timing.Model = "poly"; c.Timing.Poly.Prefill = []float64{10, 0.01, -1e-6} }, "timing.poly.prefill: a prefill of 2097152 tokens takes"},
		{func(c *Config) { c.Timing.Model = "poly"; c.Timing.Poly.Prefill = []float64{0, 0, 0} }, "timing.poly.prefill: a prefill of 1 tokens takes 0 ms"},
		{func(c *Config) {
			c.Timing.Model = "poly"
			c.Timing.Poly.Decode, c.Timing.Poly.DecodeFloorMs = []float64{5, -10, 0}, 0
		},
			"timing.poly.decode: a decode step at KV utilisation 1 takes -5 ms"},
		{func(c *Config) {
			c.Timing.Model = "poly"
			c.Timing.Poly.Decode, c.Timing.Poly.DecodeFloorMs = []float64{1, -4, 4}, 0
		},
			"timing.poly.decode: a decode step at KV utilisation 0.5 takes 0 ms"},
		{func(c *Config) { c.Timing.Model = "linear" }, "timing.linear: every coefficient is 0"},
		{func(c *Config) { c.Timing.Model = "linear"; c.Timing.Linear.BaseMs = -1 }, "timing.linear.base_ms"},
		{func(c *Config) { c.Timing.Model = "table" }, "timing.table.file: required"},
		{func(c *Config) { c.Timing.Model = "roofline"; c.Timing.Roofline.Efficiency = 2 }, "timing.roofline.efficiency"},
		{func(c *Config) { c.Hardware.GPU = "h900" }, `hardware.gpu: unknown GPU "h900"`},
		{func(c *Config) { c.Hardware.Model = "gpt-5" }, `hardware.model: unknown model "gpt-5"`},
		{func(c *Config) { c.Hardware.GPU = "custom" }, "hardware.custom_gpu: required"},
		{func(c *Config) { c.Hardware.Model = "custom"; c.Hardware.CustomModel = &ModelSpec{Layers: 1} }, "hardware.custom_model.hidden: must be > 0"},
		{func(c *Config) { c.Hardware.DType = "int3" }, "hardware.dtype"},
		{func(c *Config) { c.Hardware.WeightDType = "nf4" }, `hardware.weight_dtype: must be one of bf16, fp16, fp8, int8, int4, got "nf4"`},
		{func(c *Config) { c.Hardware.KVCacheDType = "int4" }, `hardware.kv_cache_dtype: must be one of auto, bf16, fp16, fp8, got "int4"`},
		{func(c *Config) {
			c.Hardware.GPU = "custom"
			c.Hardware.CustomGPU = &GPUSpec{PeakTFLOPS: 1, MemBWGBs: 1, MemGB: 1, LinkBWGBs: 1, LinkLatencyUs: -1}
		}, "hardware.custom_gpu.link_latency_us: must be in [0, 1e+06], got -1"},
		{func(c *Config) {
			c.Hardware.Model = "custom"
			c.Hardware.CustomModel = &ModelSpec{Layers: 2, Hidden: 8, Heads: 2, KVHeads: 2, Intermediate: 8, Vocab: 8, ExpertsPerToken: 2}
		}, "hardware.custom_model.experts: 0 (a dense model), but experts_per_token"},
		{func(c *Config) { c.Hardware.TensorParallel = 0 }, "hardware.tensor_parallel"},
		{func(c *Config) { c.Frontend.RequestOverheadMs = -2 }, "frontend.request_overhead_ms"},
		{func(c *Config) { c.Frontend.CPUShare = 1.5 }, "frontend.cpu_share: must be in [0, 1], got 1.5"},
		{func(c *Config) { c.Timing.Model = "physics"; c.Timing.Physics.PrefillOverheadMs = -1 }, "timing.physics.prefill_overhead_ms"},
		{func(c *Config) { c.Timing.Model = "physics"; c.Timing.Physics.LayerOverheadMs = -0.1 }, "timing.physics.layer_overhead_ms"},
		{func(c *Config) { c.Frontend.CPUShare, c.Frontend.Concurrency = 0.5, 1 }, "frontend.cpu_share: one event loop shared by all requests; frontend.concurrency is 1 handlers, want 0 (set one of them)"},
		{func(c *Config) { c.Frontend.CPUShare, c.Frontend.ArrivalStallMs = 0.5, 2 }, "frontend.cpu_share: not with frontend.arrival_stall_ms"},
		{func(c *Config) { c.Client.StallMs, c.Client.StallEveryMs = 3000, 2000 }, "client.stall_every_ms: the stalls come one after another; want more than stall_ms (3000), got 2000"},
		{func(c *Config) { c.Frontend.HoldForSlot = true }, `frontend.hold_for_slot: holds requests for engine.llamacpp.parallel slots; engine.type is "vllm", want llamacpp`},
		{func(c *Config) { c.Engine.Type, c.Workers, c.Frontend.HoldForSlot = "llamacpp", 2, true }, "frontend.hold_for_slot: one server in front of one runner; workers is 2, want 1 aggregated"},
		{func(c *Config) {
			c.Engine.Type, c.Workers, c.Frontend.HoldForSlot = "llamacpp", 2, true
			c.Disaggregation = &DisaggregationConfig{PrefillWorkers: 1, DecodeWorkers: 1}
		}, "frontend.hold_for_slot: one server in front of one runner; serving is disaggregated"},
		{func(c *Config) { c.Frontend.Concurrency = -1 }, "frontend.concurrency"},
	} {
		cfg := DefaultConfig()
		tc.edit(&cfg)
		err := cfg.Validate()
		require.Error(t, err, tc.want)
		assert.Contains(t, err.Error(), tc.want)
	}
}

func TestLoadConfigFileErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.yaml")
	require.NoError(t, os.WriteFile(path, []byte("router:\n  polcy: kv\n"), 0o644))
	_, err := LoadConfig(path)
	assert.ErrorContains(t, err, path+": line 2: unknown key \"router.polcy\"")
	_, err = LoadConfig(filepath.Join(t.TempDir(), "missing.yaml"))
	assert.Error(t, err)
}

// The default H100 + Llama-3.1-8B: (80 GB × 0.9 − 16.06 GB of weights) /
// (128 KiB per token × 64) ≈ 6,668 blocks.
func TestKVBlocksDerived(t *testing.T) {
	b, err := DefaultConfig().KVBlocks()
	require.NoError(t, err)
	assert.Equal(t, 6668, b)

	cfg := DefaultConfig()
	cfg.Hardware.Model = "llama-3.1-70b" // 141 GB of weights on one 80 GB GPU
	_, err = cfg.KVBlocks()
	assert.ErrorContains(t, err, "leaves no KV memory")
	cfg.Hardware.TensorParallel = 4 // (320 × 0.9 − 141.1) GB / (320 KiB × 64)
	b, err = cfg.KVBlocks()
	require.NoError(t, err)
	assert.Equal(t, 7004, b)

	cfg.Engine.NumGPUBlocks = 123
	b, err = cfg.KVBlocks()
	require.NoError(t, err)
	assert.Equal(t, 123, b)
}

// Every example configuration loads, validates and runs.
func TestExampleConfigs(t *testing.T) {
	paths, err := filepath.Glob("../testdata/sim/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	wl := randomWorkload(7, 40, false)
	for _, p := range paths {
		cfg, err := LoadConfig(p)
		require.NoError(t, err, p)
		require.NoError(t, cfg.Validate(), p)
		_, sum := runAll(t, cfg, wl)
		assert.Equal(t, len(wl.Requests), sum.Completed+sum.Rejected, p)
	}
}

// The sim section of input_config is the configuration as JSON: every
// field keyed as in the YAML, and it reads back to the same configuration.
func TestConfigJSONKeysAreYAMLKeys(t *testing.T) {
	var walk func(reflect.Type, string)
	walk = func(t2 reflect.Type, path string) {
		for t2.Kind() == reflect.Pointer || t2.Kind() == reflect.Slice {
			t2 = t2.Elem()
		}
		if t2.Kind() != reflect.Struct {
			return
		}
		for i := range t2.NumField() {
			f := t2.Field(i)
			assert.Equal(t, strings.TrimSuffix(f.Tag.Get("yaml"), ",flow"), f.Tag.Get("json"), "%s.%s", path, f.Name)
			walk(f.Type, path+"."+f.Name)
		}
	}
	walk(reflect.TypeOf(Config{}), "Config")

	cfg := DefaultConfig()
	cfg.Hardware.CustomGPU = &GPUSpec{PeakTFLOPS: 1, MemGB: 2}
	cfg.Hardware.CustomCPU = &CPUSpec{Cores: 2, ClockGHz: 3}
	cfg.Calibration = &Calibration{Model: "linear", FittedOn: []string{"run"}, Range: CalibrationRange{ISL: [2]int{1, 2}},
		Parameters: []CalibratedParam{{Name: "base_ms", Value: 1, Pinned: true}}}
	b, err := json.Marshal(cfg)
	require.NoError(t, err)
	var back Config
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, cfg, back)
	y, err := cfg.YAML()
	require.NoError(t, err)
	fromYAML, err := ParseConfig(y)
	require.NoError(t, err)
	assert.Equal(t, fromYAML, back)
}

// TestUsedTimingYAML: a written config holds only the timing model it uses
// (the others' sections are their defaults on reading), and reads back as
// the same configuration.
func TestUsedTimingYAML(t *testing.T) {
	for _, model := range []string{"physics", "linear", "poly"} {
		cfg := DefaultConfig()
		cfg.Timing.Model = model
		cfg.Timing.Linear.BaseMs = 3
		b, err := cfg.UsedTimingYAML()
		require.NoError(t, err)
		for _, m := range TimingModels() {
			assert.Equal(t, m == model, strings.Contains(string(b), "\n  "+m+":"), "%s in the %s config:\n%s", m, model, b)
		}
		back, err := ParseConfig(b)
		require.NoError(t, err)
		if model != "linear" {
			back.Timing.Linear.BaseMs = 3 // not written: the default
		}
		assert.Equal(t, cfg, back, model)
	}
}

package sim

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const mixtralConfig = "../testdata/models/mixtral-8x7b.json"

// TestHardwareModelConfig: hardware.model_config is the model, named in
// errors, and excludes custom_model.
func TestHardwareModelConfig(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Hardware.ModelConfig = mixtralConfig
	cfg.Hardware.TensorParallel = 2
	require.NoError(t, cfg.Validate())
	m, err := cfg.Hardware.ResolveModel()
	require.NoError(t, err)
	assert.Equal(t, 8, m.Experts)

	cfg.Hardware.ModelConfig = filepath.Join(t.TempDir(), "none.json")
	assert.ErrorContains(t, cfg.Validate(), "hardware.model_config: open "+cfg.Hardware.ModelConfig)

	cfg.Hardware.ModelConfig, cfg.Hardware.Model = mixtralConfig, "custom"
	cfg.Hardware.CustomModel = &ModelSpec{Layers: 1}
	assert.ErrorContains(t, cfg.Validate(), "hardware.model_config: the model is custom_model's; set one of them")

	cfg = DefaultConfig()
	cfg.Hardware.TensorParallel = 1
	cfg.Hardware.ModelConfig = mixtralConfig
	assert.ErrorContains(t, cfg.Validate(), "engine.num_gpu_blocks: "+mixtralConfig+" (93.4 GB of weights) leaves no KV memory")
}

// TestModelConfigUnnamesDefaultModel: a YAML giving hardware.model_config
// without a name does not run under the default preset's name.
func TestModelConfigUnnamesDefaultModel(t *testing.T) {
	cfg, err := ParseConfig([]byte("hardware:\n  model_config: " + mixtralConfig + "\n  tensor_parallel: 2\n"))
	require.NoError(t, err)
	assert.Empty(t, cfg.Hardware.Model)
	require.NoError(t, cfg.Validate())
	cfg, err = ParseConfig([]byte("hardware:\n  model: mixtral-8x7b\n  model_config: " + mixtralConfig + "\n"))
	require.NoError(t, err)
	assert.Equal(t, "mixtral-8x7b", cfg.Hardware.Model)
}

// TestKVBlocksPrecision sizes the KV cache of Mixtral-8x7B on 2 H100s:
// 2·80 GB·0.9 = 144 GB, less all 46,702,526,464 weights, leaves KV blocks
// of 16 tokens of 131,072 B (bf16) or 65,536 B (fp8 KV). In bf16 the
// weights take 93,405,052,928 B: 50,594,947,072 / 2,097,152 = 24,125.55
// blocks, twice that (48,251.1) with an fp8 cache. fp8 weights (the layers
// at 1 B, the embeddings at 2 B) take 46,702,526,464 + 262,144,000 B:
// 97,035,329,536 / 2,097,152 = 46,270 blocks.
func TestKVBlocksPrecision(t *testing.T) {
	cases := []struct {
		weight, kv string
		blocks     int
	}{{"", "", 24_125}, {"", "auto", 24_125}, {"bf16", "fp8", 48_251}, {"fp8", "", 46_270}}
	for _, tc := range cases {
		cfg := DefaultConfig()
		cfg.Engine.BlockSize = 16
		cfg.Hardware = HardwareConfig{GPU: "h100", Model: "mixtral", ModelConfig: mixtralConfig, TensorParallel: 2, DType: "bf16",
			WeightDType: tc.weight, KVCacheDType: tc.kv}
		require.NoError(t, cfg.Validate())
		b, err := cfg.KVBlocks()
		require.NoError(t, err)
		assert.Equal(t, tc.blocks, b, "weight %q, kv %q", tc.weight, tc.kv)
	}
}

func TestHardwareWarnings(t *testing.T) {
	for _, tc := range []struct {
		name   string
		edit   func(*Config)
		warned bool
	}{
		{"default", func(*Config) {}, false},
		{"poly", func(c *Config) { c.Timing.Model = "poly" }, true},
		{"linear", func(c *Config) { c.Timing.Model = "linear" }, true},
		{"table", func(c *Config) { c.Timing.Model = "table" }, true},
		{"roofline", func(c *Config) { c.Timing.Model = "roofline" }, false},
		{"calibrated linear", func(c *Config) { c.Timing.Model = "linear"; c.Calibration = &Calibration{} }, false},
	} {
		c := DefaultConfig()
		c.Hardware.GPU, c.Hardware.Model, c.Hardware.TensorParallel = "a100", "llama-3.1-70b", 4
		tc.edit(&c)
		w := c.HardwareWarnings()
		if !tc.warned {
			assert.Empty(t, w, tc.name)
			continue
		}
		if assert.Len(t, w, 1, tc.name) {
			assert.ErrorContains(t, w[0], "timing.model "+c.Timing.Model+" ignores the hardware (gpu a100, model llama-3.1-70b, tensor_parallel 4)", tc.name)
		}
	}
}

// TestPriorWarnings: the shipped GPU priors on a GPU or engine their corpus
// has none of are an extrapolation, and sim says so; a config with timing
// of its own (calibrated, other efficiencies, a CPU) is not warned.
func TestPriorWarnings(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string // "" = no warning
	}{
		{"the corpus's gpu and engine", func(*Config) {}, ""},
		{"an alias of it", func(c *Config) { c.Hardware.GPU = "H100_SXM" }, ""},
		{"another gpu", func(c *Config) { c.Hardware.GPU = "a100_sxm" }, "gpu a100 is outside that corpus"},
		{"another engine", func(c *Config) { c.Engine.Type = "sglang" }, "engine sglang is outside that corpus"},
		{"both", func(c *Config) { c.Hardware.GPU, c.Engine.Type = "gb200", "sglang" }, "engine sglang and gpu gb200 are outside that corpus"},
		{"calibrated", func(c *Config) { c.Hardware.GPU = "a100"; c.Calibration = &Calibration{} }, ""},
		{"efficiencies of its own", func(c *Config) { c.Hardware.GPU = "a100"; c.Timing.Physics.MemoryEfficiency = 0.8 }, ""},
		{"a cpu engine", func(c *Config) { c.Hardware.CPU = "x86-64-v3-2vcpu"; c.Engine.Type = "llamacpp" }, ""},
		{"a decode pool on another gpu", func(c *Config) {
			a100 := c.Hardware
			a100.GPU = "a100"
			c.Disaggregation = &DisaggregationConfig{PrefillWorkers: 1, DecodeWorkers: 1, Decode: PoolOverride{Hardware: &a100}}
		}, "gpu a100 is outside that corpus"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			tc.edit(&c)
			w := c.PriorWarnings()
			if tc.want == "" {
				assert.Empty(t, w)
				return
			}
			require.Len(t, w, 1)
			assert.ErrorContains(t, w[0], "the default GPU priors were fitted on vllm runs on h100 only")
			assert.ErrorContains(t, w[0], tc.want)
		})
	}
}

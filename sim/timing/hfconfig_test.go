package timing

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestModelFromHFConfig parses the published config.json files of
// testdata/models (see its README) into the shapes their model cards give.
func TestModelFromHFConfig(t *testing.T) {
	cases := []struct {
		path string
		want ModelSpec
	}{
		{mixtralConfig, ModelSpec{Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, Intermediate: 14336, Vocab: 32000,
			Experts: 8, ExpertsPerToken: 2, ExpertIntermediate: 14336}},
		{llama70Config, ModelSpec{Layers: 80, Hidden: 8192, Heads: 64, KVHeads: 8, Intermediate: 28672, Vocab: 128256}},
		// Llama 4: text_config; a shared expert as wide as a routed one.
		{scoutConfig, ModelSpec{Layers: 48, Hidden: 5120, Heads: 40, KVHeads: 8, HeadDim: 128, Intermediate: 8192, Vocab: 202048,
			Experts: 16, ExpertsPerToken: 1, ExpertIntermediate: 8192, SharedIntermediate: 8192}},
		{qwenMoEConfig, ModelSpec{Layers: 48, Hidden: 2048, Heads: 32, KVHeads: 4, HeadDim: 128, Intermediate: 6144, Vocab: 151936,
			Experts: 128, ExpertsPerToken: 8, ExpertIntermediate: 768}},
	}
	for _, tc := range cases {
		t.Run(filepath.Base(tc.path), func(t *testing.T) {
			m, err := ModelFromHFConfig(tc.path)
			require.NoError(t, err)
			assert.Equal(t, tc.want, m)
		})
	}
}

// TestPresetsMatchConfigFiles: the model presets that testdata/models has
// a published config.json for are that file's shape.
func TestPresetsMatchConfigFiles(t *testing.T) {
	for name, path := range map[string]string{"llama-3.1-70b": llama70Config, "mixtral-8x7b": mixtralConfig,
		"mixtral-8x22b": "../../testdata/models/mixtral-8x22b.json", "llama-4-scout-17b-16e": scoutConfig, "qwen3-30b-a3b": qwenMoEConfig} {
		m, err := ModelFromHFConfig(path)
		require.NoError(t, err)
		assert.Equal(t, modelPresets[name], m, name)
	}
}

// TestHFConfigLayerPlacement counts the MoE layers of each family's
// interleaving keys and takes the dense layers' own MLP width.
func TestHFConfigLayerPlacement(t *testing.T) {
	base := `"model_type": "x", "tie_word_embeddings": true, "hidden_size": 64, "num_hidden_layers": 8,
		"num_attention_heads": 4, "vocab_size": 100, "intermediate_size": 256, "num_experts_per_tok": 2`
	cases := []struct {
		name, keys string
		want       ModelSpec
	}{
		{"llama4 every 2nd", `"model_type": "llama4_text", "num_local_experts": 16, "interleave_moe_layer_step": 2, "intermediate_size_mlp": 512`,
			ModelSpec{Experts: 16, ExpertIntermediate: 256, SharedIntermediate: 256, MoELayers: 4, Intermediate: 512}},
		{"llama4 listed", `"model_type": "llama4_text", "num_local_experts": 16, "moe_layers": [1, 5], "intermediate_size_mlp": 512`,
			ModelSpec{Experts: 16, ExpertIntermediate: 256, SharedIntermediate: 256, MoELayers: 2, Intermediate: 512}},
		{"deepseek first 3 dense", `"n_routed_experts": 64, "first_k_dense_replace": 3, "n_shared_experts": 2, "moe_intermediate_size": 32`,
			ModelSpec{Experts: 64, ExpertIntermediate: 32, SharedIntermediate: 64, MoELayers: 5, Intermediate: 256}},
		{"qwen2-moe sparse step", `"num_experts": 60, "decoder_sparse_step": 2, "mlp_only_layers": [1], "moe_intermediate_size": 32, "shared_expert_intermediate_size": 128`,
			ModelSpec{Experts: 60, ExpertIntermediate: 32, SharedIntermediate: 128, MoELayers: 3, Intermediate: 256}},
		{"all layers", `"num_experts": 60, "moe_intermediate_size": 32`,
			ModelSpec{Experts: 60, ExpertIntermediate: 32, Intermediate: 256}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := parseHFConfig([]byte("{"+base+", "+tc.keys+"}"), true)
			require.NoError(t, err)
			tc.want.Layers, tc.want.Hidden, tc.want.Heads, tc.want.KVHeads, tc.want.Vocab = 8, 64, 4, 4, 100
			tc.want.TiedEmbed, tc.want.ExpertsPerToken = true, 2
			assert.Equal(t, tc.want, m)
		})
	}
}

// TestHFConfigErrors: a file that does not describe a model the simulator
// can count is refused, naming the file, the line or the key.
func TestHFConfigErrors(t *testing.T) {
	dense := `"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100, "intermediate_size": 256`
	cases := []struct{ name, body, want string }{
		{"missing hidden_size", `{"model_type": "newarch", "num_hidden_layers": 2}`, "hidden_size: missing"},
		{"missing in text_config", `{"model_type": "llama4", "text_config": {"model_type": "llama4_text", "hidden_size": 64,
			"num_hidden_layers": 2, "num_attention_heads": 4}}`, "text_config.vocab_size: missing"},
		{"missing intermediate_size", `{"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100}`,
			"intermediate_size: missing"},
		{"experts without k", "{" + dense + `, "num_local_experts": 8}`, "num_experts_per_tok: missing"},
		{"unknown type, untold tying", `{"model_type": "newarch", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
			"vocab_size": 100, "intermediate_size": 256}`, `tie_word_embeddings: missing, and model_type "newarch" has no default`},
		{"latent attention", "{" + dense + `, "kv_lora_rank": 512}`, "kv_lora_rank: multi-head latent attention"},
		{"a string for a number", "{\n" + `"model_type": "llama",` + "\n" + `"hidden_size": "64"}`, `line 3: hidden_size: want int, got string`},
		{"broken JSON", "{\n\"model_type\": \"llama\",\n}", "line 3: invalid character '}'"},
		{"kv heads", "{" + dense + `, "num_key_value_heads": 3}`, "model.kv_heads: 3 does not divide heads 4"},
		{"too many experts a token", "{" + dense + `, "num_experts": 4, "num_experts_per_tok": 5}`, "model.experts_per_token: must be in [1, 4], got 5"},
	}
	dir := t.TempDir()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, "config.json")
			require.NoError(t, os.WriteFile(path, []byte(tc.body), 0o644))
			_, err := ModelFromHFConfig(path)
			require.Error(t, err)
			assert.Contains(t, err.Error(), path+": ")
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestHFConfigQuantization reads a quantized checkpoint's weight precision
// from its quantization_config: the published Qwen3-30B-A3B-FP8 (fp8,
// block-wise) and each format vLLM reads.
func TestHFConfigQuantization(t *testing.T) {
	m, err := ModelFromHFConfig("../../testdata/models/qwen3-30b-a3b-fp8.json")
	require.NoError(t, err)
	bf16, err := ModelFromHFConfig(qwenMoEConfig)
	require.NoError(t, err)
	bf16.WeightDType = "fp8"
	assert.Equal(t, bf16, m, "the bf16 model's shape, fp8 weights")

	dense := `"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100, "intermediate_size": 256`
	cases := []struct{ quant, want, err string }{
		{`{"quant_method": "fbgemm_fp8"}`, "fp8", ""},
		{`{"quant_method": "awq", "bits": 4, "group_size": 128}`, "int4", ""},
		{`{"quant_method": "gptq", "bits": 8}`, "int8", ""},
		{`{"quant_method": "modelopt", "quant_algo": "FP8"}`, "fp8", ""},
		{`{"quant_method": "compressed-tensors", "config_groups": {"group_0": {"weights": {"num_bits": 8, "type": "float"}}}}`, "fp8", ""},
		{`{"quant_method": "compressed-tensors", "config_groups": {"group_0": {"weights": {"num_bits": 4, "type": "int"}}}}`, "int4", ""},
		{`{"quant_method": "bitsandbytes"}`, "", `quantization_config.quant_method: "bitsandbytes" is not modelled`},
		{`{"quant_method": "gptq", "bits": 3}`, "", "quantization_config.bits: 3 is not modelled (4 or 8 are)"},
		{`{"quant_method": "modelopt", "quant_algo": "NVFP4"}`, "", `quantization_config.quant_algo: "NVFP4" is not modelled`},
		{`{"quant_method": "compressed-tensors", "config_groups": {"a": {"weights": {"num_bits": 8, "type": "float"}},
			"b": {"weights": {"num_bits": 4, "type": "int"}}}}`, "", "quantization_config.config_groups: fp8 and int4 weights"},
		{`{"quant_method": "compressed-tensors", "config_groups": {"a": {"weights": {"num_bits": 4, "type": "float"}}}}`, "",
			"quantization_config.config_groups.a: float weights of 4 bits are not modelled"},
	}
	for _, tc := range cases {
		t.Run(tc.quant, func(t *testing.T) {
			b := []byte("{" + dense + `, "quantization_config": ` + tc.quant + "}")
			m, err := parseHFConfig(b, true)
			if tc.err != "" {
				assert.ErrorContains(t, err, tc.err)
				m, err = parseHFConfig(b, false) // hardware.weight_dtype overrides the file
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, m.WeightDType)
		})
	}
}

// TestQuantizedCheckpointPrecision: an fp8 checkpoint's weights are sized
// and priced as fp8 unless hardware.weight_dtype says otherwise. Qwen3-30B-
// A3B's layers hold 29,909,581,824 weights and its embeddings 622,329,856:
// at fp8 (and bf16 embeddings) 31,154,241,536 B, all bf16 61,063,823,360 B.
func TestQuantizedCheckpointPrecision(t *testing.T) {
	hw := HardwareConfig{GPU: "h100", Model: "qwen3-30b-a3b-fp8", ModelConfig: "../../testdata/models/qwen3-30b-a3b-fp8.json",
		TensorParallel: 1, DType: "bf16"}
	m, err := hw.ResolveModel()
	require.NoError(t, err)
	assert.Equal(t, 31_154_241_536.0, hw.WeightMemBytes(m))
	hw.WeightDType = "bf16"
	m, err = hw.ResolveModel()
	require.NoError(t, err)
	assert.Equal(t, 61_063_823_360.0, hw.WeightMemBytes(m))
}

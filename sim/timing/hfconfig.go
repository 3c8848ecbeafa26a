package timing

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
)

// hfConfig is what the simulator reads of a Hugging Face config.json. A
// nil field is absent (or null) in the file.
type hfConfig struct {
	ModelType  string    `json:"model_type"`
	TextConfig *hfConfig `json:"text_config"` // multimodal models (Llama 4): the language model

	HiddenSize        *int  `json:"hidden_size"`
	NumHiddenLayers   *int  `json:"num_hidden_layers"`
	NumAttentionHeads *int  `json:"num_attention_heads"`
	NumKeyValueHeads  *int  `json:"num_key_value_heads"`
	HeadDim           *int  `json:"head_dim"`
	IntermediateSize  *int  `json:"intermediate_size"`
	VocabSize         *int  `json:"vocab_size"`
	TieWordEmbeddings *bool `json:"tie_word_embeddings"`

	// Mixture of experts, in each family's spelling.
	NumLocalExperts              *int  `json:"num_local_experts"` // Mixtral, Llama 4
	NumExperts                   *int  `json:"num_experts"`       // Qwen-MoE, OLMoE
	NRoutedExperts               *int  `json:"n_routed_experts"`  // DeepSeek, GLM-4.5
	NumExpertsPerTok             *int  `json:"num_experts_per_tok"`
	MoEIntermediateSize          *int  `json:"moe_intermediate_size"`
	NSharedExperts               *int  `json:"n_shared_experts"`                // DeepSeek: each of moe_intermediate_size
	SharedExpertIntermediateSize *int  `json:"shared_expert_intermediate_size"` // Qwen2-MoE: one shared expert
	IntermediateSizeMLP          *int  `json:"intermediate_size_mlp"`           // Llama 4: the dense layers' MLP
	InterleaveMoELayerStep       *int  `json:"interleave_moe_layer_step"`       // Llama 4: every step-th layer
	MoELayers                    []int `json:"moe_layers"`                      // Llama 4: the MoE layers, listed
	FirstKDenseReplace           *int  `json:"first_k_dense_replace"`           // DeepSeek: the first k layers are dense
	MoELayerFreq                 *int  `json:"moe_layer_freq"`                  // DeepSeek: of the rest, every freq-th
	DecoderSparseStep            *int  `json:"decoder_sparse_step"`             // Qwen-MoE: every step-th layer
	MLPOnlyLayers                []int `json:"mlp_only_layers"`                 // Qwen-MoE: dense layers, listed

	// Attention the model does not describe: refused.
	KVLoRARank *int `json:"kv_lora_rank"` // multi-head latent attention (DeepSeek-V2/V3)

	Quantization *hfQuant `json:"quantization_config"` // a quantized checkpoint's weights
}

// hfQuant is a quantized checkpoint's quantization_config, in the formats
// vLLM reads: quant_method fp8 or fbgemm_fp8, awq or gptq with bits,
// compressed-tensors with config_groups, modelopt with quant_algo.
type hfQuant struct {
	QuantMethod  string `json:"quant_method"`
	Bits         int    `json:"bits"`
	QuantAlgo    string `json:"quant_algo"`
	ConfigGroups map[string]struct {
		Weights *struct {
			NumBits int    `json:"num_bits"`
			Type    string `json:"type"`
		} `json:"weights"`
	} `json:"config_groups"`
}

// weightDType is the layer weights' precision q describes.
func (q hfQuant) weightDType() (string, error) {
	switch q.QuantMethod {
	case "fp8", "fbgemm_fp8":
		return "fp8", nil
	case "awq", "gptq":
		return intDType(q.Bits)
	case "modelopt":
		if q.QuantAlgo == "FP8" {
			return "fp8", nil
		}
		return "", fmt.Errorf("quantization_config.quant_algo: %q is not modelled (FP8 is)", q.QuantAlgo)
	case "compressed-tensors":
		return q.groupsDType()
	}
	return "", fmt.Errorf("quantization_config.quant_method: %q is not modelled (fp8, fbgemm_fp8, awq, gptq, compressed-tensors, modelopt are)", q.QuantMethod)
}

// intDType is the weight-only integer precision of bits bits.
func intDType(bits int) (string, error) {
	switch bits {
	case 4:
		return "int4", nil
	case 8:
		return "int8", nil
	}
	return "", fmt.Errorf("quantization_config.bits: %d is not modelled (4 or 8 are)", bits)
}

// groupsDType is compressed-tensors' weight precision: every group's
// weights alike, floats of 8 bits (fp8) or integers of 4 or 8.
func (q hfQuant) groupsDType() (string, error) {
	dtype := ""
	for _, name := range sortedKeys(q.ConfigGroups) {
		w := q.ConfigGroups[name].Weights
		if w == nil {
			return "", fmt.Errorf("quantization_config.config_groups.%s.weights: missing", name)
		}
		var d string
		var err error
		switch {
		case w.Type == "float" && w.NumBits == 8:
			d = "fp8"
		case w.Type == "int":
			d, err = intDType(w.NumBits)
		default:
			err = fmt.Errorf("%s weights of %d bits are not modelled", w.Type, w.NumBits)
		}
		if err != nil {
			return "", fmt.Errorf("quantization_config.config_groups.%s: %w", name, err)
		}
		if dtype != "" && d != dtype {
			return "", fmt.Errorf("quantization_config.config_groups: %s and %s weights; set hardware.weight_dtype", dtype, d)
		}
		dtype = d
	}
	if dtype == "" {
		return "", errors.New("quantization_config.config_groups: missing")
	}
	return dtype, nil
}

// untiedByDefault are the model types whose transformers config class
// defaults tie_word_embeddings to false; any other type must state it.
var untiedByDefault = []string{"llama", "llama4", "llama4_text", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe"}

// ModelFromHFConfig reads a model's shape from its Hugging Face config.json
// (model_type, hidden_size, num_hidden_layers, num_attention_heads,
// num_key_value_heads, head_dim, intermediate_size, vocab_size,
// tie_word_embeddings), a multimodal model's from its text_config, and a
// mixture of experts' from its family's keys: the routed experts
// (num_local_experts, num_experts or n_routed_experts), num_experts_per_tok,
// moe_intermediate_size (else intermediate_size), the shared experts
// (n_shared_experts × moe_intermediate_size, shared_expert_intermediate_size,
// or Llama 4's one of intermediate_size) and which layers have experts
// (Llama 4's interleave_moe_layer_step or moe_layers and
// intermediate_size_mlp for the others, DeepSeek's first_k_dense_replace
// and moe_layer_freq, Qwen's decoder_sparse_step and mlp_only_layers; else
// all). A key the shape needs that the file lacks is an error naming the
// file and the key; so is multi-head latent attention (kv_lora_rank),
// which this model does not describe. A quantized checkpoint's
// quantization_config gives its weights' precision (ModelSpec.WeightDType:
// fp8, or weight-only int8 or int4). Vision towers are not counted.
func ModelFromHFConfig(path string) (ModelSpec, error) {
	return readHFConfig(path, true)
}

// readHFConfig is ModelFromHFConfig; quantized false ignores the file's
// quantization_config.
func readHFConfig(path string, quantized bool) (ModelSpec, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return ModelSpec{}, err
	}
	m, err := parseHFConfig(b, quantized)
	if err != nil {
		return ModelSpec{}, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// parseHFConfig is ModelFromHFConfig on the file's bytes; quantized false
// ignores the file's quantization_config (hardware.weight_dtype overrides
// it).
func parseHFConfig(b []byte, quantized bool) (ModelSpec, error) {
	var c hfConfig
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&c); err != nil {
		return ModelSpec{}, jsonError(b, err)
	}
	q := c.Quantization
	if q == nil && c.TextConfig != nil {
		q = c.TextConfig.Quantization
	}
	wd := ""
	if q != nil && quantized {
		var err error
		if wd, err = q.weightDType(); err != nil {
			return ModelSpec{}, err
		}
	}
	prefix := ""
	if c.TextConfig != nil {
		inner := *c.TextConfig
		if inner.TieWordEmbeddings == nil {
			inner.TieWordEmbeddings = c.TieWordEmbeddings
		}
		c, prefix = inner, "text_config."
	}
	m, err := c.spec(prefix)
	if err != nil {
		return ModelSpec{}, err
	}
	m.WeightDType = wd
	if err := m.validate("model"); err != nil {
		return ModelSpec{}, err
	}
	return m, nil
}

// jsonError names the line of a syntax or type error in b.
func jsonError(b []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Errorf("line %d: %w", lineAt(b, syn.Offset), err)
	case errors.As(err, &typ):
		return fmt.Errorf("line %d: %s: want %s, got %s", lineAt(b, typ.Offset), typ.Field, typ.Type, typ.Value)
	}
	return err
}

// lineAt is the 1-based line of byte offset off in b.
func lineAt(b []byte, off int64) int {
	return bytes.Count(b[:min(int(off), len(b))], []byte("\n")) + 1
}

// need returns *v, or an error naming the missing key.
func need(prefix, key string, v *int) (int, error) {
	if v == nil {
		return 0, fmt.Errorf("%s%s: missing", prefix, key)
	}
	return *v, nil
}

// spec is c's ModelSpec; prefix is where c sits in the file (for errors).
func (c hfConfig) spec(prefix string) (ModelSpec, error) {
	if c.KVLoRARank != nil {
		return ModelSpec{}, fmt.Errorf("%skv_lora_rank: multi-head latent attention (model_type %q) is not modelled; describe the model with hardware.custom_model", prefix, c.ModelType)
	}
	var m ModelSpec
	var err error
	required := []struct {
		key string
		v   *int
		dst *int
	}{{"num_hidden_layers", c.NumHiddenLayers, &m.Layers}, {"hidden_size", c.HiddenSize, &m.Hidden},
		{"num_attention_heads", c.NumAttentionHeads, &m.Heads}, {"vocab_size", c.VocabSize, &m.Vocab}}
	for _, r := range required {
		if *r.dst, err = need(prefix, r.key, r.v); err != nil {
			return ModelSpec{}, err
		}
	}
	m.KVHeads = m.Heads // transformers' default: no grouped-query attention
	if c.NumKeyValueHeads != nil {
		m.KVHeads = *c.NumKeyValueHeads
	}
	if c.HeadDim != nil {
		m.HeadDim = *c.HeadDim
	}
	if m.TiedEmbed, err = c.tied(prefix); err != nil {
		return ModelSpec{}, err
	}
	if err := c.experts(prefix, &m); err != nil {
		return ModelSpec{}, err
	}
	return m, nil
}

// tied is tie_word_embeddings, or the model type's default where
// transformers gives one (untiedByDefault).
func (c hfConfig) tied(prefix string) (bool, error) {
	if c.TieWordEmbeddings != nil {
		return *c.TieWordEmbeddings, nil
	}
	if slices.Contains(untiedByDefault, c.ModelType) {
		return false, nil
	}
	return false, fmt.Errorf("%stie_word_embeddings: missing, and model_type %q has no default known here", prefix, c.ModelType)
}

// routedExperts is the routed experts per MoE layer in any spelling (0:
// dense).
func (c hfConfig) routedExperts() int {
	for _, v := range []*int{c.NumLocalExperts, c.NumExperts, c.NRoutedExperts} {
		if v != nil {
			return *v
		}
	}
	return 0
}

// experts fills m's MLP widths and mixture of experts.
func (c hfConfig) experts(prefix string, m *ModelSpec) error {
	m.Experts = c.routedExperts()
	if m.Experts == 0 {
		var err error
		m.Intermediate, err = need(prefix, "intermediate_size", c.IntermediateSize)
		return err
	}
	k, err := need(prefix, "num_experts_per_tok", c.NumExpertsPerTok)
	if err != nil {
		return err
	}
	m.ExpertsPerToken = k
	if c.MoEIntermediateSize != nil {
		m.ExpertIntermediate = *c.MoEIntermediateSize
	} else if m.ExpertIntermediate, err = need(prefix, "intermediate_size", c.IntermediateSize); err != nil {
		return err
	}
	m.SharedIntermediate = c.sharedWidth(m.ExpertIntermediate)
	moe := 0
	for i := range m.Layers {
		if c.isMoELayer(i) {
			moe++
		}
	}
	if moe == m.Layers { // intermediate is unused: every layer has experts
		m.Intermediate = m.ExpertIntermediate
		if c.IntermediateSize != nil {
			m.Intermediate = *c.IntermediateSize
		}
		return nil
	}
	m.MoELayers = moe
	dense := c.IntermediateSize
	if c.IntermediateSizeMLP != nil {
		dense = c.IntermediateSizeMLP
	}
	m.Intermediate, err = need(prefix, "intermediate_size", dense)
	return err
}

// sharedWidth is the width of the MLP every token of an MoE layer passes
// through beside its routed experts (expert is one routed expert's).
func (c hfConfig) sharedWidth(expert int) int {
	switch {
	case c.SharedExpertIntermediateSize != nil:
		return *c.SharedExpertIntermediateSize
	case c.NSharedExperts != nil:
		return *c.NSharedExperts * expert
	case c.ModelType == "llama4_text" || c.ModelType == "llama4":
		return expert // Llama 4's shared expert is as wide as a routed one
	}
	return 0
}

// isMoELayer is whether layer i (from 0) has experts, by the family's keys.
func (c hfConfig) isMoELayer(i int) bool {
	switch {
	case c.MoELayers != nil:
		return slices.Contains(c.MoELayers, i)
	case c.InterleaveMoELayerStep != nil:
		return *c.InterleaveMoELayerStep > 0 && (i+1)%*c.InterleaveMoELayerStep == 0
	case c.FirstKDenseReplace != nil || c.MoELayerFreq != nil:
		k, freq := 0, 1
		if c.FirstKDenseReplace != nil {
			k = *c.FirstKDenseReplace
		}
		if c.MoELayerFreq != nil {
			freq = *c.MoELayerFreq
		}
		return i >= k && freq > 0 && i%freq == 0
	case c.DecoderSparseStep != nil || c.MLPOnlyLayers != nil:
		step := 1
		if c.DecoderSparseStep != nil {
			step = *c.DecoderSparseStep
		}
		return !slices.Contains(c.MLPOnlyLayers, i) && step > 0 && (i+1)%step == 0
	}
	return true
}

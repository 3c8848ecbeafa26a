package sim

import (
	"fmt"
	"sort"
	"strings"
)

// GPUSpec is one accelerator: dense bf16 tensor throughput, HBM bandwidth and
// capacity, and the bandwidth of the link used for tensor-parallel
// all-reduces.
type GPUSpec struct {
	PeakTFLOPS   float64 `yaml:"peak_tflops" json:"peak_tflops"`     // dense bf16/fp16 tensor TFLOP/s
	MemBWGBs     float64 `yaml:"mem_bw_gbs" json:"mem_bw_gbs"`       // HBM/GDDR bandwidth, GB/s
	MemGB        float64 `yaml:"mem_gb" json:"mem_gb"`               // memory per GPU, GB (10^9 bytes)
	LinkBWGBs    float64 `yaml:"link_bw_gbs" json:"link_bw_gbs"`     // per-GPU all-reduce link bandwidth, GB/s
	FP8Supported bool    `yaml:"fp8_supported" json:"fp8_supported"` // fp8 tensor cores (2x bf16 rate)
}

// ModelSpec is a dense decoder-only transformer.
type ModelSpec struct {
	Layers       int  `yaml:"layers" json:"layers"`
	Hidden       int  `yaml:"hidden" json:"hidden"`
	Heads        int  `yaml:"heads" json:"heads"`
	KVHeads      int  `yaml:"kv_heads" json:"kv_heads"`
	HeadDim      int  `yaml:"head_dim" json:"head_dim"` // 0 = hidden/heads
	Intermediate int  `yaml:"intermediate" json:"intermediate"`
	Vocab        int  `yaml:"vocab" json:"vocab"`
	TiedEmbed    bool `yaml:"tied_embeddings" json:"tied_embeddings"`
}

// gpuPresets are vendor datasheet figures (dense, no sparsity).
var gpuPresets = map[string]GPUSpec{
	"h100":         {PeakTFLOPS: 989.5, MemBWGBs: 3350, MemGB: 80, LinkBWGBs: 450, FP8Supported: true},
	"h200":         {PeakTFLOPS: 989.5, MemBWGBs: 4800, MemGB: 141, LinkBWGBs: 450, FP8Supported: true},
	"b200":         {PeakTFLOPS: 2250, MemBWGBs: 8000, MemGB: 180, LinkBWGBs: 900, FP8Supported: true},
	"gb200":        {PeakTFLOPS: 2500, MemBWGBs: 8000, MemGB: 186, LinkBWGBs: 900, FP8Supported: true},
	"a100":         {PeakTFLOPS: 312, MemBWGBs: 2039, MemGB: 80, LinkBWGBs: 300},
	"l40s":         {PeakTFLOPS: 362, MemBWGBs: 864, MemGB: 48, LinkBWGBs: 32, FP8Supported: true},
	"rtx-6000-ada": {PeakTFLOPS: 364, MemBWGBs: 960, MemGB: 48, LinkBWGBs: 32, FP8Supported: true},
}

// gpuAliases maps other spellings to preset names.
var gpuAliases = map[string]string{
	"h100_sxm": "h100", "h100-sxm": "h100", "h200_sxm": "h200", "h200-sxm": "h200",
	"b200_sxm": "b200", "gb200_sxm": "gb200", "a100_sxm": "a100", "a100-80gb": "a100",
	"rtx6000ada": "rtx-6000-ada", "rtx_6000_ada": "rtx-6000-ada",
}

// modelPresets are the published configs (config.json) of common models.
var modelPresets = map[string]ModelSpec{
	"llama-3.1-8b":  {Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, Intermediate: 14336, Vocab: 128256},
	"llama-3.1-70b": {Layers: 80, Hidden: 8192, Heads: 64, KVHeads: 8, Intermediate: 28672, Vocab: 128256},
	"qwen3-0.6b":    {Layers: 28, Hidden: 1024, Heads: 16, KVHeads: 8, HeadDim: 128, Intermediate: 3072, Vocab: 151936, TiedEmbed: true},
	"qwen3-8b":      {Layers: 36, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128, Intermediate: 12288, Vocab: 151936},
	"qwen3-32b":     {Layers: 64, Hidden: 5120, Heads: 64, KVHeads: 8, HeadDim: 128, Intermediate: 25600, Vocab: 151936},
	"qwen2.5-7b":    {Layers: 28, Hidden: 3584, Heads: 28, KVHeads: 4, Intermediate: 18944, Vocab: 152064},
	"mistral-7b":    {Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, Intermediate: 14336, Vocab: 32768},
	// The random-weight llama GGUFs of `simbench tiny-model` (F16): the
	// default one and real-engine.md's slower "medium" one.
	"simbench-tiny":   {Layers: 4, Hidden: 512, Heads: 8, KVHeads: 4, Intermediate: 1536, Vocab: 4096},
	"simbench-medium": {Layers: 8, Hidden: 1024, Heads: 16, KVHeads: 4, Intermediate: 2816, Vocab: 8192},
}

// dtypeBytes is the storage size of one weight or KV element.
var dtypeBytes = map[string]float64{"bf16": 2, "fp16": 2, "fp8": 1, "fp32": 4}

// GPUPresets returns the names of the GPU presets, sorted.
func GPUPresets() []string { return sortedKeys(gpuPresets) }

// ModelPresets returns the names of the model presets, sorted.
func ModelPresets() []string { return sortedKeys(modelPresets) }

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// lookupGPU resolves a preset name (case-insensitive, with aliases).
func lookupGPU(name string) (GPUSpec, error) {
	n := strings.ToLower(name)
	if a, ok := gpuAliases[n]; ok {
		n = a
	}
	if g, ok := gpuPresets[n]; ok {
		return g, nil
	}
	return GPUSpec{}, fmt.Errorf("unknown GPU %q (known: %s, or \"custom\" with hardware.custom_gpu)",
		name, strings.Join(GPUPresets(), ", "))
}

func lookupModel(name string) (ModelSpec, error) {
	if m, ok := modelPresets[strings.ToLower(name)]; ok {
		return m, nil
	}
	return ModelSpec{}, fmt.Errorf("unknown model %q (known: %s, or \"custom\" with hardware.custom_model)",
		name, strings.Join(ModelPresets(), ", "))
}

func (m ModelSpec) headDim() int {
	if m.HeadDim > 0 {
		return m.HeadDim
	}
	return m.Hidden / m.Heads
}

// layerParams is the number of weights in one transformer layer (attention
// projections and a gated MLP; norms are negligible).
func (m ModelSpec) layerParams() float64 {
	hd := float64(m.headDim())
	h := float64(m.Hidden)
	attn := h*float64(m.Heads)*hd*2 + h*float64(m.KVHeads)*hd*2
	return attn + 3*h*float64(m.Intermediate)
}

// Params is the total number of weights.
func (m ModelSpec) Params() float64 {
	embed := float64(m.Vocab) * float64(m.Hidden)
	if !m.TiedEmbed {
		embed *= 2
	}
	return float64(m.Layers)*m.layerParams() + embed
}

// kvBytesPerToken is the KV-cache footprint of one token (K and V, all layers).
func (m ModelSpec) kvBytesPerToken(dtype float64) float64 {
	return 2 * float64(m.Layers) * float64(m.KVHeads) * float64(m.headDim()) * dtype
}

func (m ModelSpec) validate(key string) error {
	fields := []struct {
		name string
		v    int
	}{{"layers", m.Layers}, {"hidden", m.Hidden}, {"heads", m.Heads}, {"kv_heads", m.KVHeads},
		{"intermediate", m.Intermediate}, {"vocab", m.Vocab}}
	for _, f := range fields {
		if f.v <= 0 {
			return fmt.Errorf("%s.%s: must be > 0, got %d", key, f.name, f.v)
		}
	}
	if m.HeadDim < 0 {
		return fmt.Errorf("%s.head_dim: must be >= 0, got %d", key, m.HeadDim)
	}
	if m.Heads%m.KVHeads != 0 {
		return fmt.Errorf("%s.kv_heads: %d does not divide heads %d", key, m.KVHeads, m.Heads)
	}
	return nil
}

func (g GPUSpec) validate(key string) error {
	fields := []struct {
		name string
		v    float64
	}{{"peak_tflops", g.PeakTFLOPS}, {"mem_bw_gbs", g.MemBWGBs}, {"mem_gb", g.MemGB}, {"link_bw_gbs", g.LinkBWGBs}}
	for _, f := range fields {
		if !(f.v > 0) {
			return fmt.Errorf("%s.%s: must be > 0, got %g", key, f.name, f.v)
		}
	}
	return nil
}

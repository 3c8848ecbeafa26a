package timing

import (
	"cmp"
	"fmt"
	"math"
	"sort"
	"strings"
)

// GPUSpec is one accelerator: dense bf16 tensor throughput, HBM bandwidth and
// capacity, and the bandwidth and latency of the link used for
// tensor-parallel all-reduces.
type GPUSpec struct {
	PeakTFLOPS   float64 `yaml:"peak_tflops" json:"peak_tflops"`     // dense bf16/fp16 tensor TFLOP/s
	MemBWGBs     float64 `yaml:"mem_bw_gbs" json:"mem_bw_gbs"`       // HBM/GDDR bandwidth, GB/s
	MemGB        float64 `yaml:"mem_gb" json:"mem_gb"`               // memory per GPU, GB (10^9 bytes)
	LinkBWGBs    float64 `yaml:"link_bw_gbs" json:"link_bw_gbs"`     // per-GPU all-reduce link bandwidth, GB/s (one direction)
	FP8Supported bool    `yaml:"fp8_supported" json:"fp8_supported"` // fp8 tensor cores (2x bf16 rate)
	// LinkLatencyUs is the fixed cost of one all-reduce (launch and
	// synchronisation), paid twice per layer under tensor parallelism;
	// 0 = bandwidth alone.
	LinkLatencyUs float64 `yaml:"link_latency_us,omitempty" json:"link_latency_us,omitempty"`
	// HostBWGBs is one GPU's link to host memory, GB/s in one direction
	// (PCIe, or NVLink-C2C to a Grace CPU): what a KV block offloaded to
	// CPU memory is loaded back over (engine.kv_offload); 0 = unknown.
	HostBWGBs float64 `yaml:"host_bw_gbs,omitempty" json:"host_bw_gbs,omitempty"`
}

// ModelSpec is a decoder-only transformer: dense, or a mixture of experts
// when Experts > 0 (MoELayers of its layers route each token to
// ExpertsPerToken of Experts MLPs of width ExpertIntermediate, beside a
// shared MLP of width SharedIntermediate; the other layers are dense MLPs of
// width Intermediate).
type ModelSpec struct {
	Layers       int  `yaml:"layers" json:"layers"`
	Hidden       int  `yaml:"hidden" json:"hidden"`
	Heads        int  `yaml:"heads" json:"heads"`
	KVHeads      int  `yaml:"kv_heads" json:"kv_heads"`
	HeadDim      int  `yaml:"head_dim" json:"head_dim"` // 0 = hidden/heads
	Intermediate int  `yaml:"intermediate" json:"intermediate"`
	Vocab        int  `yaml:"vocab" json:"vocab"`
	TiedEmbed    bool `yaml:"tied_embeddings" json:"tied_embeddings"`
	// Experts is the routed experts of each MoE layer; 0 = a dense model.
	Experts         int `yaml:"experts,omitempty" json:"experts,omitempty"`
	ExpertsPerToken int `yaml:"experts_per_token,omitempty" json:"experts_per_token,omitempty"`
	// ExpertIntermediate is one routed expert's MLP width; 0 = intermediate.
	ExpertIntermediate int `yaml:"expert_intermediate,omitempty" json:"expert_intermediate,omitempty"`
	// SharedIntermediate is the width of the MLP every token of an MoE layer
	// passes through beside its routed experts (all shared experts
	// together); 0 = none.
	SharedIntermediate int `yaml:"shared_intermediate,omitempty" json:"shared_intermediate,omitempty"`
	// MoELayers is how many of the layers have experts; 0 = all of them
	// (with experts > 0). The others have a dense MLP of width intermediate.
	MoELayers int `yaml:"moe_layers,omitempty" json:"moe_layers,omitempty"`
	// WeightDType is the precision the checkpoint stores its layer weights
	// in (a quantized config.json's quantization_config): fp8, int8 or
	// int4; "" = hardware.dtype. hardware.weight_dtype overrides it.
	WeightDType string `yaml:"weight_dtype,omitempty" json:"weight_dtype,omitempty"`
}

// gpuPresets are vendor datasheet figures (dense, no sparsity; bf16 with
// fp32 accumulation; the link's bandwidth in one direction). The
// all-reduce latency is NCCL's cost model's base latency of a ring
// all-reduce in its low-latency protocol (src/graph/tuning.cc, baseLat
// Ring/LL: 6.6 µs), the same for every link; no datasheet gives one.
var gpuPresets = map[string]GPUSpec{
	// NVIDIA H100 Tensor Core GPU datasheet, SXM5: 989.5 TFLOP/s bf16,
	// 3.35 TB/s, 80 GB, NVLink 900 GB/s.
	"h100": {PeakTFLOPS: 989.5, MemBWGBs: 3350, MemGB: 80, LinkBWGBs: 450, FP8Supported: true, LinkLatencyUs: ncclLatencyUs, HostBWGBs: pcie5GBs},
	// the same datasheet, PCIe: 1,513 TFLOP/s bf16 with sparsity (756.5
	// dense), 2 TB/s, 80 GB, PCIe Gen5 x16 128 GB/s (two GPUs may pair over
	// an NVLink bridge; TP over more crosses PCIe).
	"h100-pcie": {PeakTFLOPS: 756.5, MemBWGBs: 2000, MemGB: 80, LinkBWGBs: 64, FP8Supported: true, LinkLatencyUs: ncclLatencyUs, HostBWGBs: pcie5GBs},
	// NVIDIA H200 Tensor Core GPU datasheet, SXM: 989.5 TFLOP/s, 4.8 TB/s,
	// 141 GB, NVLink 900 GB/s.
	"h200": {PeakTFLOPS: 989.5, MemBWGBs: 4800, MemGB: 141, LinkBWGBs: 450, FP8Supported: true, LinkLatencyUs: ncclLatencyUs, HostBWGBs: pcie5GBs},
	// NVIDIA HGX B200 datasheet, per GPU: 2.25 PFLOP/s bf16, 8 TB/s,
	// 180 GB, NVLink 5 1.8 TB/s.
	"b200": {PeakTFLOPS: 2250, MemBWGBs: 8000, MemGB: 180, LinkBWGBs: 900, FP8Supported: true, LinkLatencyUs: ncclLatencyUs, HostBWGBs: pcie5GBs},
	// NVIDIA GB200 NVL72 datasheet, per GPU: 2.5 PFLOP/s bf16, 8 TB/s,
	// 186 GB, NVLink 5 1.8 TB/s.
	"gb200": {PeakTFLOPS: 2500, MemBWGBs: 8000, MemGB: 186, LinkBWGBs: 900, FP8Supported: true, LinkLatencyUs: ncclLatencyUs, HostBWGBs: c2cGBs},
	// NVIDIA A100 Tensor Core GPU datasheet, 80 GB SXM: 312 TFLOP/s bf16,
	// 2,039 GB/s, NVLink 600 GB/s.
	"a100": {PeakTFLOPS: 312, MemBWGBs: 2039, MemGB: 80, LinkBWGBs: 300, LinkLatencyUs: ncclLatencyUs, HostBWGBs: pcie4GBs},
	// the same datasheet, 40 GB SXM: 312 TFLOP/s, 1,555 GB/s, NVLink 600 GB/s.
	"a100-40gb": {PeakTFLOPS: 312, MemBWGBs: 1555, MemGB: 40, LinkBWGBs: 300, LinkLatencyUs: ncclLatencyUs, HostBWGBs: pcie4GBs},
	// NVIDIA L40S datasheet: 362.05 TFLOP/s bf16, 864 GB/s, 48 GB, PCIe
	// Gen4 x16 64 GB/s.
	"l40s": {PeakTFLOPS: 362, MemBWGBs: 864, MemGB: 48, LinkBWGBs: 32, FP8Supported: true, LinkLatencyUs: ncclLatencyUs, HostBWGBs: pcie4GBs},
	// NVIDIA RTX 6000 Ada Generation datasheet: 364.2 TFLOP/s, 960 GB/s,
	// 48 GB, PCIe Gen4 x16.
	"rtx-6000-ada": {PeakTFLOPS: 364, MemBWGBs: 960, MemGB: 48, LinkBWGBs: 32, FP8Supported: true, LinkLatencyUs: ncclLatencyUs, HostBWGBs: pcie4GBs},
	// NVIDIA Ada GPU architecture whitepaper, GeForce RTX 4090: 165.2
	// TFLOP/s bf16 with fp32 accumulation, 1,008 GB/s, 24 GB, PCIe Gen4 x16.
	"rtx-4090": {PeakTFLOPS: 165.2, MemBWGBs: 1008, MemGB: 24, LinkBWGBs: 32, FP8Supported: true, LinkLatencyUs: ncclLatencyUs, HostBWGBs: pcie4GBs},
	// NVIDIA RTX PRO 6000 Blackwell datasheet: 4,000 AI TOPS (fp4 with
	// sparsity: 500 TFLOP/s bf16 dense), 1,792 GB/s GDDR7, 96 GB, PCIe
	// Gen5 x16.
	"rtx-pro-6000": {PeakTFLOPS: 500, MemBWGBs: 1792, MemGB: 96, LinkBWGBs: 64, FP8Supported: true, LinkLatencyUs: ncclLatencyUs, HostBWGBs: pcie5GBs},
}

// ncclLatencyUs is the GPU presets' all-reduce latency (see gpuPresets).
const ncclLatencyUs = 6.6

// The presets' host links, one direction of an x16 slot as the PCI-SIG
// specifications rate it (Gen5 32 GT/s per lane, Gen4 16 GT/s: 128 and
// 64 GB/s both directions together), and GB200's NVLink-C2C to its Grace
// CPU (900 GB/s both directions, the GB200 NVL72 datasheet).
const (
	pcie5GBs = 64
	pcie4GBs = 32
	c2cGBs   = 450
)

// gpuAliases maps other spellings to preset names.
var gpuAliases = map[string]string{
	"h100_sxm": "h100", "h100-sxm": "h100", "h200_sxm": "h200", "h200-sxm": "h200",
	"b200_sxm": "b200", "gb200_sxm": "gb200", "a100_sxm": "a100", "a100-80gb": "a100",
	"rtx6000ada": "rtx-6000-ada", "rtx_6000_ada": "rtx-6000-ada",
	"h100_pcie": "h100-pcie", "a100_80gb": "a100", "a100-80gb-sxm": "a100", "a100-sxm": "a100",
	"a100_40gb": "a100-40gb", "a100-40gb-sxm": "a100-40gb", "rtx4090": "rtx-4090", "rtx_4090": "rtx-4090",
	"rtx-pro-6000-blackwell": "rtx-pro-6000", "rtx_pro_6000": "rtx-pro-6000", "rtxpro6000": "rtx-pro-6000",
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
	// Mixtures of experts (testdata/models has their config.json files).
	"mixtral-8x7b": {Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, Intermediate: 14336, Vocab: 32000,
		Experts: 8, ExpertsPerToken: 2, ExpertIntermediate: 14336},
	"mixtral-8x22b": {Layers: 56, Hidden: 6144, Heads: 48, KVHeads: 8, Intermediate: 16384, Vocab: 32000,
		Experts: 8, ExpertsPerToken: 2, ExpertIntermediate: 16384},
	"llama-4-scout-17b-16e": {Layers: 48, Hidden: 5120, Heads: 40, KVHeads: 8, HeadDim: 128, Intermediate: 8192, Vocab: 202048,
		Experts: 16, ExpertsPerToken: 1, ExpertIntermediate: 8192, SharedIntermediate: 8192},
	"qwen3-30b-a3b": {Layers: 48, Hidden: 2048, Heads: 32, KVHeads: 4, HeadDim: 128, Intermediate: 6144, Vocab: 151936,
		Experts: 128, ExpertsPerToken: 8, ExpertIntermediate: 768},
	// The random-weight llama GGUFs of `simbench tiny-model` (F16): the
	// default one and real-engine.md's slower "medium" one.
	"simbench-tiny":   {Layers: 4, Hidden: 512, Heads: 8, KVHeads: 4, Intermediate: 1536, Vocab: 4096},
	"simbench-medium": {Layers: 8, Hidden: 1024, Heads: 16, KVHeads: 4, Intermediate: 2816, Vocab: 8192},
}

// dtypeBytes is the storage size of one activation or KV element
// (hardware.dtype, kv_cache_dtype).
var dtypeBytes = map[string]float64{"bf16": 2, "fp16": 2, "fp8": 1, "fp32": 4}

// weightDTypeBytes is the storage size of one layer weight
// (hardware.weight_dtype): 16- and 8-bit formats with per-tensor or
// per-channel scales (negligible), int4 with one fp16 scale per group of
// 128 weights (GPTQ's and AWQ's usual group size).
var weightDTypeBytes = map[string]float64{"bf16": 2, "fp16": 2, "fp8": 1, "int8": 1, "int4": 0.5 + 2.0/128, "fp32": 4}

// The values hardware.weight_dtype and kv_cache_dtype may take ("" is the
// default: hardware.dtype).
var (
	weightDTypes  = []string{"bf16", "fp16", "fp8", "int8", "int4"}
	kvCacheDTypes = []string{"auto", "bf16", "fp16", "fp8"}
)

// weightOnly is a weight-only quantization (W8A16, W4A16): integer weights
// multiplied at the activations' 16-bit rate after dequantization.
func weightOnly(weightDType string) bool { return weightDType == "int8" || weightDType == "int4" }

// weightDType is hardware.weight_dtype, else the checkpoint's (m's), else
// hardware.dtype.
func (h HardwareConfig) weightDType(m ModelSpec) string {
	return cmp.Or(h.WeightDType, m.WeightDType, h.DType)
}

// kvDType is hardware.kv_cache_dtype, else (and for auto) hardware.dtype.
func (h HardwareConfig) kvDType() string {
	if h.KVCacheDType == "" || h.KVCacheDType == "auto" {
		return h.DType
	}
	return h.KVCacheDType
}

// WeightMemBytes is the memory m's weights take: every layer weight (all
// experts) at the weight precision, the embeddings at hardware.dtype.
func (h HardwareConfig) WeightMemBytes(m ModelSpec) float64 {
	return m.allLayerParams()*weightDTypeBytes[h.weightDType(m)] + m.embedParams()*dtypeBytes[h.DType]
}

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

// attnParams is the attention projections' weights of one layer (Q and O,
// K and V).
func (m ModelSpec) attnParams() float64 {
	hd := float64(m.headDim())
	h := float64(m.Hidden)
	return h*float64(m.Heads)*hd*2 + h*float64(m.KVHeads)*hd*2
}

// mlpParams is one gated MLP's weights (gate, up and down) of width w.
func (m ModelSpec) mlpParams(w int) float64 { return 3 * float64(m.Hidden) * float64(w) }

// moeLayers is how many layers route tokens to experts (0: dense).
func (m ModelSpec) moeLayers() int {
	switch {
	case m.Experts == 0:
		return 0
	case m.MoELayers > 0:
		return m.MoELayers
	}
	return m.Layers
}

// expertParams is one routed expert's weights.
func (m ModelSpec) expertParams() float64 {
	return m.mlpParams(cmp.Or(m.ExpertIntermediate, m.Intermediate))
}

// staticLayerParams is the layer weights every token passes through:
// attention, the dense layers' MLPs and, in each MoE layer, the shared MLP
// and the router (hidden × experts). Norms are negligible.
func (m ModelSpec) staticLayerParams() float64 {
	moe := float64(m.moeLayers())
	dense := float64(m.Layers) - moe
	return float64(m.Layers)*m.attnParams() + dense*m.mlpParams(m.Intermediate) +
		moe*(m.mlpParams(m.SharedIntermediate)+float64(m.Hidden)*float64(m.Experts))
}

// activeLayerParams is the layer weights one token computes with: the
// static ones and its experts_per_token routed experts in every MoE layer.
func (m ModelSpec) activeLayerParams() float64 {
	return m.staticLayerParams() + float64(m.moeLayers())*float64(m.ExpertsPerToken)*m.expertParams()
}

// allLayerParams is every layer weight, all experts included.
func (m ModelSpec) allLayerParams() float64 {
	return m.staticLayerParams() + float64(m.moeLayers())*float64(m.Experts)*m.expertParams()
}

// embedParams is the embedding table and, untied, the LM head.
func (m ModelSpec) embedParams() float64 {
	embed := float64(m.Vocab) * float64(m.Hidden)
	if !m.TiedEmbed {
		embed *= 2
	}
	return embed
}

// Params is the total number of weights, every expert included.
func (m ModelSpec) Params() float64 {
	return m.allLayerParams() + m.embedParams()
}

// expertsTouched is how many distinct routed experts of one MoE layer a
// step of tokens tokens reads: E·(1 − (1 − k/E)^tokens) in expectation,
// assuming uniform routing (each token picks its k experts uniformly, so
// an expert escapes one token with probability 1 − k/E).
func (m ModelSpec) expertsTouched(tokens float64) float64 {
	if m.Experts == 0 {
		return 0
	}
	e := float64(m.Experts)
	return e * (1 - math.Pow(1-float64(m.ExpertsPerToken)/e, tokens))
}

// kvBytesPerToken is the KV-cache footprint of one token (K and V, all layers).
func (m ModelSpec) kvBytesPerToken(dtype float64) float64 {
	return 2 * float64(m.Layers) * float64(m.KVHeads) * float64(m.headDim()) * dtype
}

func (m ModelSpec) validate(key string) error {
	fields := []struct {
		name string
		v    int
	}{{"layers", m.Layers}, {"hidden", m.Hidden}, {"heads", m.Heads}, {"kv_heads", m.KVHeads}, {"vocab", m.Vocab}}
	for _, f := range fields {
		if f.v <= 0 {
			return fmt.Errorf("%s.%s: must be > 0, got %d", key, f.name, f.v)
		}
	}
	// intermediate is every dense layer's MLP width and, without
	// expert_intermediate, each expert's.
	if m.Intermediate <= 0 && (m.moeLayers() < m.Layers || m.ExpertIntermediate == 0) {
		return fmt.Errorf("%s.intermediate: must be > 0, got %d", key, m.Intermediate)
	}
	if m.HeadDim < 0 {
		return fmt.Errorf("%s.head_dim: must be >= 0, got %d", key, m.HeadDim)
	}
	if m.Heads%m.KVHeads != 0 {
		return fmt.Errorf("%s.kv_heads: %d does not divide heads %d", key, m.KVHeads, m.Heads)
	}
	return FirstErr(m.validateMoE(key), OptionalOneOf(key+".weight_dtype", m.WeightDType, weightDTypes...))
}

// validateMoE checks the mixture-of-experts fields: all zero (dense), or
// experts with 1 <= experts_per_token <= experts.
func (m ModelSpec) validateMoE(key string) error {
	if m.Experts == 0 {
		if m.ExpertsPerToken != 0 || m.ExpertIntermediate != 0 || m.SharedIntermediate != 0 || m.MoELayers != 0 {
			return fmt.Errorf("%s.experts: 0 (a dense model), but experts_per_token, expert_intermediate, shared_intermediate or moe_layers is set", key)
		}
		return nil
	}
	return FirstErr(InRange(key+".experts", m.Experts, 1, 1<<16),
		InRange(key+".experts_per_token", m.ExpertsPerToken, 1, m.Experts),
		NonNegative(key+".expert_intermediate", m.ExpertIntermediate),
		NonNegative(key+".shared_intermediate", m.SharedIntermediate),
		InRange(key+".moe_layers", m.MoELayers, 0, m.Layers))
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
	return FirstErr(FiniteIn(key+".link_latency_us", g.LinkLatencyUs, 0, 1e6), FiniteIn(key+".host_bw_gbs", g.HostBWGBs, 0, 1e5))
}

// LayerWeightBytes is the memory m's layer weights (all experts) take at
// the weight precision, without the embeddings.
func (h HardwareConfig) LayerWeightBytes(m ModelSpec) float64 {
	return m.allLayerParams() * weightDTypeBytes[h.weightDType(m)]
}

// KVBytesPerToken is the KV-cache footprint of one token of m (K and V,
// all layers) at h's KV precision.
func (h HardwareConfig) KVBytesPerToken(m ModelSpec) float64 {
	return m.kvBytesPerToken(dtypeBytes[h.kvDType()])
}

// CanonicalGPU is the preset a GPU name stands for: lower-cased, its
// alias resolved.
func CanonicalGPU(name string) string {
	n := strings.ToLower(name)
	if a, ok := gpuAliases[n]; ok {
		return a
	}
	return n
}

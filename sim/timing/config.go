package timing

import (
	"cmp"
	"errors"
	"fmt"
)

// TimingConfig chooses how long one engine step takes.
type TimingConfig struct {
	Model   string  `yaml:"model" json:"model"`     // poly | linear | roofline | physics | table
	Speedup float64 `yaml:"speedup" json:"speedup"` // every step time is divided by it
	// Jitter is the coefficient of variation of a step's time: each step is
	// multiplied by a lognormal factor of mean 1 drawn from the worker's own
	// seeded stream (0 = deterministic step times). Real engines' token gaps
	// vary by a few percent; without it every synchronised request is alike.
	Jitter float64 `yaml:"jitter" json:"jitter"`
	// StallMs, StallCV and StallsPerStep are host stalls: every step waits
	// out a Poisson number (mean stalls_per_step) of stalls, each lasting a
	// lognormal time of mean stall_ms and coefficient of variation
	// stall_cv, within the step's modelled mean. A CPU engine on a shared
	// host shows them: its threads meet after every operation, and one
	// that lost its vCPU holds the rest until the host gives it back. The
	// step's mean is unchanged; its spread becomes what the token gaps show
	// (most steps clean, some a whole stall longer), and so do the tails of
	// per-request ITL and latency. 0 = none; calibrate fits them from the
	// token gaps.
	StallMs       float64 `yaml:"stall_ms,omitempty" json:"stall_ms,omitempty"`
	StallCV       float64 `yaml:"stall_cv,omitempty" json:"stall_cv,omitempty"`
	StallsPerStep float64 `yaml:"stalls_per_step,omitempty" json:"stalls_per_step,omitempty"`
	// DriftCV and DriftPeriodMs are the worker's slow drift of speed: every
	// step is multiplied by a lognormal factor of mean 1 and coefficient of
	// variation drift_cv, the same for every step of a period of
	// drift_period_ms of the run's clock and drawn anew for the next. A
	// device shared with other work shows it: whole requests run a few
	// percent slower or faster, a spread of per-request ITL and latency
	// that step jitter, averaged over a request's tokens, cannot make.
	// 0 = none; calibrate fits them from the real runs' per-request ITL.
	DriftCV       float64        `yaml:"drift_cv,omitempty" json:"drift_cv,omitempty"`
	DriftPeriodMs float64        `yaml:"drift_period_ms,omitempty" json:"drift_period_ms,omitempty"`
	Poly          PolyConfig     `yaml:"poly" json:"poly"`
	Linear        LinearConfig   `yaml:"linear" json:"linear"`
	Roofline      RooflineConfig `yaml:"roofline" json:"roofline"`
	Physics       PhysicsConfig  `yaml:"physics" json:"physics"`
	Table         TableConfig    `yaml:"table" json:"table"`
}

// DefaultTimingConfig is DynoSim's polynomial (timing.model poly) with
// every other model's values configured beside it: the roofline's and the
// physics model's hand-set ones (see HandSetPrior). sim's DefaultConfig
// applies the GPU prior over it.
func DefaultTimingConfig() TimingConfig {
	return TimingConfig{
		Model: "poly", Speedup: 1,
		Poly: PolyConfig{Prefill: []float64{16.50142, 1.518344e-02, 4.209989e-07},
			Decode: []float64{5.74, 54.01, -25.74}, DecodeFloorMs: 1},
		Roofline: RooflineConfig{Efficiency: 0.6, StepOverheadMs: 1},
		Physics: PhysicsConfig{ComputeEfficiency: 0.5, MemoryEfficiency: 0.7, StepOverheadMs: 1,
			SeqOverheadMs: 0.02, Combine: "sum"},
	}
}

// PolyConfig is DynoSim's polynomial model: prefill_ms = p0 + p1·T + p2·T²
// over the step's new prefill tokens T, decode_ms = max(floor, d0 + d1·u +
// d2·u²) over KV utilisation u; a step with both pays both.
type PolyConfig struct {
	Prefill       []float64 `yaml:"prefill" json:"prefill"` // p0 (ms), p1 (ms/token), p2 (ms/token²)
	Decode        []float64 `yaml:"decode" json:"decode"`   // d0, d1, d2 (ms)
	DecodeFloorMs float64   `yaml:"decode_floor_ms" json:"decode_floor_ms"`
}

// LinearConfig is step_ms = base + prefill_token·P + decode_seq·D +
// context_token·C, with P the prefill tokens computed in the step, D the
// decoding sequences and C the context tokens whose KV the step reads.
type LinearConfig struct {
	BaseMs         float64 `yaml:"base_ms" json:"base_ms"`
	PrefillTokenMs float64 `yaml:"prefill_token_ms" json:"prefill_token_ms"`
	DecodeSeqMs    float64 `yaml:"decode_seq_ms" json:"decode_seq_ms"`
	ContextTokenMs float64 `yaml:"context_token_ms" json:"context_token_ms"`
}

// RooflineConfig tunes the roofline model built from hardware.
type RooflineConfig struct {
	Efficiency     float64 `yaml:"efficiency" json:"efficiency"`             // achieved fraction of peak FLOP/s and bandwidth
	StepOverheadMs float64 `yaml:"step_overhead_ms" json:"step_overhead_ms"` // fixed CPU/launch cost per step
}

// PhysicsConfig is the physics-structured step time that calibrate fits:
//
//	step_ms = combine(compute_ms/compute_efficiency + attention_ms/attention_efficiency,
//	                  weights_ms/memory_efficiency + experts_ms/expert_efficiency + kv_ms/kv_efficiency)
//	        + step_overhead_ms + layer_overhead_ms·layers + seq_overhead_ms·sequences
//	        + multi_token_overhead_ms  (a step of two or more tokens)
//	        + prefill_overhead_ms      (a step that computes a prompt chunk)
//
// compute_ms and the memory times are the step's FLOPs and bytes at the
// device's peaks (see Physics), from hardware.model and hardware.cpu or
// .gpu; the sequences are those with prompt tokens or a decode in the step.
// combine kernels joins them per kind of kernel instead:
//
//	max(products_ms/compute_efficiency, weights_ms/memory_efficiency)
//	+ max(attention_ms/attention_efficiency, kv_ms/kv_efficiency)
//	+ all_reduce_ms/memory_efficiency
//
// (each kernel overlaps its own arithmetic with its own reads; the step
// runs them one after another), where sum charges a decode step's products
// on top of the weights' reads they hide under. combine overlap, the GPU
// priors', is sum but for the prompt tokens' products, which overlap the
// weights' reads:
//
//	decode_products_ms/compute_efficiency
//	+ max(prompt_products_ms/prefill_efficiency, weights_ms/memory_efficiency)
//	+ attention_ms/attention_efficiency + kv_ms/kv_efficiency + all_reduce_ms/memory_efficiency
//
// (a chunk of a few dozen prompt tokens beside the decodes hides under the
// weights' reads, a long prompt runs at what its GEMMs reach; the decodes'
// products still add one token's FLOPs per sequence, the per-sequence cost
// that grows with the model which the public runs show).
type PhysicsConfig struct {
	ComputeEfficiency float64 `yaml:"compute_efficiency" json:"compute_efficiency"` // achieved fraction of peak FLOP/s
	MemoryEfficiency  float64 `yaml:"memory_efficiency" json:"memory_efficiency"`   // achieved fraction of peak bandwidth
	// AttentionEfficiency is the achieved fraction of peak FLOP/s on the
	// attention FLOPs (QKᵀ and AV over each token's context); 0 takes
	// compute_efficiency. A CPU engine's attention (a vector kernel per
	// query row) reaches a fraction of what its matrix multiplications do,
	// so a long prompt's prefill grows quadratically faster than one
	// efficiency for both predicts.
	AttentionEfficiency float64 `yaml:"attention_efficiency,omitempty" json:"attention_efficiency,omitempty"`
	// KVEfficiency is the achieved fraction of peak bandwidth on the KV
	// cache's traffic (each token's context read, the step's tokens
	// written); 0 takes memory_efficiency, which then prices the weights
	// alone. The weights stream once per step whatever its shape, so the
	// token gaps cannot tell their time from step_overhead_ms; the KV
	// traffic grows with every sequence's context, which the gaps see. One
	// efficiency for both made the context slope set the weights' time: on
	// the CPU engine that put more into every step than a decode at
	// concurrency 1 takes.
	KVEfficiency float64 `yaml:"kv_efficiency,omitempty" json:"kv_efficiency,omitempty"`
	// PrefillEfficiency is the achieved fraction of peak FLOP/s on the
	// prompt tokens' matrix products (their share of the step's FLOPs
	// other than attention); 0 takes compute_efficiency. A decode step's
	// products are skinny (one row per sequence) and hide under the
	// weights' reads, which compute_efficiency, fitted on decode-heavy
	// runs, absorbs; a long prompt's are large GEMMs that run at what the
	// GEMM kernels reach, and nothing hides them.
	PrefillEfficiency float64 `yaml:"prefill_efficiency,omitempty" json:"prefill_efficiency,omitempty"`
	// ExpertEfficiency is the achieved fraction of peak bandwidth on a
	// mixture-of-experts model's routed experts' weights; 0 takes
	// memory_efficiency. A dense layer's weights stream through one GEMM
	// per projection; the experts' go through a grouped MoE kernel that
	// gives each expert the few tokens routed to it, and reaches less of
	// the bandwidth.
	ExpertEfficiency float64 `yaml:"expert_efficiency,omitempty" json:"expert_efficiency,omitempty"`
	StepOverheadMs   float64 `yaml:"step_overhead_ms" json:"step_overhead_ms"` // fixed cost per step (launch, scheduling)
	// LayerOverheadMs is added to every step once per model layer: the
	// fixed latency of a layer's dozen small kernels (norms, rotary, the
	// attention kernel's set-up, residual adds, the router of a
	// mixture-of-experts layer), which a decode step of a few sequences
	// waits for whatever the GPU's bandwidth. Folded into the bandwidth
	// efficiency instead, it prices a model with many layers for its
	// weights too fast, and every model on a GPU with more bandwidth
	// than the one it was fitted on: the bytes' time shrinks with the
	// bandwidth, the latency does not.
	LayerOverheadMs float64 `yaml:"layer_overhead_ms,omitempty" json:"layer_overhead_ms,omitempty"`
	SeqOverheadMs   float64 `yaml:"seq_overhead_ms" json:"seq_overhead_ms"` // per sequence in the step (sampling, detokenising)
	// MultiTokenOverheadMs is added to every step that computes two or
	// more tokens. ggml's CPU backend (llama.cpp, Ollama) runs a one-token
	// step's matrix products as vector dot products and hands two or more
	// tokens to llamafile's tiled GEMM (its sgemm declines n < 2), a
	// different kernel with its own cost. Timed around llama_decode in
	// Ollama's runner on a 2-vCPU VM (modes): one decode 2.25 ms, two 3.5,
	// four 5.0; a cost per sequence that gives two 3.5 gives four 6.0.
	MultiTokenOverheadMs float64 `yaml:"multi_token_overhead_ms,omitempty" json:"multi_token_overhead_ms,omitempty"`
	// PrefillOverheadMs is added to every step that computes a prompt
	// chunk. A GPU serving engine replays one captured CUDA graph for a
	// step of decodes alone, while a step with a prompt runs its attention
	// eagerly between graph pieces (vLLM V1's piecewise graphs; SGLang
	// captures decodes only): more kernel launches, a fixed cost that on a
	// small model is not small beside the step.
	PrefillOverheadMs float64 `yaml:"prefill_overhead_ms,omitempty" json:"prefill_overhead_ms,omitempty"`
	Combine           string  `yaml:"combine" json:"combine"` // sum | max | smooth | kernels | overlap
}

// TableConfig names a CSV of measured step times (see LoadTable).
type TableConfig struct {
	File string `yaml:"file" json:"file"`
}

// HardwareConfig describes the model and GPUs of one worker. It sizes the KV
// cache when engine.num_gpu_blocks is 0 and drives the roofline model.
type HardwareConfig struct {
	GPU            string     `yaml:"gpu" json:"gpu"`                     // preset name or "custom"
	CPU            string     `yaml:"cpu,omitempty" json:"cpu,omitempty"` // preset name or "custom": a CPU engine (gpu is then ignored)
	Model          string     `yaml:"model" json:"model"`                 // preset name or "custom"
	TensorParallel int        `yaml:"tensor_parallel" json:"tensor_parallel"`
	DType          string     `yaml:"dtype" json:"dtype"` // bf16 | fp16 | fp8 | fp32 (activations; weights and KV unless set apart)
	CustomGPU      *GPUSpec   `yaml:"custom_gpu,omitempty" json:"custom_gpu,omitempty"`
	CustomModel    *ModelSpec `yaml:"custom_model,omitempty" json:"custom_model,omitempty"`
	CustomCPU      *CPUSpec   `yaml:"custom_cpu,omitempty" json:"custom_cpu,omitempty"`
	// ModelConfig is a Hugging Face config.json (see ModelFromHFConfig):
	// when set, it is the model and hardware.model only names it (a
	// document or --model-config that gives no name leaves it empty, not
	// the default preset's). A relative path is opened from the working
	// directory, as timing.table.file is.
	ModelConfig string `yaml:"model_config,omitempty" json:"model_config,omitempty"`
	// WeightDType is the layer weights' precision: bf16 | fp16 | fp8 |
	// int8 | int4; "" = the model's (a quantized config.json's
	// quantization_config), else dtype. fp8 weights compute at the fp8 rate where
	// the GPU has one; int8 and int4 are weight-only (W8A16, W4A16): fewer
	// bytes, the 16-bit rate and a dequantization cost.
	WeightDType string `yaml:"weight_dtype,omitempty" json:"weight_dtype,omitempty"`
	// KVCacheDType is the KV cache's precision: auto | bf16 | fp16 | fp8;
	// "" and auto = dtype.
	KVCacheDType string `yaml:"kv_cache_dtype,omitempty" json:"kv_cache_dtype,omitempty"`
}

// DefaultHardwareConfig is one H100 running Llama-3.1-8B in bf16.
func DefaultHardwareConfig() HardwareConfig {
	return HardwareConfig{GPU: "h100", Model: "llama-3.1-8b", TensorParallel: 1, DType: "bf16"}
}

func (h HardwareConfig) gpu() (GPUSpec, error) {
	if h.GPU == "custom" {
		if h.CustomGPU == nil {
			return GPUSpec{}, errors.New("hardware.custom_gpu: required with hardware.gpu custom")
		}
		return *h.CustomGPU, h.CustomGPU.validate("hardware.custom_gpu")
	}
	g, err := lookupGPU(h.GPU)
	if err != nil {
		return g, fmt.Errorf("hardware.gpu: %w", err)
	}
	return g, nil
}

// ResolveModel is the model h names: hardware.model_config, custom_model
// or a preset (hardware.model).
func (h HardwareConfig) ResolveModel() (ModelSpec, error) {
	if h.ModelConfig != "" {
		if h.Model == "custom" || h.CustomModel != nil {
			return ModelSpec{}, errors.New("hardware.model_config: the model is custom_model's; set one of them")
		}
		m, err := readHFConfig(h.ModelConfig, h.WeightDType == "")
		if err != nil {
			return m, fmt.Errorf("hardware.model_config: %w", err)
		}
		return m, nil
	}
	if h.Model == "custom" {
		if h.CustomModel == nil {
			return ModelSpec{}, errors.New("hardware.custom_model: required with hardware.model custom")
		}
		return *h.CustomModel, h.CustomModel.validate("hardware.custom_model")
	}
	m, err := lookupModel(h.Model)
	if err != nil {
		return m, fmt.Errorf("hardware.model: %w", err)
	}
	return m, nil
}

// ModelName names the model in messages: hardware.model_config's path
// when set, else hardware.model.
func (h HardwareConfig) ModelName() string { return cmp.Or(h.ModelConfig, h.Model) }

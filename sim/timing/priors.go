package timing

// GPUPrior is the timing a GPU engine gets before any calibration: the
// physics model's efficiencies and overheads and the frontend's request
// overhead, fitted once across the public GPU corpus (testdata/silicon) by
// `go test ./silicon -run TestWritePriors -write-priors` (see silicon.FitPrior). Its values
// are in gpupriors_gen.go, beside the leave-one-deployment-out folds that
// measure how well they predict a deployment they were not fitted on
// (docs/fidelity.md).
type GPUPrior struct {
	Physics           PhysicsConfig `json:"physics"`
	RequestOverheadMs float64       `json:"request_overhead_ms"`
}

// GPUFold is one fold of the fit's cross-validation: the prior fitted on
// every stage of the corpus but HeldOut's, a deployment (GPUPriorFolds) or
// a model (GPUPriorModelFolds).
type GPUFold struct {
	HeldOut string   `json:"held_out"`
	Prior   GPUPrior `json:"prior"`
}

// ApplyTiming sets t to the prior's physics model, its efficiencies and
// overheads (sim's ApplyPrior also sets the frontend's request overhead).
func (p GPUPrior) ApplyTiming(t *TimingConfig) {
	t.Model = "physics"
	t.Physics = p.Physics
}

// DefaultGPUPrior is the prior fitted on the whole corpus (vLLM on H100s:
// the corpus has no other engine, and SGLang gets the same).
func DefaultGPUPrior() GPUPrior { return gpuPrior }

// GPUPriorFolds are the leave-one-deployment-out folds of the fit, in
// deployment order.
func GPUPriorFolds() []GPUFold { return append([]GPUFold(nil), gpuPriorFolds...) }

// GPUPriorModelFolds are the leave-one-model-out folds of the fit, in
// model order: each held out every deployment of one model (its
// Hugging Face name), so it predicts a model the fit never saw.
func GPUPriorModelFolds() []GPUFold { return append([]GPUFold(nil), gpuPriorModelFolds...) }

// HandSetPrior is the physics timing's prior before the GPU fit: round
// efficiencies and overheads, no frontend overhead. CPU engines keep it
// (livecal's plan starts from it): the GPU corpus says nothing of them.
func HandSetPrior() GPUPrior {
	return GPUPrior{Physics: PhysicsConfig{ComputeEfficiency: 0.5, MemoryEfficiency: 0.7, StepOverheadMs: 1,
		SeqOverheadMs: 0.02, Combine: "sum"}}
}

// The GPU priors' structure, fixed before any data (the fit,
// silicon.FitPrior, keeps what its starts set and fits the rest): the
// overlap combine and the long prompts' kernel efficiencies. The corpus's
// prompts are short and mostly prefix-cached, so its runs cannot pin what
// a long prompt's products and attention reach; these are the kernels'
// published throughput on an H100, as fractions of the dense peak:
//   - GPUPrefillEfficiency: large BF16 GEMMs (cuBLAS, CUTLASS) reach about
//     0.7–0.8 of it; a prompt chunk of at most max_num_batched_tokens rows
//     is at the low end.
//   - GPUAttentionEfficiency: FlashAttention-3's causal forward pass, which
//     vLLM and SGLang run on Hopper, reaches about 0.5–0.75 of it from 1k
//     to 16k tokens (Shah et al. 2024, "FlashAttention-3", its benchmarks
//     on an H100 SXM5).
//
// Under sum, a chunk's products add to the weights' reads they overlap,
// which priced the corpus's mixed steps too slow; the fit answered with a
// compute efficiency of 1 for every product, a long prompt's too, and
// with these efficiencies set apart (0.6 and 0.5, refitted under sum)
// every leave-one-deployment-out median got worse. Under overlap a short
// chunk hides under the weights' reads and a long one runs at what its
// kernels reach.
const (
	GPUPriorCombine        = "overlap"
	GPUPrefillEfficiency   = 0.7
	GPUAttentionEfficiency = 0.6
)

// WithGPUStructure is p with the GPU priors' combine mode and kernel
// efficiencies (GPUPriorCombine and the rest): a start of their fit.
func (p GPUPrior) WithGPUStructure() GPUPrior {
	p.Physics.Combine = GPUPriorCombine
	p.Physics.PrefillEfficiency, p.Physics.AttentionEfficiency = GPUPrefillEfficiency, GPUAttentionEfficiency
	return p
}

// ShrinkScore is one strength of the fit's shrinkage towards the hand-set
// prior (silicon.Shrink) and how well its leave-one-model-out folds
// predicted their held-out models: the root mean square of the held-out
// stages' log errors on the fit's targets, Huber-scaled as the fit's are.
type ShrinkScore struct {
	Strength   float64 `json:"strength"`
	HeldOutRMS float64 `json:"held_out_rms"`
}

// GPUPriorShrink is the shrinkage strength the shipped priors were fitted
// with and the leave-one-model-out score of every strength tried (the
// chosen one has the lowest).
func GPUPriorShrink() (float64, []ShrinkScore) {
	return gpuPriorShrink, append([]ShrinkScore(nil), gpuPriorShrinkScores...)
}

// PriorCorpus is what the GPU priors' corpus ran on: the GPU presets and
// the engines of its stages. A GPU or engine outside it is priced from
// its datasheet with efficiencies and overheads measured on others.
type PriorCorpus struct {
	GPUs    []string `json:"gpus"`
	Engines []string `json:"engines"`
}

// GPUPriorCorpus is the shipped priors' corpus.
func GPUPriorCorpus() PriorCorpus {
	return PriorCorpus{GPUs: append([]string(nil), gpuPriorCorpus.GPUs...), Engines: append([]string(nil), gpuPriorCorpus.Engines...)}
}

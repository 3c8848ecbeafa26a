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

package sim

import "strconv"

// GPUPrior is the timing a GPU engine gets before any calibration: the
// physics model's efficiencies and overheads and the frontend's request
// overhead, fitted once across the public GPU corpus (testdata/silicon) by
// `simbench fidelity --write-priors` (see silicon.FitPrior). Its values
// are in gpupriors_gen.go, beside the leave-one-deployment-out folds that
// measure how well they predict a deployment they were not fitted on
// (docs/fidelity.md).
type GPUPrior struct {
	Physics           PhysicsConfig `json:"physics"`
	RequestOverheadMs float64       `json:"request_overhead_ms"`
}

// GPUFold is one leave-one-deployment-out fold: the prior fitted on every
// deployment of the corpus but HeldOut.
type GPUFold struct {
	HeldOut string   `json:"held_out"`
	Prior   GPUPrior `json:"prior"`
}

// Apply sets c's timing to the prior: the physics model with its
// efficiencies and overheads, and the frontend's request overhead.
func (p GPUPrior) Apply(c *Config) {
	c.Timing.Model = "physics"
	c.Timing.Physics = p.Physics
	c.Frontend.RequestOverheadMs = p.RequestOverheadMs
}

// DefaultGPUPrior is the prior fitted on the whole corpus (vLLM on H100s:
// the corpus has no other engine, and SGLang gets the same).
func DefaultGPUPrior() GPUPrior { return gpuPrior }

// GPUPriorFolds are the leave-one-deployment-out folds of the fit, in
// deployment order.
func GPUPriorFolds() []GPUFold { return append([]GPUFold(nil), gpuPriorFolds...) }

// HardwareWarnings says when the configuration names hardware its timing
// ignores: poly, linear and table step times are the same on any GPU,
// model and tensor-parallel degree, so `--gpu a100 --model llama-3.1-70b
// --tp 4` would quietly time an H100's Llama-3.1-8B. A calibrated config
// (written by calibrate, fitted on its own hardware) gets none.
func (c Config) HardwareWarnings() []string {
	switch c.Timing.Model {
	case "poly", "linear", "table":
	default:
		return nil
	}
	if c.Calibration != nil {
		return nil
	}
	dev := "gpu " + c.Hardware.GPU
	if c.Hardware.CPU != "" {
		dev = "cpu " + c.Hardware.CPU
	}
	return []string{"timing.model " + c.Timing.Model + " ignores the hardware (" + dev + ", model " + c.Hardware.Model +
		", tensor_parallel " + strconv.Itoa(c.Hardware.TensorParallel) + "): its step times are the same on any device and model; " +
		"use timing.model physics (the default, with priors fitted on public GPU runs) or calibrate"}
}

// HandSetPrior is the physics timing's prior before the GPU fit: round
// efficiencies and overheads, no frontend overhead. CPU engines keep it
// (livecal's plan starts from it): the GPU corpus says nothing of them.
func HandSetPrior() GPUPrior {
	return GPUPrior{Physics: PhysicsConfig{ComputeEfficiency: 0.5, MemoryEfficiency: 0.7, StepOverheadMs: 1,
		SeqOverheadMs: 0.02, Combine: "sum"}}
}

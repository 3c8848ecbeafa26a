package sim

import (
	"fmt"
	"io"

	"github.com/simbench/simbench/sim/timing"
)

// The step-time models and the hardware they price live in package
// timing; these names keep sim's callers and configuration as they were.
type (
	StepShape      = timing.StepShape
	KVView         = timing.KVView
	TimingConfig   = timing.TimingConfig
	PolyConfig     = timing.PolyConfig
	LinearConfig   = timing.LinearConfig
	RooflineConfig = timing.RooflineConfig
	PhysicsConfig  = timing.PhysicsConfig
	TableConfig    = timing.TableConfig
	HardwareConfig = timing.HardwareConfig
	GPUSpec        = timing.GPUSpec
	CPUSpec        = timing.CPUSpec
	ModelSpec      = timing.ModelSpec
	Physics        = timing.Physics
	Work           = timing.Work
	Table          = timing.Table
	GPUPrior       = timing.GPUPrior
	GPUFold        = timing.GPUFold
	ShrinkScore    = timing.ShrinkScore
	clock          = timing.Clock
)

// TimingModels returns the names timing.model takes.
func TimingModels() []string { return timing.TimingModels() }

// GPUPresets returns the names of the GPU presets, sorted.
func GPUPresets() []string { return timing.GPUPresets() }

// CPUPresets returns the names of the CPU presets, sorted.
func CPUPresets() []string { return timing.CPUPresets() }

// ModelPresets returns the names of the model presets, sorted.
func ModelPresets() []string { return timing.ModelPresets() }

// NewPhysics builds the step cost model of h (see timing.NewPhysics).
func NewPhysics(h HardwareConfig) (*Physics, error) { return timing.NewPhysics(h) }

// LoadTable reads a step-time table from a CSV file (see timing.LoadTable).
func LoadTable(path string) (*Table, error) { return timing.LoadTable(path) }

// ReadTable reads a step-time table (see timing.ReadTable).
func ReadTable(r io.Reader) (*Table, error) { return timing.ReadTable(r) }

// LocalCPU describes the CPU this process runs on (see timing.LocalCPU).
func LocalCPU() CPUSpec { return timing.LocalCPU() }

// ModelFromHFConfig reads a Hugging Face config.json (see
// timing.ModelFromHFConfig).
func ModelFromHFConfig(path string) (ModelSpec, error) { return timing.ModelFromHFConfig(path) }

// ModelFromGGUF reads a dense transformer's shape from GGUF metadata (see
// timing.ModelFromGGUF).
func ModelFromGGUF(arch string, get func(key string) (float64, bool), vocab int) (ModelSpec, error) {
	return timing.ModelFromGGUF(arch, get, vocab)
}

// DefaultGPUPrior is the prior fitted on the whole corpus (see
// timing.DefaultGPUPrior).
func DefaultGPUPrior() GPUPrior { return timing.DefaultGPUPrior() }

// GPUPriorFolds are the leave-one-deployment-out folds of the fit.
func GPUPriorFolds() []GPUFold { return timing.GPUPriorFolds() }

// GPUPriorModelFolds are the leave-one-model-out folds of the fit.
func GPUPriorModelFolds() []GPUFold { return timing.GPUPriorModelFolds() }

// GPUPriorShrink is the shipped fit's shrinkage strength and the
// leave-one-model-out score of each strength tried (see
// timing.GPUPriorShrink).
func GPUPriorShrink() (float64, []ShrinkScore) { return timing.GPUPriorShrink() }

// HandSetPrior is the physics timing's prior before the GPU fit (see
// timing.HandSetPrior).
func HandSetPrior() GPUPrior { return timing.HandSetPrior() }

// EngineKVView is e's KV view.
func EngineKVView(e EngineConfig) KVView {
	if e.Type != "llamacpp" {
		return KVView{}
	}
	return KVView{Pad: 256, Cells: int64(e.LlamaCpp.CtxSize / max(e.LlamaCpp.Parallel, 1))}
}

// newTiming builds the configured timing model.
func newTiming(c *Config) (clock, error) {
	return timing.NewClock(c.Timing, c.Hardware, EngineKVView(c.Engine))
}

// ApplyPrior sets c's timing to the prior p: the physics model with its
// efficiencies and overheads, and the frontend's request overhead.
func ApplyPrior(p GPUPrior, c *Config) {
	p.ApplyTiming(&c.Timing)
	c.Frontend.RequestOverheadMs = p.RequestOverheadMs
}

// HardwareWarnings says when the configuration names hardware its timing
// ignores: poly, linear and table step times are the same on any GPU,
// model and tensor-parallel degree, so `--gpu a100 --model llama-3.1-70b
// --tp 4` would quietly time an H100's Llama-3.1-8B. A calibrated config
// (written by calibrate, fitted on its own hardware) gets none.
func (c Config) HardwareWarnings() []error {
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
	return []error{fmt.Errorf("timing.model %s ignores the hardware (%s, model %s, tensor_parallel %d): its step times are the same on any device and model; "+
		"use timing.model physics (the default, with priors fitted on public GPU runs) or calibrate",
		c.Timing.Model, dev, c.Hardware.Model, c.Hardware.TensorParallel)}
}

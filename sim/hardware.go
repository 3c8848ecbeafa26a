package sim

import (
	"fmt"
	"io"
	"slices"
	"strings"

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
	PriorCorpus    = timing.PriorCorpus
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

// GPUPriorCorpus is what the fit's corpus ran on (see
// timing.GPUPriorCorpus).
func GPUPriorCorpus() PriorCorpus { return timing.GPUPriorCorpus() }

// CanonicalGPU is a GPU preset's name with its alias resolved.
func CanonicalGPU(name string) string { return timing.CanonicalGPU(name) }

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

// PriorWarnings says when the configuration times a GPU or an engine the
// shipped GPU priors' corpus has none of with those priors (physics timing
// at their values, uncalibrated): its step times are then the datasheet's
// at efficiencies and overheads measured on other hardware and another
// engine, an extrapolation docs/fidelity.md does not measure. A
// disaggregated configuration is checked pool by pool.
func (c Config) PriorWarnings() []error {
	pools := []Config{c}
	if c.Disaggregated() {
		pools = []Config{c.PoolConfig(RolePrefill), c.PoolConfig(RoleDecode)}
	}
	corpus := GPUPriorCorpus()
	var outside []string
	for _, p := range pools {
		if p.Timing.Model != "physics" || p.Calibration != nil || p.Hardware.CPU != "" || p.Timing.Physics != DefaultGPUPrior().Physics {
			continue
		}
		if gpu := CanonicalGPU(p.Hardware.GPU); !slices.Contains(corpus.GPUs, gpu) {
			outside = append(outside, "gpu "+gpu)
		}
		if !slices.Contains(corpus.Engines, p.Engine.Type) {
			outside = append(outside, "engine "+p.Engine.Type)
		}
	}
	if len(outside) == 0 {
		return nil
	}
	slices.Sort(outside)
	outside = slices.Compact(outside)
	verb := "is"
	if len(outside) > 1 {
		verb = "are"
	}
	return []error{fmt.Errorf("timing.physics: the default GPU priors were fitted on %s runs on %s only (docs/fidelity.md); %s %s outside that corpus, "+
		"so the step times are extrapolated from the datasheet with efficiencies measured there: calibrate on a run of your own (simbench calibrate --real)",
		strings.Join(corpus.Engines, ", "), strings.Join(corpus.GPUs, ", "), strings.Join(outside, " and "), verb)}
}

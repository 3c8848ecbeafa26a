// Package livecal calibrates the simulator against a live server in one
// step: it learns what it can about the model from the server, chooses a
// short calibration plan (calibrate.Plan), runs it with the load generator
// (realrun), keeps the run directories, and fits on them (calibrate.Fit).
package livecal

import (
	"context"
	"fmt"
	"github.com/simbench/simbench/internal/warning"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/simbench/simbench/loadgen"
	"github.com/simbench/simbench/realrun"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/sim"
	"github.com/simbench/simbench/sim/calibrate"
	"github.com/simbench/simbench/traces"
)

// Options configure Calibrate.
type Options struct {
	// Base names the engine structure (type, slots, budgets) and, when
	// known, the hardware; what it leaves at the defaults is learnt from
	// the server where it can be.
	Base sim.Config
	// Config is the load generator's: the endpoint (URL, model, flags) and
	// progress. Its workload-specific settings are set per plan run.
	Config    loadgen.Config
	Artifacts string // the plan's run directories go under it
	Plan      calibrate.PlanOptions
	Basis     string // calibrate.Options.Basis
	Seeds     int    // calibrate.Options.Seeds
	MaxEvals  int    // calibrate.Options.MaxEvals
	FitNoise  bool   // calibrate.Options.FitNoise
	Log       io.Writer
	Quiet     bool
	// Run, when set, writes a plan run into dir instead of realrun on
	// Config's endpoint (a test's or a pipeline's fake target).
	Run func(ctx context.Context, dir string, spec traces.Spec) error
}

// Result is a live calibration.
type Result struct {
	Plan []calibrate.PlanRun
	Dirs []string
	Fit  *calibrate.Result
	// Notes say where the model and hardware came from.
	Notes []string
}

// Calibrate runs the plan against the server and fits the simulator.
func Calibrate(ctx context.Context, opts Options) (*Result, error) {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	base, notes := discover(ctx, opts)
	res := &Result{Plan: calibrate.Plan(base, opts.Plan), Notes: notes}
	if !opts.Quiet {
		for _, n := range notes {
			fmt.Fprintln(opts.Log, n)
		}
		calibrate.WritePlan(opts.Log, res.Plan)
	}
	targets := make([]calibrate.Target, 0, len(res.Plan))
	for _, pr := range res.Plan {
		dir, err := run(ctx, opts, pr)
		if err != nil {
			return nil, err
		}
		t, err := calibrate.LoadTarget(dir)
		if err != nil {
			return nil, err
		}
		res.Dirs, targets = append(res.Dirs, dir), append(targets, t)
	}
	fit, err := calibrate.Fit(ctx, targets, calibrate.Options{Base: base, Basis: opts.Basis, Seeds: opts.Seeds, MaxEvals: opts.MaxEvals,
		FitNoise: opts.FitNoise})
	if err != nil {
		return nil, err
	}
	res.Fit = fit
	return res, nil
}

// run sends one plan run and returns its directory.
func run(ctx context.Context, opts Options, pr calibrate.PlanRun) (string, error) {
	wl, err := traces.Synthesize(pr.Spec)
	if err != nil {
		return "", fmt.Errorf("calibration plan %s: %w", pr.Name, err)
	}
	dir := filepath.Join(opts.Artifacts, pr.Name)
	if !opts.Quiet {
		fmt.Fprintf(opts.Log, "calibration run %s → %s\n", pr.Name, dir)
	}
	var r *realrun.Result
	err = results.WriteOutput(dir, func(ws []error) { warning.Print(opts.Log, ws) }, results.KeepPartial, func(stage string) (err error) {
		if opts.Run != nil {
			return opts.Run(ctx, stage, specOf(pr.Spec))
		}
		r, err = realrun.WriteRun(ctx, stage, wl, realrun.Options{Config: opts.Config, Spec: specOf(pr.Spec),
			Log: opts.Log, Quiet: true})
		return err
	})
	if err != nil {
		return "", fmt.Errorf("calibration run %s: %w", pr.Name, err)
	}
	if r == nil {
		return dir, nil
	}
	if err := r.Check(0); err != nil {
		return "", fmt.Errorf("calibration run %s: %w", pr.Name, err)
	}
	return dir, nil
}

// showTimeout bounds the question about the model: a server that does not
// answer it is not asked again, and the plan runs without.
const showTimeout = 30 * time.Second

// discover fills in the model from the server (Ollama's /api/show) when the
// base config does not name one, and the device when the server runs on
// this machine's loopback and none is named: then it is this CPU.
func discover(ctx context.Context, opts Options) (sim.Config, []string) {
	base := opts.Base
	def := sim.DefaultConfig().Hardware
	var notes []string
	ollama, threads := false, 0
	if base.Hardware.Model == def.Model && base.Hardware.CustomModel == nil {
		info, ok, err := loadgen.FetchModelInfo(ctx, &http.Client{Timeout: showTimeout}, &opts.Config.Endpoint)
		switch {
		case err != nil:
			notes = append(notes, fmt.Sprintf("model: the server did not say (%v)", err))
		case !ok:
			notes = append(notes, "model: the server does not describe it (no /api/show): the plan's data pin the step costs")
		default:
			m, err := sim.ModelFromGGUF(info.Architecture, info.Number, 0)
			if err != nil {
				notes = append(notes, fmt.Sprintf("model: %v", err))
				break
			}
			base.Hardware.Model, base.Hardware.CustomModel = "custom", &m
			if base.Engine.Type == "llamacpp" && base.Engine.LlamaCpp.Batch == "" {
				// /api/show is Ollama's: its runner gives every slot n_batch.
				base.Engine.LlamaCpp.Batch = sim.LlamaCppBatchPerSlot
				base.Engine.LlamaCpp.ReuseLagSteps = 1
				notes = append(notes, "engine: Ollama's runner (n_batch per slot; a freed slot, or a request arriving mid-step, is taken one step late)")
				ollama = true
			}
			base.Hardware.DType = dtypeOf(info.Quantization)
			threads = info.NumThread
			notes = append(notes, fmt.Sprintf("model: %s from the server: %d layers, hidden %d, %d/%d heads, ff %d, vocab %d, %s",
				info.Architecture, m.Layers, m.Hidden, m.Heads, m.KVHeads, m.Intermediate, m.Vocab, info.Quantization))
		}
	}
	named := base.Hardware.CPU != "" || base.Hardware.GPU != def.GPU || base.Hardware.CustomGPU != nil
	if !named && base.Hardware.Model != def.Model && loopback(opts.Config.Endpoint.URL) {
		cpu := sim.LocalCPU()
		base.Hardware.CPU, base.Hardware.CustomCPU = "custom", &cpu
		if gp := sim.DefaultGPUPrior(); base.Timing.Physics == gp.Physics && base.Frontend.RequestOverheadMs == gp.RequestOverheadMs {
			sim.ApplyPrior(sim.HandSetPrior(), &base) // the GPU priors say nothing of a CPU engine
		}
		notes = append(notes, fmt.Sprintf("hardware: this machine's CPU (the server is on loopback): %d cores × %g FLOP/cycle × %.2f GHz",
			cpu.Cores, cpu.FLOPsPerCycle, cpu.ClockGHz))
		if threads > 0 && threads < cpu.Cores {
			cpu.Threads = threads
			notes = append(notes, fmt.Sprintf("hardware: the runner computes on %d of them (the model's num_thread)", threads))
		}
	}
	if ollama && base.Frontend.Concurrency == 0 {
		base, notes = ollamaFrontend(base, notes)
	}
	if ollama && base.Workers == 1 && !base.Disaggregated() {
		base.Frontend.HoldForSlot = true
		notes = append(notes, fmt.Sprintf("frontend: Ollama's server holds requests beyond its %d slots until one finishes (NUM_PARALLEL)",
			base.Engine.LlamaCpp.Parallel))
	}
	return base, notes
}

// ollamaFrontendTokenMs is Ollama's server work per prompt token (it
// tokenises each prompt twice, renders the template, and decodes the body
// twice): about 1 µs; a Go BPE tokeniser alone takes 0.08–0.18 µs a token
// on the e2e machine. Its size hardly matters; that a longer prompt takes
// longer to prepare does.
const ollamaFrontendTokenMs = 0.001

// ollamaFrontend is Ollama's server: its handlers prepare as many requests
// at once as the server has cores, a shorter prompt sooner, and hand each
// to the runner when done. A probe on the e2e engine: of 24 pairs of a
// 135- and a 915-token prompt sent at once the short one reached the
// runner first in 23, and of 12 bursts of three equal prompts the first
// started a step alone in 12. Without a CPU to count the cores on, the
// frontend stays unbounded.
func ollamaFrontend(base sim.Config, notes []string) (sim.Config, []string) {
	if base.Hardware.CPU == "" {
		return base, append(notes, "frontend: Ollama's server on an unknown CPU: unbounded (name hardware.cpu to bound it by its cores)")
	}
	cpu, err := base.Hardware.ResolveCPU() // validated: at least one core
	if err != nil {
		return base, append(notes, fmt.Sprintf("frontend: Ollama's server: no core count (%v): unbounded", err))
	}
	base.Frontend.Concurrency = cpu.Cores
	if base.Frontend.PromptTokenMs == 0 {
		base.Frontend.PromptTokenMs = ollamaFrontendTokenMs
	}
	return base, append(notes, fmt.Sprintf("frontend: Ollama's server (%d requests prepared at once, its cores; %g ms a prompt token)",
		cpu.Cores, base.Frontend.PromptTokenMs))
}

// dtypeOf maps a GGUF quantisation to the simulator's dtype by bytes per
// weight: F32, BF16, F16, and 8-bit or smaller as one byte.
func dtypeOf(q string) string {
	switch strings.ToUpper(q) {
	case "F32":
		return "fp32"
	case "BF16":
		return "bf16"
	case "F16", "":
		return "fp16"
	}
	return "fp8"
}

func loopback(raw string) bool {
	s := raw
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// specOf describes a synthetic plan run as the workload flags that make it,
// for the run's input_config.
func specOf(s traces.SynthSpec) traces.Spec {
	return traces.Spec{Concurrency: &s.Concurrency, RequestCount: &s.RequestCount, WarmupRequestCount: &s.WarmupCount,
		ISL: &s.ISL, ISLStddev: &s.ISLStddev, OSL: &s.OSL, OSLStddev: &s.OSLStddev, RandomSeed: &s.Seed}
}

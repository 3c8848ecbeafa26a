package validate

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/simbench/simbench/internal/usage"
	"github.com/simbench/simbench/internal/warning"
	"github.com/simbench/simbench/loadgen"
	"github.com/simbench/simbench/realrun"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/sim"
	"github.com/simbench/simbench/sim/calibrate"
	"github.com/simbench/simbench/sim/calibrate/livecal"
	"github.com/simbench/simbench/traces"
)

// Defaults of a silicon run, as simbench run's flags have them.
const (
	defaultRequestTimeout = 600 // seconds
	defaultGracePeriod    = 30  // seconds
	defaultVocabSize      = 32000
)

// runOne runs one arm into dir, its report into OUTPUT/logs. Repeated
// simulated runs get simulator seeds base, base+1, … by round (the warm-up
// round uses base), as `simbench sim --repeat` does.
func (v *validation) runOne(ctx context.Context, s scheduledRun, dir string) error {
	if s.Arm == armReal {
		if err := v.writeLog(v.logName(s), func(w io.Writer) error { return v.opts.Real.Run(ctx, dir, nil, w) }); err != nil {
			return fmt.Errorf("silicon run %s: %w", results.PublishedPath(dir), err)
		}
		return nil
	}
	var seed *int64
	if v.p.Repeat > 1 {
		base, err := v.simSeedBase()
		if err != nil {
			return err
		}
		base += int64(max(s.Round, 0))
		seed = &base
	}
	if err := v.writeLog(v.logName(s), func(w io.Writer) error { return v.opts.Sim.Run(ctx, dir, seed, w) }); err != nil {
		return fmt.Errorf("simulated run %s: %w", results.PublishedPath(dir), err)
	}
	return nil
}

// realRun is `simbench run` with the target's endpoint on the workload.
func (v *validation) realRun(ctx context.Context, dir string, log io.Writer) error {
	opts, maxErr, err := v.realOptions()
	if err != nil {
		return err
	}
	wl, err := v.buildWorkload(0)
	if err != nil {
		return err
	}
	if v.opts.Interrupt != nil {
		var stop func()
		ctx, stop = v.opts.Interrupt(ctx)
		defer stop()
	}
	res, err := realrun.WriteRun(ctx, dir, wl, opts)
	if err != nil {
		return err
	}
	if err := res.WriteText(log); err != nil {
		return err
	}
	return res.Check(maxErr)
}

// realOptions are the silicon run's options: the target section and the
// workload, with simbench run's defaults for what the pipeline leaves out.
func (v *validation) realOptions() (realrun.Options, float64, error) {
	ep, err := v.endpoint()
	if err != nil {
		return realrun.Options{}, 0, err
	}
	maxErr, err := realrun.ParseErrorRate(v.p.Target.MaxErrorRate)
	if err != nil {
		return realrun.Options{}, 0, err
	}
	grace := orFloat(v.p.Target.BenchmarkGracePeriod, defaultGracePeriod)
	if !finiteNonNegative(grace) {
		return realrun.Options{}, 0, usage.Errorf("--benchmark-duration and --benchmark-grace-period must be finite numbers >= 0")
	}
	cfg := loadgen.Config{Endpoint: ep, Grace: realrun.Seconds(grace), Spin: loadgen.DefaultSpin}
	if v.opts.RunProgress != nil && !v.opts.Quiet {
		cfg.Progress, cfg.ProgressEvery = v.opts.RunProgress()
	}
	opts := realrun.Options{Config: cfg, Spec: v.p.workload(), SLOs: v.p.slos, Log: v.opts.Log, Quiet: v.opts.Quiet,
		Warn: v.warn}
	return opts, maxErr, nil
}

// endpoint is the target as the load generator's endpoint.
func (v *validation) endpoint() (loadgen.Endpoint, error) {
	t := v.p.Target
	timeout := orFloat(t.RequestTimeoutSeconds, defaultRequestTimeout)
	if !finiteNonNegative(timeout) {
		return loadgen.Endpoint{}, usage.Errorf("--request-timeout-seconds must be a finite number >= 0")
	}
	key := t.apiKey()
	if key == "" {
		key = os.Getenv(realrun.APIKeyEnv) // as simbench run falls back to it
	}
	ep := loadgen.Endpoint{URL: t.URL, Path: t.Endpoint, Type: t.EndpointType, Model: t.Model, APIKey: key,
		Streaming: true, LegacyMaxTokens: t.UseLegacyMaxTokens, ServerTokenCount: t.UseServerTokenCount,
		PerChunkUsage: t.PerChunkUsage, Timeout: realrun.Seconds(timeout),
		Prompts: loadgen.Prompts{VocabSize: defaultVocabSize, BlockSize: traces.MooncakeBlockSize, Seed: v.p.Workload.Seed()}}
	if ep.Type == "" {
		ep.Type = loadgen.EndpointChat
	}
	extra, err := t.extraInputs()
	if err != nil {
		return ep, err
	}
	ep.Extra = extra
	if v.prompts == nil { // the tokenizer is loaded once for all runs
		if err := ep.LoadTokenizer(v.p.Resolve(t.Tokenizer)); err != nil {
			return ep, fmt.Errorf("target.tokenizer: %w", err)
		}
		v.prompts = &ep.Prompts
	}
	ep.Prompts = *v.prompts
	if err := ep.Validate(); err != nil {
		return ep, usage.Wrap(err)
	}
	return ep, nil
}

// simRun is `simbench sim --config OUTPUT/sim.yaml` on the workload; seed,
// when not nil, is the simulator's own seed (the workload's stays).
func (v *validation) simRun(dir string, seed *int64, log io.Writer) error {
	return v.simRunFrom(v.simConfigPath(), dir, seed, log)
}

// simRunFrom is simRun with the configuration file path.
func (v *validation) simRunFrom(path, dir string, seed *int64, log io.Writer) error {
	cfg, err := v.simConfigFrom(path, seed)
	if err != nil {
		return err
	}
	wl, err := v.buildWorkload(0)
	if err != nil {
		return err
	}
	input, err := sim.WorkloadInput(v.p.workload(), wl)
	if err != nil {
		return err
	}
	if err := traces.WriteWorkloadFile(dir, wl); err != nil {
		return err
	}
	opts := []sim.Option{sim.WithSLOs(v.p.slos)}
	if v.opts.SimProgress != nil && !v.opts.Quiet {
		opt, done := v.opts.SimProgress(len(wl.Requests))
		if opt != nil {
			opts = append(opts, opt)
			defer done()
		}
	}
	files, err := sim.WriteRun(context.Background(), dir, cfg, wl, input, opts...)
	if err != nil || v.opts.Quiet {
		return err
	}
	files.Dir = results.PublishedPath(dir)
	return files.WriteText(log, cfg)
}

// simConfig is OUTPUT/sim.yaml with the workload's random_seed and then
// seed as the simulator's seed, validated.
func (v *validation) simConfig(seed *int64) (sim.Config, error) {
	return v.simConfigFrom(v.simConfigPath(), seed)
}

// simConfigFrom is simConfig of the configuration file path.
func (v *validation) simConfigFrom(path string, seed *int64) (sim.Config, error) {
	cfg, err := sim.LoadConfig(path)
	if err != nil {
		return cfg, usage.Wrap(fmt.Errorf("--config %w", err))
	}
	if s := v.p.Workload.RandomSeed; s != nil {
		cfg.Seed = *s
	}
	if seed != nil {
		cfg.Seed = *seed
	}
	if err := cfg.Validate(); err != nil {
		return cfg, usage.Wrap(fmt.Errorf("configuration: %w", err))
	}
	return cfg, nil
}

// buildWorkload builds the workload section's workload; the trace's
// warnings go to the log.
func (v *validation) buildWorkload(fillSeconds float64) (*traces.Workload, error) {
	wl, warns, err := v.p.workload().Build(fillSeconds)
	v.warn(warning.Of(warns))
	return wl, err
}

// simConfigPath is OUTPUT/sim.yaml: the configuration every simulated run
// of the pipeline uses (a copy of sim.config, or the calibrated one).
func (v *validation) simConfigPath() string { return filepath.Join(v.out, "sim.yaml") }

// preflight checks the local inputs (the target's endpoint and tokenizer,
// sim.config, the workload and its trace) before the health check sends
// anything to the target.
func (v *validation) preflight() error {
	if _, err := v.endpoint(); err != nil {
		return usage.Wrap(err)
	}
	if c := v.p.Sim.Config; c != "" {
		cfg, err := sim.LoadConfig(v.p.Resolve(c))
		if err != nil {
			return usage.Errorf("sim.config: %v", err)
		}
		v.warn(cfg.KeyWarnings())
	}
	if spec := v.p.workload(); v.p.Sweep == nil || spec.IsTrace() { // a sweep sets the load per point
		if _, _, err := spec.Build(0); err != nil {
			return usage.Errorf("workload: %v", err)
		}
	}
	return nil
}

// prepareSimConfig writes OUTPUT/sim.yaml: the calibration when it comes
// from a given run directory, else a copy of sim.config. A calibration on
// this pipeline's silicon run happens later (calibrateOn).
func (v *validation) prepareSimConfig(ctx context.Context) error {
	s := v.p.Sim
	if s.Calibrate && s.CalibrateFrom == CalibrateFromLive {
		return v.calibrateLive(ctx)
	}
	if s.Calibrate && s.CalibrateFrom != CalibrateFromSilicon {
		return v.calibrateOn(ctx, v.p.Resolve(s.CalibrateFrom))
	}
	if s.Calibrate {
		return nil
	}
	b, err := os.ReadFile(v.p.Resolve(s.Config))
	if err != nil {
		return usage.Errorf("sim.config: %v", err)
	}
	if _, err := sim.ParseConfig(b); err != nil {
		return usage.Errorf("sim.config %s: %v", s.Config, err)
	}
	return results.WriteBytes(v.simConfigPath(), b)
}

// baseConfig is the calibration's base: sim.config when given, else the
// defaults.
func (v *validation) baseConfig() (sim.Config, error) {
	if c := v.p.Sim.Config; c != "" {
		return sim.LoadConfig(v.p.Resolve(c))
	}
	return sim.DefaultConfig(), nil
}

// calibrateLive runs the calibration plan on the target (runs kept under
// OUTPUT/calibration) and fits OUTPUT/sim.yaml, as simbench calibrate
// --url does; the plan and the fit report go to OUTPUT/logs/calibrate.txt.
func (v *validation) calibrateLive(ctx context.Context) error {
	v.logf("calibrating the simulator on a plan of runs on %s → %s", v.p.Target.URL, v.simConfigPath())
	err := v.writeLog("calibrate", func(w io.Writer) error {
		base, err := v.baseConfig()
		if err != nil {
			return err
		}
		ep, err := v.endpoint()
		if err != nil {
			return err
		}
		res, err := livecal.Calibrate(ctx, livecal.Options{Base: base, Config: loadgen.Config{Endpoint: ep, Spin: -1},
			Artifacts: filepath.Join(v.out, "calibration"), Log: w,
			Plan: calibrate.PlanOptions{Requests: v.p.Sim.PlanRequests, Seed: 1}})
		if err != nil {
			return err
		}
		if err := calibrate.WriteConfig(v.simConfigPath(), res.Fit.Config); err != nil {
			return err
		}
		return res.Fit.WriteText(w)
	})
	if err != nil {
		return fmt.Errorf("live calibration on %s: %w", results.RedactURL(v.p.Target.URL), err)
	}
	return nil
}

// calibrateOn fits the simulator to the real run in dir (as simbench
// calibrate does, on sim.config as base when given) into OUTPUT/sim.yaml;
// the fit report goes to OUTPUT/logs/calibrate.txt.
func (v *validation) calibrateOn(ctx context.Context, dir string) error {
	v.logf("calibrating the simulator on %s → %s", results.PublishedPath(dir), v.simConfigPath())
	err := v.writeLog("calibrate", func(w io.Writer) error {
		base, err := v.baseConfig()
		if err != nil {
			return err
		}
		targets, err := calibrate.LoadTargets([]string{dir})
		if err != nil {
			return err
		}
		evals := v.p.Sim.MaxEvals
		if evals <= 0 {
			evals = calibrate.DefaultMaxEvals // simbench calibrate's default
		}
		res, err := calibrate.Fit(ctx, targets, calibrate.Options{Base: base, MaxEvals: evals})
		if err != nil {
			return err
		}
		if err := calibrate.WriteConfig(v.simConfigPath(), res.Config); err != nil {
			return err
		}
		return res.WriteText(w)
	})
	if err != nil {
		return fmt.Errorf("calibration on %s: %w", results.PublishedPath(dir), err)
	}
	return nil
}

// simSeedBase is the simulator seed of the first repeated run: the
// workload's random_seed when set (as `simbench sim` uses it), else the
// configuration's seed.
func (v *validation) simSeedBase() (int64, error) {
	if s := v.p.Workload.RandomSeed; s != nil {
		return *s, nil
	}
	cfg, err := sim.LoadConfig(v.simConfigPath())
	if err != nil {
		return 0, err
	}
	return cfg.Seed, nil
}

func orFloat(p *float64, def float64) float64 {
	if p == nil {
		return def
	}
	return *p
}

func finiteNonNegative(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) && v >= 0 }

package validate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/simbench/simbench/internal/usage"
	"github.com/simbench/simbench/internal/warning"
	"github.com/simbench/simbench/loadgen"
	"github.com/simbench/simbench/loadsweep"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/sim"
	"github.com/simbench/simbench/sim/calibrate"
	"github.com/simbench/simbench/sim/calibrate/livecal"
	"github.com/simbench/simbench/traces"
)

// SuiteOptions configure RunSuite.
type SuiteOptions struct {
	Out string // artifacts directory, absent or empty (required)
	URL string // overrides target.url when set
	// Replay, when set, is an earlier artifact directory of the same
	// pipeline: its real runs and plans stand in for the target's, and the
	// fits, simulations and table are made anew.
	Replay    string
	Log       io.Writer
	Interrupt func(context.Context) (context.Context, func())
	// Silicon, when set, replaces the target: a test's fake arm, given
	// the workload's goodput SLOs.
	Silicon func(slos []results.SLO) loadsweep.Runner
}

// suiteRun is one execution of a suite.
type suiteRun struct {
	s   *Suite
	o   SuiteOptions
	out string
}

// RunSuite runs the suite into opts.Out: the target's runs (or the
// replayed ones), the fits, every candidate on every workload, the
// comparisons and the fidelity table, whose files it returns.
func RunSuite(ctx context.Context, s *Suite, opts SuiteOptions) (*Fidelity, error) {
	if opts.URL != "" {
		s.Target.URL = opts.URL
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if err := checkSuiteOut(opts); err != nil {
		return nil, err
	}
	r := &suiteRun{s: s, o: opts, out: opts.Out}
	steps := []func(context.Context) error{r.silicon, r.fitBoth, r.simulate}
	if opts.Replay != "" {
		steps[0] = r.replay
	}
	for _, step := range steps {
		if err := step(ctx); err != nil {
			return nil, err
		}
	}
	r.logf("the fidelity table → %s", filepath.Join(r.out, FidelityTextName))
	return WriteFidelityOf(r.out, r.candidates())
}

// checkSuiteOut refuses an artifact directory that holds files (a suite
// never mixes its runs with another's) or is the replayed one.
func checkSuiteOut(o SuiteOptions) error {
	if o.Out == "" {
		return usage.Errorf("-o DIR is required")
	}
	if o.Replay != "" && sameDir(o.Replay, o.Out) {
		return usage.Errorf("--replay must name another directory than -o (%s)", o.Out)
	}
	entries, err := os.ReadDir(o.Out)
	if err == nil && len(entries) > 0 {
		return usage.Errorf("-o %s is not empty: a pipeline of several workloads writes into a new directory", o.Out)
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return os.MkdirAll(o.Out, 0o755)
}

func sameDir(a, b string) bool {
	x, errA := filepath.Abs(a)
	y, errB := filepath.Abs(b)
	return errA == nil && errB == nil && x == y
}

func (r *suiteRun) logf(format string, args ...any) {
	fmt.Fprintf(r.o.Log, "validate: "+format+"\n", args...)
}

// candidates are the suite's candidates as the fidelity table names them.
func (r *suiteRun) candidates() []Candidate {
	var out []Candidate
	for _, c := range r.s.Candidates {
		out = append(out, Candidate{Name: c.Name, Run: c.Run, Seeds: c.Run + "-seeds"})
	}
	return out
}

// validation is the single-workload validation of w, for its runs.
func (r *suiteRun) validation(w SuiteWorkload) *validation {
	return newValidation(r.s.pipeline(w), Options{Out: r.out, Log: r.o.Log, Quiet: true, Interrupt: r.o.Interrupt})
}

// silicon runs everything on the target, in order: the plan, every
// workload, the repeats, the plan again.
func (r *suiteRun) silicon(ctx context.Context) error {
	if err := r.plan(ctx, PlanBeforeDir, FitFirst); err != nil {
		return err
	}
	for _, w := range r.s.Workloads {
		if err := r.realWorkload(ctx, w); err != nil {
			return err
		}
	}
	for _, name := range r.s.Repeats {
		spec, _ := r.s.repeatSpec(name) // checked by check
		dir := filepath.Join(r.out, name, RealRepeatDir)
		r.logf("real run %s again → %s", name, dir)
		if err := r.realRun(ctx, SuiteWorkload{Workload: spec}, dir); err != nil {
			return err
		}
	}
	if !r.s.Calibration.After {
		return nil
	}
	return r.plan(ctx, PlanAfterDir, FitAfter)
}

// runner is the target as a load-sweep runner (or the fake one), with
// w's goodput.
func (r *suiteRun) runner(w SuiteWorkload, log io.Writer) (loadsweep.Runner, error) {
	v := r.validation(w)
	if r.o.Silicon != nil {
		return r.o.Silicon(v.p.slos), nil
	}
	opts, _, err := v.realOptions()
	if err != nil {
		return nil, err
	}
	opts.Log, opts.Warn, opts.Quiet = log, warning.To(log), true
	return loadsweep.Real(opts, 0), nil
}

// realRun writes one run of w's spec on the target into dir, its log
// beside it (dir.txt).
func (r *suiteRun) realRun(ctx context.Context, w SuiteWorkload, dir string) error {
	return writeReport(dir+".txt", func(log io.Writer) error {
		run, err := r.runner(w, log)
		if err != nil {
			return err
		}
		if r.o.Interrupt != nil {
			var stop func()
			ctx, stop = r.o.Interrupt(ctx)
			defer stop()
		}
		return results.WriteOutput(dir, warning.To(log), results.KeepPartial, func(stage string) error {
			_, err := run(ctx, stage, w.Workload)
			return err
		})
	})
}

// realWorkload runs w on the target into DIR/NAME/real: one run, or its
// load sweep.
func (r *suiteRun) realWorkload(ctx context.Context, w SuiteWorkload) error {
	dir := filepath.Join(r.out, w.Name, RealDir)
	r.logf("real %s → %s", w.Name, dir)
	w.Workload = r.s.spec(w)
	if w.Sweep == nil {
		return r.realRun(ctx, w, dir)
	}
	return writeReport(dir+".txt", func(log io.Writer) error {
		run, err := r.runner(w, log)
		if err != nil {
			return err
		}
		return r.sweep(ctx, w, dir, run, log)
	})
}

// sweep runs w's load sweep with run into dir.
func (r *suiteRun) sweep(ctx context.Context, w SuiteWorkload, dir string, run loadsweep.Runner, log io.Writer) error {
	plan, err := r.s.pipeline(w).sweepPlan()
	if err != nil {
		return err
	}
	return results.WriteOutput(dir, warning.To(log), results.KeepPartial, func(stage string) error {
		return writeSweepText(log)(loadsweep.Run(ctx, stage, plan, w.Workload, run, log))
	})
}

// plan runs the calibration plan on the target into DIR/sub and fits it
// into the fit's file; the plan and the fit's report go to DIR/sub.txt.
func (r *suiteRun) plan(ctx context.Context, sub, fit string) error {
	dir, cfg := filepath.Join(r.out, sub), filepath.Join(r.out, fitFiles[fit])
	r.logf("the calibration plan on the target → %s, fitted into %s", dir, cfg)
	return writeReport(dir+".txt", func(log io.Writer) error {
		base, err := sim.LoadConfig(r.s.resolve(r.s.Calibration.Base))
		if err != nil {
			return usage.Errorf("calibration.base: %v", err)
		}
		ep, err := r.validation(SuiteWorkload{}).endpoint()
		if err != nil {
			return err
		}
		o := livecal.Options{Base: base, Config: loadgen.Config{Endpoint: ep, Spin: -1}, Artifacts: dir, Log: log,
			Plan:  calibrate.PlanOptions{Requests: r.s.Calibration.PlanRequests, Seed: 1},
			Seeds: calibrate.DefaultSeeds, MaxEvals: calibrate.DefaultMaxEvals}
		if r.o.Silicon != nil {
			o.Run = func(ctx context.Context, dir string, spec traces.Spec) error {
				_, err := r.o.Silicon(nil)(ctx, dir, spec)
				return err
			}
		}
		res, err := livecal.Calibrate(ctx, o)
		if err != nil {
			return fmt.Errorf("calibration plan %s: %w", dir, err)
		}
		if err := calibrate.WriteConfig(cfg, res.Fit.Config); err != nil {
			return err
		}
		return res.Fit.WriteText(log)
	})
}

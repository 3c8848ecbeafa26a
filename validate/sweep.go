package validate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/simbench/simbench/capacity"
	"github.com/simbench/simbench/compare"
	"github.com/simbench/simbench/internal/usage"
	"github.com/simbench/simbench/internal/warning"
	"github.com/simbench/simbench/loadsweep"
	"github.com/simbench/simbench/plots/figures"
	"github.com/simbench/simbench/realrun"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/sim"
)

// SweepSection makes both arms load sweeps (simbench run and simbench sim
// with --sweep-concurrency or --sweep-rate) of the workload, judged by the
// pipeline's goodput SLOs: OUTPUT/real and OUTPUT/sim are then sweep
// directories, compared load by load and by their SLO capacities, and the
// history records the capacity error.
type SweepSection struct {
	// Concurrency or RequestRate is the load list: 1,2,4,8 or 1..64x2
	// (exactly one of them).
	Concurrency string `yaml:"concurrency"`
	RequestRate string `yaml:"request_rate"`
	// Attainment is the share of valid requests that must meet every SLO
	// for a load to meet it (default 0.9).
	Attainment float64 `yaml:"attainment"`
	// StopOnSaturation stops each sweep early by simbench run's rule.
	StopOnSaturation bool `yaml:"stop_on_saturation"`
}

// plan is the sweep's plan with the pipeline's goodput and the target's
// max_error_rate (a point above it fails the SLO).
func (p *Pipeline) sweepPlan() (*loadsweep.Plan, error) {
	s := p.Sweep
	if s.Concurrency == "" && s.RequestRate == "" {
		return nil, errors.New("sweep: give concurrency (e.g. 1,2,4,8) or request_rate (e.g. 0.5..8x2)")
	}
	maxErr := -1.0
	if p.Target.MaxErrorRate != "" {
		v, err := realrun.ParseErrorRate(p.Target.MaxErrorRate)
		if err != nil {
			return nil, err
		}
		maxErr = v
	}
	attain := s.Attainment
	if attain == 0 {
		attain = loadsweep.DefaultAttainment
	}
	plan, err := loadsweep.NewPlan(loadsweep.Flags{Concurrency: s.Concurrency, Rate: s.RequestRate, Goodput: p.Goodput,
		Attainment: attain, MaxErrorRate: maxErr, StopOnSaturation: s.StopOnSaturation})
	if err != nil {
		return nil, fmt.Errorf("sweep: %w", err)
	}
	if err := plan.CheckSpec(p.Workload); err != nil {
		return nil, fmt.Errorf("sweep: %w", err)
	}
	return plan, nil
}

// checkSweep checks the sweep section against the rest of the pipeline.
func (p *Pipeline) checkSweep() error {
	if p.Sweep == nil {
		return nil
	}
	if p.Repeat > 1 {
		return errors.New("sweep and repeat > 1 exclude each other: a load sweep runs each load once per arm")
	}
	_, err := p.sweepPlan()
	return err
}

// runSweeps runs the silicon sweep into OUTPUT/real, then (calibrated on
// its lowest load when the simulator is calibrated on this pipeline's
// silicon) the simulated sweep into OUTPUT/sim; each sweep's report goes
// to OUTPUT/logs.
func (v *validation) runSweeps(ctx context.Context) error {
	plan, err := v.p.sweepPlan()
	if err != nil {
		return usage.Wrap(err)
	}
	real := v.armPath(armReal)
	v.logf("real load sweep (%s %s) → %s", plan.Load, loadList(plan.Loads), real)
	err = v.writeLog("real", func(w io.Writer) error {
		opts, _, err := v.realOptions()
		if err != nil {
			return err
		}
		opts.SLOs, opts.Log, opts.Warn = plan.SLOs, w, warning.To(w)
		if v.opts.Interrupt != nil {
			var stop func()
			ctx, stop = v.opts.Interrupt(ctx)
			defer stop()
		}
		return results.WriteOutput(real, v.warn, results.KeepPartial, func(dir string) error {
			return writeSweepText(w)(loadsweep.Run(ctx, dir, plan, v.p.workload(), loadsweep.Real(opts, 0), w))
		})
	})
	if err != nil {
		return fmt.Errorf("silicon sweep %s: %w", real, err)
	}
	if v.p.Sim.Calibrate && v.p.Sim.CalibrateFrom == CalibrateFromSilicon {
		if err := v.calibrateOn(ctx, filepath.Join(real, capacity.PointDir(plan.Load, plan.Loads[0]))); err != nil {
			return err
		}
	}
	simDir := v.armPath(armSim)
	v.logf("simulated load sweep (%s %s) → %s", plan.Load, loadList(plan.Loads), simDir)
	err = v.writeLog("sim", func(w io.Writer) error {
		cfg, err := v.simConfig(nil)
		if err != nil {
			return err
		}
		runner := loadsweep.Sim(cfg, warning.To(w), sim.WithSLOs(plan.SLOs))
		return results.WriteOutput(simDir, v.warn, results.KeepPartial, func(dir string) error {
			return writeSweepText(w)(loadsweep.Run(context.Background(), dir, plan, v.p.workload(), runner, w))
		})
	})
	if err != nil {
		return fmt.Errorf("simulated sweep %s: %w", simDir, err)
	}
	return nil
}

// writeSweepText writes a finished sweep's summary to w.
func writeSweepText(w io.Writer) func(*capacity.Summary, error) error {
	return func(s *capacity.Summary, err error) error {
		if err != nil {
			return err
		}
		return s.WriteText(w)
	}
}

func loadList(vs []float64) string {
	out := ""
	for i, v := range vs {
		if i > 0 {
			out += ","
		}
		out += fmt.Sprint(v)
	}
	return out
}

// compareSweeps compares the silicon sweep (reference) with the simulated
// one (candidate) and writes the reports: the load-sweep comparison in
// compare.json, compare.md, compare.txt and junit.xml, its plots.
func (v *validation) compareSweeps() (*Outcome, error) {
	real, simDir := v.armPath(armReal), v.armPath(armSim)
	v.logf("comparing the sweeps %s and %s", simDir, real)
	rep, err := compare.CompareSweepDirs(real, simDir, v.p.Compare.Options())
	if err != nil {
		return nil, err
	}
	inSample := v.p.inSample()
	rep.Warnings = markInSample(rep.Warnings, inSample)
	var plots []string
	if v.p.Compare.WantPlots() {
		if plots, err = figures.CompareSweeps(filepath.Join(v.out, PlotsDirName), rep); err != nil {
			return nil, err
		}
	}
	links := figures.Links(plots, filepath.Join(v.out, CompareMDName))
	res := &Outcome{sweep: rep, list: rep.Verdicts, plots: len(plots), plotsDir: filepath.Join(v.out, PlotsDirName), inSample: inSample}
	files := map[string]func(io.Writer) error{
		CompareJSONName: func(w io.Writer) error { return compare.WriteSweepJSON(w, rep) },
		CompareMDName:   withBanner(inSample, true, func(w io.Writer) error { return compare.WriteSweepMarkdown(w, rep, links) }),
		CompareTextName: withBanner(inSample, false, func(w io.Writer) error { return compare.WriteSweepText(w, rep) }),
		JUnitName:       func(w io.Writer) error { return compare.WriteSweepJUnit(w, rep) },
	}
	return res, v.writeReports(res, files)
}

// HistoryCapacity is a load-sweep validation's SLO capacities in the
// history: both estimates and the candidate's error % (absent when a side
// has no estimate).
type HistoryCapacity struct {
	Load      string   `json:"load"`
	Real      *float64 `json:"real,omitempty"`
	Simulated *float64 `json:"simulated,omitempty"`
	ErrorPct  *float64 `json:"error_pct,omitempty"`
}

// historyCapacity is the history's capacity record of a sweep comparison.
func historyCapacity(rep *compare.SweepReport) *HistoryCapacity {
	c := rep.Capacity
	h := &HistoryCapacity{Load: string(rep.Load), ErrorPct: c.ErrorPct}
	if c.Reference != nil {
		h.Real = c.Reference.Estimate
	}
	if c.Candidate != nil {
		h.Simulated = c.Candidate.Estimate
	}
	return h
}

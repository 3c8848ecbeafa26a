package validate

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/simbench/simbench/compare"
	"github.com/simbench/simbench/internal/warning"
	"github.com/simbench/simbench/loadsweep"
	"github.com/simbench/simbench/plots/figures"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/sim"
	"github.com/simbench/simbench/sim/calibrate"
)

// fitBoth fits calibrated.yaml on the plan's runs before and after the
// workloads together, from the first fit; nothing when the plan ran once.
func (r *suiteRun) fitBoth(ctx context.Context) error {
	if !r.s.Calibration.After {
		return nil
	}
	var dirs []string
	for _, sub := range []string{PlanBeforeDir, PlanAfterDir} {
		ds, err := runDirs(filepath.Join(r.out, sub))
		if err != nil {
			return err
		}
		dirs = append(dirs, ds...)
	}
	r.logf("fitting on both plans → %s", fitFiles[FitBoth])
	return r.fit(ctx, dirs, filepath.Join(r.out, fitFiles[FitFirst]), FitBoth, "calibration-both.txt")
}

// fit fits the runs dirs from the configuration base into the fit's file,
// its report into DIR/report, as `simbench calibrate --real` does.
func (r *suiteRun) fit(ctx context.Context, dirs []string, base, fit, report string) error {
	return writeReport(filepath.Join(r.out, report), func(log io.Writer) error {
		cfg, err := sim.LoadConfig(base)
		if err != nil {
			return err
		}
		warning.Print(log, cfg.KeyWarnings())
		targets, err := calibrate.LoadTargets(dirs)
		if err != nil {
			return err
		}
		res, err := calibrate.Fit(ctx, targets, calibrate.Options{Base: cfg, MaxEvals: calibrate.DefaultMaxEvals,
			Seeds: calibrate.DefaultSeeds})
		if err != nil {
			return fmt.Errorf("fit %s: %w", fit, err)
		}
		if err := calibrate.WriteConfig(filepath.Join(r.out, fitFiles[fit]), res.Config); err != nil {
			return err
		}
		return res.WriteText(log)
	})
}

// runDirs are the run directories in dir, by name.
func runDirs(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(out)
	return out, nil
}

// simulate runs every candidate on every workload, once and with the
// seeds, and compares the first candidate with the target's runs.
func (r *suiteRun) simulate(ctx context.Context) error {
	for _, w := range r.s.Workloads {
		r.logf("simulating %s", w.Name)
		if err := r.simulateWorkload(ctx, w); err != nil {
			return fmt.Errorf("workload %s: %w", w.Name, err)
		}
	}
	return nil
}

func (r *suiteRun) simulateWorkload(ctx context.Context, w SuiteWorkload) error {
	wd := filepath.Join(r.out, w.Name)
	for _, c := range r.s.Candidates {
		cfg := r.s.candidateConfig(r.out, c)
		if w.Sweep != nil {
			if err := r.simSweep(ctx, w, cfg, filepath.Join(wd, c.Run)); err != nil {
				return err
			}
			continue
		}
		if err := r.simRuns(w, cfg, wd, c.Run); err != nil {
			return err
		}
	}
	if w.Sweep == nil {
		return r.comparePair(wd)
	}
	if err := r.points(w); err != nil {
		return err
	}
	return r.compareSweeps(wd)
}

// simRuns writes candidate run's one run of w into wd/run and its seeds'
// runs into wd/run-seeds/run_NNNN (seed, seed+1, …), as `simbench sim`
// and `simbench sim --repeat` do; what they print goes to wd/run.txt and
// wd/run-seeds.txt.
func (r *suiteRun) simRuns(w SuiteWorkload, cfg, wd, run string) error {
	v := r.validation(w)
	v.opts.Quiet = false
	dir := filepath.Join(wd, run)
	if err := writeReport(dir+".txt", func(log io.Writer) error { return v.simRunFrom(cfg, dir, nil, log) }); err != nil {
		return err
	}
	return r.seedRuns(v, cfg, dir+"-seeds")
}

// seedRuns runs the configuration cfg on v's workload once per seed into
// dir/run_NNNN, the i-th with simulator seed base+i (base: the workload's
// random_seed, else cfg's); what they print goes to dir.txt.
func (r *suiteRun) seedRuns(v *validation, cfg, dir string) error {
	return writeReport(dir+".txt", func(log io.Writer) error {
		c, err := v.simConfigFrom(cfg, nil)
		if err != nil {
			return err
		}
		for i := range r.s.Seeds {
			seed := c.Seed + int64(i)
			if err := v.simRunFrom(cfg, filepath.Join(dir, compare.RepeatDirName(i)), &seed, log); err != nil {
				return err
			}
		}
		return nil
	})
}

// simSweep runs w's load sweep on the simulator with the configuration
// cfg into dir.
func (r *suiteRun) simSweep(ctx context.Context, w SuiteWorkload, cfg, dir string) error {
	v := r.validation(w)
	return writeReport(dir+".txt", func(log io.Writer) error {
		c, err := v.simConfigFrom(cfg, nil)
		if err != nil {
			return err
		}
		w.Workload = r.s.spec(w)
		return r.sweep(ctx, w, dir, loadsweep.Sim(c, warning.To(log), sim.WithSLOs(v.p.slos)), log)
	})
}

// points makes each point of w's sweeps a workload of its own: links to
// the sweeps' points, each candidate's seeds run as the point's closed
// loop, compared.
func (r *suiteRun) points(w SuiteWorkload) error {
	pts, err := r.s.points(w)
	if err != nil {
		return err
	}
	for _, p := range pts {
		pd := filepath.Join(r.out, p.Name)
		if err := os.MkdirAll(pd, 0o755); err != nil {
			return err
		}
		sides := []string{RealDir}
		for _, c := range r.s.Candidates {
			sides = append(sides, c.Run)
		}
		for _, side := range sides {
			if err := os.Symlink(filepath.Join("..", w.Name, side, p.Dir), filepath.Join(pd, side)); err != nil {
				return err
			}
		}
		if err := r.pointSeeds(SuiteWorkload{Workload: p.Spec}, pd); err != nil {
			return err
		}
		if err := r.comparePair(pd); err != nil {
			return err
		}
	}
	return nil
}

// pointSeeds runs each candidate's seeds on a sweep point's workload.
func (r *suiteRun) pointSeeds(w SuiteWorkload, pd string) error {
	v := r.validation(w)
	for _, c := range r.s.Candidates {
		if err := r.seedRuns(v, r.s.candidateConfig(r.out, c), filepath.Join(pd, c.Run+"-seeds")); err != nil {
			return err
		}
	}
	return nil
}

// compareOptions are `simbench compare`'s defaults.
func compareDefaults() compare.Options {
	c := CompareSection{}
	_ = c.check() // the defaults are valid
	return c.Options()
}

// comparePair compares wd/real with the first candidate's run: the text
// and JSON reports and the plots, as `simbench compare` writes them.
func (r *suiteRun) comparePair(wd string) error {
	var ins []*compare.Input
	for _, side := range []string{RealDir, r.s.Candidates[0].Run} {
		in, err := compare.Open(filepath.Join(wd, side))
		if err != nil {
			return err
		}
		ins = append(ins, in)
	}
	rep, err := compare.Compare(ins[:1], ins[1:], compareDefaults())
	if err != nil {
		return err
	}
	if _, err := figures.Compare(filepath.Join(wd, PlotsDirName), rep); err != nil {
		return err
	}
	if err := results.WriteFile(filepath.Join(wd, CompareTextName), func(w io.Writer) error { return compare.WriteText(w, rep) }); err != nil {
		return err
	}
	return results.WriteFile(filepath.Join(wd, CompareJSONName), func(w io.Writer) error { return compare.WriteJSON(w, rep) })
}

// compareSweeps compares wd/real with the first candidate's sweep.
func (r *suiteRun) compareSweeps(wd string) error {
	rep, err := compare.CompareSweepDirs(filepath.Join(wd, RealDir), filepath.Join(wd, r.s.Candidates[0].Run), compareDefaults())
	if err != nil {
		return err
	}
	plots, err := figures.CompareSweeps(filepath.Join(wd, PlotsDirName), rep)
	if err != nil {
		return err
	}
	for name, format := range map[string]string{CompareTextName: "text", CompareJSONName: "json"} {
		path := filepath.Join(wd, name)
		links := figures.Links(plots, path)
		if err := results.WriteFile(path, func(w io.Writer) error { return compare.WriteSweep(w, format, rep, links) }); err != nil {
			return err
		}
	}
	return nil
}

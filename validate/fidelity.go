package validate

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/simbench/simbench/capacity"
	"github.com/simbench/simbench/compare"
	"github.com/simbench/simbench/fidelity"
	"github.com/simbench/simbench/results"
)

// The fidelity table of a real-engine artifact directory (make e2e; the
// layout is docs/e2e.md's): DIR/<workload>/real, real-repeat when the
// workload ran twice on silicon, each candidate's one run and its seeds'
// runs, and compare.json; DIR/load-sweep the sweeps; DIR/calibration and
// DIR/calibration-after the calibration plan run before and after the
// held-out workloads. The table goes to FidelityTextName and
// FidelityJSONName, as a repeated validation's does.
const (
	// SummaryName is the compare summary: real / sim (error %) of TTFT and
	// ITL avg and p99 per workload, from each compare.json.
	SummaryName = "summary.txt"
	// LoadSweepDir holds the real and simulated load sweeps, compared
	// (their points are also workloads of their own).
	LoadSweepDir = "load-sweep"
	// PlanBeforeDir and PlanAfterDir hold the calibration plan's runs
	// before the held-out workloads and after them: the same runs, so
	// their differences are the host's drift over the table.
	PlanBeforeDir = "calibration"
	PlanAfterDir  = "calibration-after"
	// RealDir and RealRepeatDir are a workload's silicon run and its
	// repeat.
	RealDir       = "real"
	RealRepeatDir = "real-repeat"
)

// Candidate is a simulated configuration's name and its directories in a
// workload's: its one run (compare and the plots use it) and its seeds'
// runs (the fidelity table takes their median).
type Candidate struct{ Name, Run, Seeds string }

// Candidates are the e2e's configurations: calibrated is fitted on the
// calibration plan run before the held-out workloads and again after
// them, calibrated-first on the plan before them alone, uncalibrated is
// the a-priori configuration.
var Candidates = []Candidate{
	{"calibrated", "sim", "sim-seeds"},
	{"calibrated-first", "sim-first", "sim-first-seeds"},
	{"uncalibrated", "sim-uncal", "sim-uncal-seeds"},
}

// Fidelity is what WriteFidelity wrote: the table's and the summary's
// text and the files.
type Fidelity struct {
	Table, Summary string
	Files          []string
}

// WriteFidelity writes DIR/fidelity.txt, DIR/fidelity.json and
// DIR/summary.txt for the artifact directory dir: every workload's
// candidates' errors beside the real-vs-real spread where the workload ran
// twice, the load sweep's capacity row and the plan's host drift.
func WriteFidelity(dir string) (*Fidelity, error) { return WriteFidelityOf(dir, Candidates) }

// WriteFidelityOf is WriteFidelity with the candidates cands (the first
// is the one every workload has a run of).
func WriteFidelityOf(dir string, cands []Candidate) (*Fidelity, error) {
	names, err := workloadsOf(dir, cands[0].Run)
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%s: no <workload>/%s and <workload>/%s directories", dir, RealDir, cands[0].Run)
	}
	tab, err := fidelityTable(dir, names, cands)
	if err != nil {
		return nil, err
	}
	var txt, js bytes.Buffer
	if err := tab.WriteText(&txt); err != nil {
		return nil, err
	}
	if err := tab.WriteJSON(&js); err != nil {
		return nil, err
	}
	sum, err := compareSummary(dir, names)
	if err != nil {
		return nil, err
	}
	out := &Fidelity{Table: txt.String(), Summary: sum}
	for name, b := range map[string][]byte{FidelityTextName: txt.Bytes(), FidelityJSONName: js.Bytes(), SummaryName: []byte(sum)} {
		path := filepath.Join(dir, name)
		if err := results.WriteBytes(path, b); err != nil {
			return nil, err
		}
		out.Files = append(out.Files, path)
	}
	sort.Strings(out.Files)
	return out, nil
}

// fidelityTable tabulates the workloads names of dir.
func fidelityTable(dir string, names []string, cands []Candidate) (*fidelity.Table, error) {
	var ws []fidelity.Workload
	for _, name := range names {
		w, err := fidelityWorkload(filepath.Join(dir, name), name, cands)
		if err != nil {
			return nil, err
		}
		ws = append(ws, w)
	}
	tab := fidelity.Build(ws, nil)
	row, err := capacityRow(filepath.Join(dir, LoadSweepDir), cands)
	if err != nil {
		return nil, err
	}
	if row != nil {
		if err := tab.AddCapacity(*row); err != nil {
			return nil, err
		}
	}
	drift, err := planDrift(dir)
	if err != nil {
		return nil, err
	}
	tab.AddDrift(drift, nil)
	return tab, nil
}

// fidelityWorkload reads the workload in wd: its real run, its repeat and
// every candidate's runs.
func fidelityWorkload(wd, name string, cands []Candidate) (fidelity.Workload, error) {
	w := fidelity.Workload{Name: name}
	var err error
	if w.Real, err = loadProfile(filepath.Join(wd, RealDir)); err != nil {
		return w, err
	}
	if w.Repeat, err = loadProfile(filepath.Join(wd, RealRepeatDir)); err != nil {
		return w, err
	}
	for _, c := range cands {
		paths, err := CandidateRuns(wd, c)
		if err != nil {
			return w, err
		}
		var runs []*results.Profile
		for _, path := range paths {
			p, err := loadProfile(path)
			if err != nil {
				return w, err
			}
			runs = append(runs, p)
		}
		if len(runs) > 0 {
			w.Candidates = append(w.Candidates, fidelity.Candidate{Name: c.Name, Runs: runs})
		}
	}
	return w, nil
}

// loadProfile is the aggregate of the run in path; nil when path does not
// exist.
func loadProfile(path string) (*results.Profile, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	run, err := results.LoadRun(path)
	if err != nil {
		return nil, err
	}
	return run.Profile, nil
}

// Workloads lists the subdirectories of dir holding a real and a sim run,
// sorted (not the load sweep's directory, which holds sweeps).
func Workloads(dir string) ([]string, error) { return workloadsOf(dir, Candidates[0].Run) }

// workloadsOf lists the subdirectories of dir holding a real run and one
// named run.
func workloadsOf(dir, run string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() || e.Name() == LoadSweepDir {
			continue
		}
		if exists(filepath.Join(dir, e.Name(), RealDir)) && exists(filepath.Join(dir, e.Name(), run)) {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}

// CandidateRuns are c's runs of the workload in wd: its seeds' runs when
// there are, else its one run (none when it has neither).
func CandidateRuns(wd string, c Candidate) ([]string, error) {
	if exists(filepath.Join(wd, c.Seeds)) {
		return compare.ExpandRuns(filepath.Join(wd, c.Seeds))
	}
	if exists(filepath.Join(wd, c.Run)) {
		return []string{filepath.Join(wd, c.Run)}, nil
	}
	return nil, nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// capacityRow is the load sweep in dir's SLO capacity: the engine's
// estimate and each candidate's; nil when dir holds no real sweep.
func capacityRow(dir string, cands []Candidate) (*fidelity.CapacitySweep, error) {
	if !exists(filepath.Join(dir, RealDir)) {
		return nil, nil
	}
	real, err := capacity.ReadSummary(filepath.Join(dir, RealDir))
	if err != nil {
		return nil, err
	}
	if real.Capacity == nil {
		return nil, fmt.Errorf("%s: the engine's sweep has no SLO capacity", filepath.Join(dir, RealDir))
	}
	row := &fidelity.CapacitySweep{Workload: filepath.Base(dir), Load: string(real.Load), Real: real.Capacity.Estimate,
		RealStatus: real.Capacity.Method, SLO: fmt.Sprintf("%s, attainment ≥ %g", real.Goodput, real.AttainmentTarget),
		Candidates: map[string]float64{}}
	for _, c := range cands {
		if !exists(filepath.Join(dir, c.Run)) {
			continue
		}
		s, err := capacity.ReadSummary(filepath.Join(dir, c.Run))
		if err != nil {
			return nil, err
		}
		if s.Capacity != nil && s.Capacity.Estimate != nil {
			row.Candidates[c.Name] = *s.Capacity.Estimate
		}
	}
	return row, nil
}

// planDrift pairs every plan run before the held-out workloads with the
// same run after them; none when the plan ran once.
func planDrift(dir string) ([]fidelity.DriftRun, error) {
	entries, err := os.ReadDir(filepath.Join(dir, PlanBeforeDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var runs []fidelity.DriftRun
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		before, err := loadProfile(filepath.Join(dir, PlanBeforeDir, e.Name()))
		if err != nil {
			return nil, err
		}
		after, err := loadProfile(filepath.Join(dir, PlanAfterDir, e.Name()))
		if err != nil {
			return nil, err
		}
		if after != nil {
			runs = append(runs, fidelity.DriftRun{Name: e.Name(), Before: before, After: after})
		}
	}
	return runs, nil
}

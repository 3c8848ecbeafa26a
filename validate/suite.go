package validate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/simbench/simbench/capacity"
	"github.com/simbench/simbench/internal/usage"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/traces"
)

// Suite is a `simbench validate --pipeline` file: named workloads run on
// the target (each once, some again at the end), the calibration plan
// before them and optionally after them, the fits on those plans, and
// several candidate simulator configurations, each simulated on every
// workload once and with several seeds; then the comparisons and the
// fidelity table (WriteFidelity). The artifact layout is docs/e2e.md's.
// Relative paths in it are relative to the file's directory.
type Suite struct {
	Target      TargetSection    `yaml:"target"`
	Calibration SuiteCalibration `yaml:"calibration"`
	Workloads   []SuiteWorkload  `yaml:"workloads"`
	// Repeats names workloads (or load-sweep points) run on the target a
	// second time, in this order, after every workload: the real-vs-real
	// spread, and the host's drift when the first ran first.
	Repeats    []string         `yaml:"repeats"`
	Candidates []SuiteCandidate `yaml:"candidates"`
	// Seeds is how many simulator seeds each candidate runs every
	// workload with (default 1); the fidelity table takes their median.
	Seeds int `yaml:"seeds"`

	dir string
}

// SuiteCalibration is the calibration plan on the live target
// (`simbench calibrate --url`): before the workloads into
// DIR/calibration (fitted into calibrated-first.yaml) and, with after,
// again after them into DIR/calibration-after (calibrated-after.yaml);
// calibrated.yaml is then fitted on both.
type SuiteCalibration struct {
	Base         string `yaml:"base"` // the fit's base configuration (required)
	PlanRequests int    `yaml:"plan_requests"`
	After        bool   `yaml:"after"`
}

// SuiteWorkload is one named workload: DIR/NAME/real and its candidates'
// runs. With sweep, both sides are load sweeps; points names each point's
// own workload (PREFIX + load, e.g. sweep-c4) when set.
type SuiteWorkload struct {
	Name     string        `yaml:"name"`
	Workload traces.Spec   `yaml:"workload"`
	Goodput  string        `yaml:"goodput"`
	Sweep    *SweepSection `yaml:"sweep"`
	Points   string        `yaml:"points"`
}

// SuiteCandidate is a simulator configuration: a file, or one of the
// suite's fits (first, after, both). Its runs go to DIR/<workload>/RUN
// and RUN-seeds.
type SuiteCandidate struct {
	Name   string `yaml:"name"`
	Run    string `yaml:"run"`
	Config string `yaml:"config"`
	Fit    string `yaml:"fit"`
}

// The fits of a suite, by SuiteCandidate.Fit, and their files.
const (
	FitFirst = "first"
	FitAfter = "after"
	FitBoth  = "both"
)

var fitFiles = map[string]string{FitFirst: "calibrated-first.yaml", FitAfter: "calibrated-after.yaml", FitBoth: "calibrated.yaml"}

// LoadSuite reads and checks a pipeline file of several workloads.
func LoadSuite(path string) (*Suite, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, usage.Wrap(fmt.Errorf("--pipeline: %w", err))
	}
	s := &Suite{dir: filepath.Dir(path)}
	if err := decodeStrict(b, s); err != nil {
		return nil, usage.Wrap(fmt.Errorf("%s: %w", path, err))
	}
	if err := s.check(); err != nil {
		return nil, usage.Wrap(fmt.Errorf("%s: %w", path, err))
	}
	return s, nil
}

func (s *Suite) check() error {
	if err := s.Target.check(); err != nil {
		return err
	}
	if s.Calibration.Base == "" {
		return errors.New("calibration.base is required (the configuration the plan's fit starts from)")
	}
	if s.Seeds < 0 {
		return fmt.Errorf("seeds must be >= 1, got %d", s.Seeds)
	}
	s.Seeds = max(s.Seeds, 1)
	if len(s.Workloads) == 0 {
		return errors.New("workloads: give at least one")
	}
	names := map[string]bool{}
	for i := range s.Workloads {
		if err := s.checkWorkload(i, names); err != nil {
			return err
		}
	}
	for i, r := range s.Repeats {
		if _, err := s.repeatSpec(r); err != nil {
			return fmt.Errorf("repeats[%d]: %w", i, err)
		}
	}
	return s.checkCandidates()
}

func (s *Suite) checkWorkload(i int, names map[string]bool) error {
	w := &s.Workloads[i]
	if err := checkDirName(w.Name); err != nil {
		return fmt.Errorf("workloads[%d].name: %w", i, err)
	}
	if names[w.Name] {
		return fmt.Errorf("workloads[%d].name: %q twice", i, w.Name)
	}
	names[w.Name] = true
	if _, err := results.ParseGoodput(w.Goodput); err != nil {
		return fmt.Errorf("workloads[%d].goodput: %v", i, err)
	}
	if w.Points != "" && w.Sweep == nil {
		return fmt.Errorf("workloads[%d].points needs a sweep", i)
	}
	if w.Sweep != nil {
		if _, err := s.pipeline(*w).sweepPlan(); err != nil {
			return fmt.Errorf("workloads[%d]: %w", i, err)
		}
		return nil
	}
	if _, _, err := s.spec(*w).Build(0); err != nil {
		return fmt.Errorf("workloads[%d].workload: %w", i, err)
	}
	return nil
}

func (s *Suite) checkCandidates() error {
	if len(s.Candidates) == 0 {
		return errors.New("candidates: give at least one")
	}
	for i, c := range s.Candidates {
		switch {
		case c.Name == "":
			return fmt.Errorf("candidates[%d].name is required", i)
		case checkDirName(c.Run) != nil || c.Run == RealDir || c.Run == RealRepeatDir:
			return fmt.Errorf("candidates[%d].run: want a directory name other than real and real-repeat, got %q", i, c.Run)
		case (c.Config == "") == (c.Fit == ""):
			return fmt.Errorf("candidates[%d]: give config (a file) or fit (first, after or both)", i)
		case c.Fit != "" && fitFiles[c.Fit] == "":
			return fmt.Errorf("candidates[%d].fit: want first, after or both, got %q", i, c.Fit)
		case c.Fit != "" && c.Fit != FitFirst && !s.Calibration.After:
			return fmt.Errorf("candidates[%d].fit: %s needs calibration.after: true", i, c.Fit)
		}
	}
	return nil
}

func checkDirName(name string) error {
	if name == "" || name == "." || name == ".." || filepath.Base(name) != name {
		return fmt.Errorf("want a directory name, got %q", name)
	}
	return nil
}

// pipeline is the single-workload pipeline of a workload: the suite's
// target and the workload's spec and goodput, paths relative to the suite.
func (s *Suite) pipeline(w SuiteWorkload) *Pipeline {
	p := &Pipeline{Target: s.Target, Workload: w.Workload, Goodput: w.Goodput, Sweep: w.Sweep, dir: s.dir}
	p.slos, _ = results.ParseGoodput(w.Goodput) // checked by check
	return p
}

// spec is a workload's spec with its trace resolved.
func (s *Suite) spec(w SuiteWorkload) traces.Spec { return s.pipeline(w).workload() }

// points are a sweep workload's point workloads: name and spec per load.
func (s *Suite) points(w SuiteWorkload) ([]suitePoint, error) {
	if w.Sweep == nil || w.Points == "" {
		return nil, nil
	}
	plan, err := s.pipeline(w).sweepPlan()
	if err != nil {
		return nil, err
	}
	var out []suitePoint
	for _, l := range plan.Loads {
		out = append(out, suitePoint{Name: w.Points + strconv.FormatFloat(l, 'f', -1, 64),
			Dir: capacity.PointDir(plan.Load, l), Spec: plan.PointSpec(s.spec(w), l)})
	}
	return out, nil
}

// suitePoint is a load-sweep point as a workload of its own.
type suitePoint struct {
	Name, Dir string // its workload's name, its directory in the sweep
	Spec      traces.Spec
}

// repeatSpec is the spec of a workload or sweep point named in repeats.
func (s *Suite) repeatSpec(name string) (traces.Spec, error) {
	var known []string
	for _, w := range s.Workloads {
		if w.Name == name && w.Sweep == nil {
			return s.spec(w), nil
		}
		pts, err := s.points(w)
		if err != nil {
			return traces.Spec{}, err
		}
		for _, p := range pts {
			if p.Name == name {
				return p.Spec, nil
			}
			known = append(known, p.Name)
		}
		if w.Sweep == nil {
			known = append(known, w.Name)
		}
	}
	slices.Sort(known)
	return traces.Spec{}, fmt.Errorf("%q is no workload of one run nor a sweep point (known: %v)", name, known)
}

// candidateConfig is the configuration file a candidate simulates with.
func (s *Suite) candidateConfig(out string, c SuiteCandidate) string {
	if c.Fit != "" {
		return filepath.Join(out, fitFiles[c.Fit])
	}
	return s.resolve(c.Config)
}

func (s *Suite) resolve(path string) string { return (&Pipeline{dir: s.dir}).Resolve(path) }

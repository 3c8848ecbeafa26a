package compare

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/simbench/simbench/capacity"
)

// A load-sweep comparison lines up two load sweeps (simbench run and
// simbench sim with --sweep-concurrency or --sweep-rate, each a directory
// of point runs and a sweep_summary.json of kind load_sweep) load by load:
// every load both sweeps ran is an ordinary comparison of its two runs (a
// Report, with every AIPerf field), the loads only one side ran are named,
// and the SLO capacities of the two sweeps are compared.

// SweepSide is one load sweep of a comparison.
type SweepSide struct {
	Name    string // the directory's base name
	Path    string // as given
	Summary *capacity.Summary
}

// IsSweep reports whether path is a sweep's directory: a sweep_summary.json
// and no run of its own. OpenSweep says when it is not a load sweep (a
// simulator config grid's summary has the same name).
func IsSweep(path string) bool {
	return isFile(filepath.Join(path, capacity.SummaryName)) && !isRunDir(path)
}

// OpenSweep reads a load sweep's directory.
func OpenSweep(dir string) (SweepSide, error) {
	s, err := capacity.ReadSummary(dir)
	if err != nil {
		return SweepSide{}, err
	}
	return SweepSide{Name: filepath.Base(filepath.Clean(dir)), Path: dir, Summary: s}, nil
}

// SweepPoint is one load both sweeps ran: each side's summary point and
// the comparison of the two runs.
type SweepPoint struct {
	Load      float64
	Ref, Cand capacity.Point
	Report    *Report
}

// CapacityComparison is the SLO capacity of both sweeps and the error %
// of the candidate's estimate.
type CapacityComparison struct {
	// Reference and Candidate are nil for a sweep without SLOs.
	Reference, Candidate *capacity.Capacity
	// Diff and ErrorPct compare the estimates; nil when a side has none
	// (no SLO, or the lowest load already failed) or, for ErrorPct, when
	// the reference's is 0.
	Diff, ErrorPct *float64
	// LowerBound is set when an estimate is only a lower bound: every
	// load of that sweep met the SLO.
	LowerBound bool
}

// SweepReport is a complete load-sweep comparison: what every sweep
// renderer prints.
type SweepReport struct {
	Load                 capacity.Load
	Reference, Candidate SweepSide
	Options              Options
	// Points are the loads both sweeps ran, ascending.
	Points []SweepPoint
	// OnlyInReference and OnlyInCandidate are the loads one sweep ran.
	OnlyInReference, OnlyInCandidate []float64
	Capacity                         CapacityComparison
	// Verdicts are the capacity bound's first, then each point's (Scope
	// names the load).
	Verdicts []Verdict
	Warnings []Warning
}

// CompareSweepDirs opens two load sweeps and compares them.
func CompareSweepDirs(ref, cand string, opts Options) (*SweepReport, error) {
	a, err := OpenSweep(ref)
	if err != nil {
		return nil, err
	}
	b, err := OpenSweep(cand)
	if err != nil {
		return nil, err
	}
	return CompareSweeps(a, b, opts)
}

// CompareSweeps compares two load sweeps of the same load: each load both
// ran with Compare (the bounds of opts but capacity's judged at every
// point), and their capacities (the capacity bound).
func CompareSweeps(ref, cand SweepSide, opts Options) (*SweepReport, error) {
	if ref.Summary.Load != cand.Summary.Load {
		return nil, fmt.Errorf("compare: %s sweeps %s but %s sweeps %s: a load sweep compares with a sweep of the same load",
			ref.Path, ref.Summary.Load, cand.Path, cand.Summary.Load)
	}
	r := &SweepReport{Load: ref.Summary.Load, Reference: ref, Candidate: cand, Options: opts}
	r.warnSLOs()
	pointOpts := opts
	pointOpts.Thresholds = slices.DeleteFunc(slices.Clone(opts.Thresholds), isCapacity)
	if err := r.alignPoints(pointOpts); err != nil {
		return nil, err
	}
	r.Capacity = compareCapacity(ref.Summary.Capacity, cand.Summary.Capacity)
	for _, t := range opts.Thresholds {
		if isCapacity(t) {
			r.Verdicts = append(r.Verdicts, r.judgeCapacity(t))
		}
	}
	for _, p := range r.Points {
		for _, v := range p.Report.Verdicts {
			v.Scope = r.LoadText(p.Load)
			r.Verdicts = append(r.Verdicts, v)
		}
	}
	return r, nil
}

func isCapacity(t Threshold) bool { return t.Metric == CapacityField }

// warnSLOs warns when the sweeps judged their points by different SLOs:
// their capacities then answer different questions.
func (r *SweepReport) warnSLOs() {
	a, b := r.Reference.Summary, r.Candidate.Summary
	if a.Goodput != b.Goodput || a.AttainmentTarget != b.AttainmentTarget {
		r.Warnings = append(r.Warnings, warnf("the sweeps' SLOs differ (reference %s; candidate %s): their capacities answer different questions",
			sloText(a), sloText(b)))
	}
}

// alignPoints compares the runs of every load both sweeps ran, in load
// order, and names the loads only one ran.
func (r *SweepReport) alignPoints(opts Options) error {
	cands := r.Candidate.Summary.Points
	matched := make([]bool, len(cands))
	for _, rp := range r.Reference.Summary.Points {
		j := slices.IndexFunc(cands, func(cp capacity.Point) bool { return sameLoad(rp.Value(), cp.Value()) })
		if j < 0 {
			r.OnlyInReference = append(r.OnlyInReference, rp.Value())
			continue
		}
		matched[j] = true
		rep, err := r.comparePoint(rp, cands[j], opts)
		if err != nil {
			return err
		}
		r.Points = append(r.Points, SweepPoint{Load: rp.Value(), Ref: rp, Cand: cands[j], Report: rep})
		for _, w := range rep.Warnings {
			r.Warnings = append(r.Warnings, warnf("%s: %s", r.LoadText(rp.Value()), w.Msg))
		}
	}
	for j, cp := range cands {
		if !matched[j] {
			r.OnlyInCandidate = append(r.OnlyInCandidate, cp.Value())
		}
	}
	var only []Warning
	for _, side := range []struct {
		name  string
		loads []float64
	}{{"reference", r.OnlyInReference}, {"candidate", r.OnlyInCandidate}} {
		if len(side.loads) > 0 {
			only = append(only, warnf("only the %s ran %s: not compared", side.name, r.loadList(side.loads)))
		}
	}
	r.Warnings = append(only, r.Warnings...)
	if len(r.Points) == 0 {
		return fmt.Errorf("compare: %s and %s have no load in common", r.Reference.Path, r.Candidate.Path)
	}
	return nil
}

// comparePoint compares the two runs of one load.
func (r *SweepReport) comparePoint(rp, cp capacity.Point, opts Options) (*Report, error) {
	var ins [2]*Input
	for i, side := range []struct {
		s  SweepSide
		pt capacity.Point
	}{{r.Reference, rp}, {r.Candidate, cp}} {
		dir := filepath.Join(side.s.Path, side.pt.Dir)
		in, err := Open(dir)
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("compare: %s: point %s of %s is missing", dir, r.LoadText(side.pt.Value()), side.s.Path)
		}
		if err != nil {
			return nil, fmt.Errorf("compare: %s of %s: %w", r.LoadText(side.pt.Value()), side.s.Path, err)
		}
		ins[i] = in
	}
	return Compare([]*Input{ins[0]}, []*Input{ins[1]}, opts)
}

// sameLoad compares loads read from two summaries: concurrencies exactly,
// request rates to a relative 1e-9 (both came from the same flag text).
func sameLoad(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

func compareCapacity(ref, cand *capacity.Capacity) CapacityComparison {
	c := CapacityComparison{Reference: ref, Candidate: cand}
	if ref == nil || cand == nil || ref.Estimate == nil || cand.Estimate == nil {
		return c
	}
	d := *cand.Estimate - *ref.Estimate
	c.Diff, c.ErrorPct = &d, errorPct(*ref.Estimate, *cand.Estimate)
	c.LowerBound = ref.Status == capacity.StatusAboveTested || cand.Status == capacity.StatusAboveTested
	return c
}

// judgeCapacity judges the capacity bound. A sweep without SLOs has no
// capacity: the verdict is missing. A side whose lowest load already
// failed has no estimate: that is a breach unless both sides are so (they
// agree the capacity is below what was tested).
func (r *SweepReport) judgeCapacity(t Threshold) Verdict {
	c := r.Capacity
	v := Verdict{Threshold: t, ErrorPct: c.ErrorPct}
	below := func(x *capacity.Capacity) bool { return x.Status == capacity.StatusBelowTested }
	switch {
	case c.Reference == nil || c.Candidate == nil:
		v.Status, v.Reason = Missing, "capacity needs SLOs (--goodput) on both sweeps: "+r.noSLOSides()
	case below(c.Reference) && below(c.Candidate):
		v.Status, v.Reason = Pass, "both sweeps fail the SLO at their lowest load"
	case below(c.Reference) || below(c.Candidate):
		v.Status, v.Reason = Breach, "one sweep fails the SLO at its lowest load, the other meets it there"
	case c.ErrorPct == nil:
		v.Status, v.Reason = Breach, "reference capacity is 0 and candidate's is not: unbounded relative error"
	case math.Abs(*c.ErrorPct) <= t.MaxPct:
		v.Status, v.Reason = Pass, fmt.Sprintf("|%s| ≤ %g%%", fmtPct(c.ErrorPct), t.MaxPct)
	default:
		v.Status, v.Reason = Breach, fmt.Sprintf("|%s| > %g%%", fmtPct(c.ErrorPct), t.MaxPct)
	}
	if c.LowerBound && v.Status != Missing {
		v.Reason += " (an estimate is a lower bound: every load of that sweep met the SLO)"
	}
	return v
}

func (r *SweepReport) noSLOSides() string {
	var out []string
	for _, s := range []SweepSide{r.Reference, r.Candidate} {
		if s.Summary.Capacity == nil {
			out = append(out, s.Path+" has none")
		}
	}
	return strings.Join(out, ", ")
}

// Breaches returns the verdicts that breached their bound.
func (r *SweepReport) Breaches() []Verdict { return VerdictsWith(r.Verdicts, Breach) }

// MissingVerdicts returns the verdicts that could not be judged.
func (r *SweepReport) MissingVerdicts() []Verdict { return VerdictsWith(r.Verdicts, Missing) }

// LoadText names a load: "concurrency 4", "request_rate 2.5".
func (r *SweepReport) LoadText(v float64) string {
	return string(r.Load) + " " + strconv.FormatFloat(v, 'g', -1, 64)
}

func (r *SweepReport) loadList(vs []float64) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = strconv.FormatFloat(v, 'g', -1, 64)
	}
	return string(r.Load) + " " + strings.Join(s, ", ")
}

// sloText is a sweep's SLO in words.
func sloText(s *capacity.Summary) string {
	if s.Goodput == "" {
		return "no SLO"
	}
	return fmt.Sprintf("goodput %q, attainment ≥ %g", s.Goodput, s.AttainmentTarget)
}

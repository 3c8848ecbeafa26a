package compare

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/simbench/simbench/results"
)

// DefaultAlpha is the significance level of a multi-run comparison.
const DefaultAlpha = 0.05

// MultiOptions configures a comparison of several runs per side.
type MultiOptions struct {
	Stall      StallOptions
	Thresholds []Threshold
	// Alpha is the Mann–Whitney significance level (0 means DefaultAlpha): a
	// difference with p > Alpha is within run-to-run noise.
	Alpha float64
}

// Spread is one statistic of one metric over the runs of one side.
type Spread struct {
	Values []float64 // one per run, in run order
	Median float64   // results.PercentileSorted(values, 50): numpy's median
	Min    float64
	Max    float64
}

func spreadOf(values []float64) Spread {
	s := slices.Clone(values)
	slices.Sort(s)
	return Spread{Values: values, Median: results.PercentileSorted(s, 50), Min: s[0], Max: s[len(s)-1]}
}

// MultiRow is one statistic of one metric compared over several runs per
// side, in the first reference run's unit.
type MultiRow struct {
	Metric, Stat, Unit   string
	Reference, Candidate Spread
	// ErrorPct is the error % of the candidate median against the reference
	// median; nil when the reference median is 0 and the candidate's is not.
	ErrorPct *float64
	// Test is the Mann–Whitney U test of the candidate runs' values
	// against the reference runs' values.
	Test UTest
	// Significant is Test.P ≤ Alpha: the sides differ by more than their
	// run-to-run noise.
	Significant   bool
	Informational bool
}

// Medians is the row of the two medians, as a two-run comparison has it.
func (m MultiRow) Medians() Row {
	r := NewRow(m.Metric, m.Stat, m.Unit, m.Reference.Median, m.Candidate.Median)
	r.ErrorPct = m.ErrorPct
	return r
}

// MultiReport is a comparison of several runs per side: per statistic the
// median, min and max of each side, the error % of the medians, and a
// Mann–Whitney U test, so that only changes larger than run-to-run noise
// count (benchstat's rule).
type MultiReport struct {
	References, Candidates []RunInfo
	Options                MultiOptions
	Rows                   []MultiRow
	Verdicts               []Verdict
	Warnings               []Warning
}

// runSample is what a multi-run comparison keeps of one run: its
// statistics keyed by "metric.stat", in the first reference's units.
type runSample struct {
	info   RunInfo
	values map[string]float64
	order  []Row // the run's rows, for the field order and units
}

// CompareRuns compares several reference runs with several candidate runs.
// Every run is scanned once and only its statistics are kept (token-gap
// and stall figures included, as Compare computes them); a statistic
// missing from any run is left out with a warning.
func CompareRuns(refs, cands []*Input, opts MultiOptions) (*MultiReport, error) {
	if len(refs) == 0 || len(cands) == 0 {
		return nil, errors.New("compare: a multi-run comparison needs at least one run per side")
	}
	if opts.Alpha == 0 {
		opts.Alpha = DefaultAlpha
	}
	if !(opts.Alpha > 0 && opts.Alpha < 1) {
		return nil, fmt.Errorf("compare: alpha must be in (0, 1), got %g", opts.Alpha)
	}
	r := &MultiReport{Options: opts}
	var base *results.Profile
	samples := make([][]runSample, 2)
	for side, ins := range [][]*Input{refs, cands} {
		for _, in := range ins {
			s, p, w, err := sampleRun(in, base, opts.Stall)
			if err != nil {
				return nil, err
			}
			if base == nil {
				base = p
			}
			samples[side] = append(samples[side], s)
			r.Warnings = appendUnique(r.Warnings, w...)
		}
	}
	r.References, r.Candidates = infos(samples[0]), infos(samples[1])
	r.buildRows(samples[0], samples[1])
	r.Verdicts = evaluateMulti(r.Rows, opts)
	r.Warnings = appendUnique(r.Warnings, r.powerWarning()...)
	return r, nil
}

// sampleRun scans one run and aligns its profile with base (itself when
// base is nil), returning its statistics and its own profile.
func sampleRun(in *Input, base *results.Profile, stall StallOptions) (runSample, *results.Profile, []Warning, error) {
	d, err := Scan(in, stall)
	if err != nil {
		return runSample{}, nil, nil, err
	}
	p, warns := withTokenGap(in, d)
	warns = append(warns, in.Warnings...)
	if base == nil {
		base = p
	}
	a := Align(base, p)
	warns = append(warns, a.Warnings...)
	st := d.Stalls()
	rep := &Report{Rows: a.Rows, RefStalls: st, CandStalls: st}
	rep.addStallRows()
	s := runSample{info: info(in, d), values: map[string]float64{}, order: rep.Rows}
	for _, row := range rep.Rows {
		s.values[row.Metric+"."+row.Stat] = row.Candidate
	}
	return s, p, warns, nil
}

func infos(ss []runSample) []RunInfo {
	out := make([]RunInfo, len(ss))
	for i, s := range ss {
		out[i] = s.info
	}
	return out
}

// buildRows makes a row of every field present in every run, in the order
// fields first appear; the others are named in one warning.
func (r *MultiReport) buildRows(refs, cands []runSample) {
	all := append(slices.Clone(refs), cands...)
	seen := map[string]bool{}
	var partial []string
	for _, s := range all {
		for _, row := range s.order {
			field := row.Metric + "." + row.Stat
			if seen[field] {
				continue
			}
			seen[field] = true
			rv, okR := collect(refs, field)
			cv, okC := collect(cands, field)
			if !okR || !okC {
				partial = append(partial, field)
				continue
			}
			r.Rows = append(r.Rows, r.newRow(row, rv, cv))
		}
	}
	if len(partial) > 0 {
		r.Warnings = append(r.Warnings, warnf("%d statistics missing from some runs were not compared: %s",
			len(partial), abbreviate(partial, 8)))
	}
}

func collect(ss []runSample, field string) ([]float64, bool) {
	out := make([]float64, 0, len(ss))
	for _, s := range ss {
		v, ok := s.values[field]
		if !ok {
			return nil, false
		}
		out = append(out, v)
	}
	return out, true
}

func (r *MultiReport) newRow(row Row, rv, cv []float64) MultiRow {
	m := MultiRow{Metric: row.Metric, Stat: row.Stat, Unit: row.Unit, Reference: spreadOf(rv),
		Candidate: spreadOf(cv), Informational: row.Informational}
	m.ErrorPct = errorPct(m.Reference.Median, m.Candidate.Median)
	m.Test, _ = MannWhitney(rv, cv) // values are finite and both sides non-empty
	m.Significant = m.Test.P <= r.Options.Alpha
	return m
}

// powerWarning says when the run counts are too small for any difference
// to be significant.
func (r *MultiReport) powerWarning() []Warning {
	n1, n2 := len(r.References), len(r.Candidates)
	if p := MinUTestP(n1, n2); p > r.Options.Alpha {
		return []Warning{warnf("with %d reference and %d candidate runs the smallest possible p-value is %.3f > α = %g: "+
			"no difference can be significant, so every bound is judged ~ (within noise); use at least %d runs per side",
			n1, n2, p, r.Options.Alpha, runsNeeded(r.Options.Alpha))}
	}
	return nil
}

// runsNeeded is the smallest n for which n runs per side can reach alpha.
func runsNeeded(alpha float64) int {
	n := 1
	for MinUTestP(n, n) > alpha && n < 1000 {
		n++
	}
	return n
}

func appendUnique(ws []Warning, add ...Warning) []Warning {
	for _, w := range add {
		if !slices.Contains(ws, w) {
			ws = append(ws, w)
		}
	}
	return ws
}

func abbreviate(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], ", "), len(names)-n)
}

// Breaches returns the verdicts that breached their bound beyond noise.
func (r *MultiReport) Breaches() []Verdict { return withStatus(r.Verdicts, Breach) }

// MissingVerdicts returns the verdicts that could not be judged.
func (r *MultiReport) MissingVerdicts() []Verdict { return withStatus(r.Verdicts, Missing) }

func withStatus(vs []Verdict, s string) []Verdict {
	var out []Verdict
	for _, v := range vs {
		if v.Status == s {
			out = append(out, v)
		}
	}
	return out
}

// Row returns the row of metric.stat.
func (r *MultiReport) Row(metric, stat string) (MultiRow, bool) {
	i := slices.IndexFunc(r.Rows, func(m MultiRow) bool { return m.Metric == metric && m.Stat == stat })
	if i < 0 {
		return MultiRow{}, false
	}
	return r.Rows[i], true
}

// ChartRows returns the rows of the medians worth a bar in an error chart,
// selected as Report.ChartRows selects them.
func (r *MultiReport) ChartRows() []ChartRow {
	var out []ChartRow
	for _, m := range r.Rows {
		bound := boundOf(r.Options.Thresholds, m.Metric, m.Stat)
		headline := slices.Contains(chartMetrics, m.Metric) && slices.Contains(chartStats, m.Stat)
		if m.ErrorPct != nil && (headline || bound > 0) {
			out = append(out, ChartRow{Row: m.Medians(), BoundPct: bound})
		}
	}
	return out
}

func boundOf(th []Threshold, metric, stat string) float64 {
	for _, t := range th {
		if t.Metric == metric && t.Stat == stat {
			return t.MaxPct
		}
	}
	return 0
}

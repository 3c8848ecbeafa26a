package compare

import (
	"fmt"
	"slices"
	"strings"

	"github.com/simbench/simbench/results"
)

// runSample is what a comparison of several runs per side keeps of one
// run: its statistics keyed by "metric.stat", in the first reference's
// units.
type runSample struct {
	info   RunInfo
	values map[string]float64
	order  []Row // the run's rows, for the field order and units
}

// compareRuns compares several runs per side (see Compare): every run is
// scanned once and only its statistics are kept.
func compareRuns(refs, cands []*Input, opts Options) (*Report, error) {
	r := &Report{Options: opts}
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
	rows, partial := r.rowsOf(samples[0], samples[1])
	r.Rows = rows
	if len(partial) > 0 {
		r.Warnings = append(r.Warnings, warnf("%d statistics missing from some runs were not compared: %s",
			len(partial), abbreviate(partial, 8)))
	}
	r.Verdicts = r.evaluate()
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
	s, a := sampleOf(info(in, d), base, p, d.Stalls())
	return s, p, append(warns, a.Warnings...), nil
}

// sampleOf is a run's statistics, profile p and stall figures st, in the
// units of base, with the alignment of p against base.
func sampleOf(ri RunInfo, base, p *results.Profile, st *Stalls) (runSample, Alignment) {
	a := Align(base, p)
	rows := withStallRows(a.Rows, st)
	s := runSample{info: ri, values: make(map[string]float64, len(rows)), order: rows}
	for _, row := range rows {
		s.values[row.Metric+"."+row.Stat] = row.Candidate
	}
	return s, a
}

func infos(ss []runSample) []RunInfo {
	out := make([]RunInfo, len(ss))
	for i, s := range ss {
		out[i] = s.info
	}
	return out
}

// rowsOf makes a row of every field present in every run, in the order
// fields first appear, and names the others.
func (r *Report) rowsOf(refs, cands []runSample) (rows []Row, partial []string) {
	seen := map[string]bool{}
	for _, s := range append(slices.Clone(refs), cands...) {
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
			rows = append(rows, r.newRow(row, rv, cv))
		}
	}
	return rows, partial
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

// newRow is the row of one field over the runs: each side's median, the
// error % of the medians and, with several runs on a side, the test of
// the runs' values.
func (r *Report) newRow(row Row, rv, cv []float64) Row {
	m := Row{Metric: row.Metric, Stat: row.Stat, Unit: row.Unit, Informational: row.Informational, Significant: true}
	m.RefRuns, m.Reference = spreadOf(rv)
	m.CandRuns, m.Candidate = spreadOf(cv)
	m.Diff, m.ErrorPct = m.Candidate-m.Reference, errorPct(m.Reference, m.Candidate)
	if !r.Paired() {
		t, _ := MannWhitney(rv, cv) // values are finite and both sides non-empty
		m.Test, m.Significant = &t, t.P <= r.Options.Alpha
	}
	return m
}

// powerWarning says when the run counts are too small for any difference
// to be significant.
func (r *Report) powerWarning() []Warning {
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

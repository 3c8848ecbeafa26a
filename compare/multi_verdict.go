package compare

import (
	"fmt"
	"math"
	"slices"
)

// NotSignificant is the status of a verdict whose medians are further apart
// than the bound while the runs do not differ beyond their run-to-run noise
// (Mann–Whitney p > alpha): benchstat's "~". It does not fail a gate.
const NotSignificant = "~"

// evaluateMulti judges every threshold against the medians: a breach
// needs both |error| > bound and p ≤ alpha.
func evaluateMulti(rows []MultiRow, opts MultiOptions) []Verdict {
	out := make([]Verdict, 0, len(opts.Thresholds))
	for _, t := range opts.Thresholds {
		out = append(out, evaluateMultiOne(rows, t, opts.Alpha))
	}
	return out
}

func evaluateMultiOne(rows []MultiRow, t Threshold, alpha float64) Verdict {
	v := Verdict{Threshold: t}
	i := slices.IndexFunc(rows, func(r MultiRow) bool { return r.Metric == t.Metric && r.Stat == t.Stat })
	if i < 0 {
		v.Status, v.Reason = Missing, t.Field()+" is not in every run of both sides"
		return v
	}
	m := rows[i]
	v.ErrorPct = m.ErrorPct
	noise := fmt.Sprintf("p = %.3f", m.Test.P)
	switch {
	case m.ErrorPct != nil && math.Abs(*m.ErrorPct) <= t.MaxPct:
		v.Status, v.Reason = Pass, fmt.Sprintf("|%s| ≤ %g%%", fmtPct(m.ErrorPct), t.MaxPct)
	case !m.Significant:
		v.Status, v.Reason = NotSignificant, fmt.Sprintf("%s beyond ±%g%% but %s > α = %g: within run-to-run noise",
			fmtPct(m.ErrorPct), t.MaxPct, noise, alpha)
	case m.ErrorPct == nil:
		v.Status, v.Reason = Breach, "reference median is 0 and candidate median is not; "+noise
	default:
		v.Status, v.Reason = Breach, fmt.Sprintf("|%s| > %g%%, %s ≤ α = %g", fmtPct(m.ErrorPct), t.MaxPct, noise, alpha)
	}
	return v
}

// multiVerdictSummary counts verdicts by status, "~" included.
func multiVerdictSummary(vs []Verdict) string {
	n := map[string]int{}
	for _, v := range vs {
		n[v.Status]++
	}
	return fmt.Sprintf("%d breach, %d missing, %d within noise (~), %d pass", n[Breach], n[Missing], n[NotSignificant], n[Pass])
}

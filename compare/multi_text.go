package compare

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
)

// WriteMultiText writes a multi-run comparison as a console table: per
// statistic the median and [min … max] of each side, the error % of the
// medians ("~" before it when the runs do not differ beyond their noise)
// and the Mann–Whitney p-value; then the verdicts and the warnings.
func WriteMultiText(w io.Writer, r *MultiReport) error {
	ew := &errWriter{w: w}
	ew.printf("simbench compare   %d reference run(s) vs %d candidate run(s)\n", len(r.References), len(r.Candidates))
	ew.printf("  error %% = (candidate median − reference median) / reference median × 100\n")
	ew.printf("  p = two-sided Mann–Whitney U test of the runs' values; ~ = not significant at α = %g\n", r.Options.Alpha)
	ew.printf("  reference: %s\n  candidate: %s\n\n", runList(r.References), runList(r.Candidates))
	ew.do(multiBox(r.Rows).write)
	writeMultiVerdictsText(ew, r.Verdicts)
	if len(r.Warnings) > 0 {
		ew.printf("\nWarnings:\n")
		for i, wn := range r.Warnings {
			ew.printf("  %d. %s\n", i+1, wn.Msg)
		}
	}
	return ew.err
}

func runList(rs []RunInfo) string {
	names := make([]string, len(rs))
	for i, ri := range rs {
		names[i] = ri.Path
	}
	return strings.Join(names, ", ")
}

var multiHeaders = []string{"Metric", "Stat", "Reference", "[min … max]", "Candidate", "[min … max]", "Error", "p"}

// multiBox lays the rows out like metricsBox, one statistic per line.
func multiBox(rows []MultiRow) *box {
	b := &box{headers: multiHeaders, left: 2}
	for _, g := range multiGroups(shownMultiRows(rows)) {
		title := wrapWords(metricTitle(g[0].Metric, g[0].Unit), metricColumnWidth)
		for i := 0; i < max(len(g), len(title)); i++ {
			cells := make([]string, len(multiHeaders))
			if i < len(title) {
				cells[0] = title[i]
			}
			if i < len(g) {
				copy(cells[1:], multiCells(g[i]))
			}
			b.rows = append(b.rows, cells)
		}
	}
	return b
}

// multiCells are a row's cells after the metric title.
func multiCells(m MultiRow) []string {
	return []string{statLabel(m.Stat), fmtValue(m.Stat, m.Reference.Median), spreadRange(m.Stat, m.Reference),
		fmtValue(m.Stat, m.Candidate.Median), spreadRange(m.Stat, m.Candidate), multiError(m), fmtP(m.Test.P)}
}

func spreadRange(stat string, s Spread) string {
	return "[" + fmtValue(stat, s.Min) + " … " + fmtValue(stat, s.Max) + "]"
}

// multiError is the error % of the medians, prefixed "~" when the runs do
// not differ significantly.
func multiError(m MultiRow) string {
	if m.Significant {
		return fmtPct(m.ErrorPct)
	}
	return "~ " + fmtPct(m.ErrorPct)
}

func fmtP(p float64) string { return fmt.Sprintf("%.3f", p) }

func shownMultiRows(rows []MultiRow) []MultiRow {
	out := make([]MultiRow, 0, len(rows))
	for _, r := range rows {
		if r.Stat != "sum" {
			out = append(out, r)
		}
	}
	return out
}

func multiGroups(rows []MultiRow) [][]MultiRow {
	var out [][]MultiRow
	for i, r := range rows {
		if i == 0 || r.Metric != rows[i-1].Metric {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], r)
	}
	return out
}

func writeMultiVerdictsText(ew *errWriter, vs []Verdict) {
	if len(vs) == 0 {
		return
	}
	ew.printf("\nVerdicts: %s\n", multiVerdictSummary(vs))
	rows := [][]string{{"status", "field", "error", "bound", ""}}
	for _, v := range vs {
		rows = append(rows, []string{strings.ToUpper(v.Status), v.Field(), fmtPct(v.ErrorPct), fmt.Sprintf("±%g%%", v.MaxPct), v.Reason})
	}
	ew.do(func(w io.Writer) error { return plain(w, rows, "llrrl") })
}

// SignificantOffenders returns up to n non-informational rows that differ
// beyond noise, largest |error %| first, one per metric (its worst).
func SignificantOffenders(rows []MultiRow, n int) []MultiRow {
	var out []MultiRow
	for _, r := range rows {
		if r.Significant && !r.Informational && r.ErrorPct != nil && *r.ErrorPct != 0 {
			out = append(out, r)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return math.Abs(*out[i].ErrorPct) > math.Abs(*out[j].ErrorPct) })
	seen := map[string]bool{}
	worst := out[:0]
	for _, r := range out {
		if !seen[r.Metric] {
			seen[r.Metric] = true
			worst = append(worst, r)
		}
	}
	return worst[:min(n, len(worst))]
}

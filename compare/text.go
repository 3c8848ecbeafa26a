package compare

import (
	"fmt"
	"io"
	"strings"
)

// metricColumnWidth wraps long metric titles over the rows of their
// statistics, so the table fits in 120 columns.
const metricColumnWidth = 32

// WriteText writes the report as an AIPerf-like console table with error
// columns, followed by the per-request join, the stalls, the TTFT
// breakdown, the verdicts and the warnings. With several runs per side the
// table has each side's median and [min … max], the error % of the medians
// ("~" before it when the runs do not differ beyond their noise) and the
// Mann–Whitney p-value.
func WriteText(w io.Writer, r *Report) error {
	ew := &errWriter{w: w}
	writeTextHeader(ew, r)
	ew.do(metricsBox(r).write)
	ew.printf("%s", onlyLines(r))
	if r.PerRequest != nil {
		ew.printf("\nPer-request join: %s\n", r.PerRequest)
		ew.do(func(w io.Writer) error { return plain(w, joinTable(r.PerRequest), "lrrrrrll") })
		ew.printf("  (mean error in the metric's unit; grades: BLIS's MAPE < 10/20/35 %% and Pearson r > 0.95/0.85/0.70)\n")
	}
	if r.RefStalls != nil || r.CandStalls != nil {
		ew.printf("\nToken-gap stalls: a stall is a token gap > max(%g × median gap, %g ms)\n", r.Options.Stall.K, r.Options.Stall.FloorMs)
		ew.do(func(w io.Writer) error { return plain(w, stallTable(r.RefStalls, r.CandStalls, false), "l") })
		writeDecilesText(ew, r.RefStalls, r.CandStalls)
	}
	writeBreakdownText(ew, r.TTFTBreakdown)
	writeServerMetricsText(ew, r.ServerMetrics)
	writeVerdictsText(ew, r)
	writeWarningsText(ew, r.Warnings)
	return ew.err
}

func writeWarningsText(ew *errWriter, ws []Warning) {
	if len(ws) > 0 {
		ew.printf("\nWarnings:\n")
		for i, wn := range ws {
			ew.printf("  %d. %s\n", i+1, wn.Msg)
		}
	}
}

func writeTextHeader(ew *errWriter, r *Report) {
	if r.Paired() {
		ew.printf("simbench compare   error %% = (candidate − reference) / reference × 100\n")
		ew.printf("  reference: %s\n  candidate: %s\n", describe(r.Reference()), describe(r.Candidate()))
		writeHeadlineText(ew, r)
		return
	}
	ew.printf("simbench compare   %d reference run(s) vs %d candidate run(s)\n", len(r.References), len(r.Candidates))
	ew.printf("  error %% = (candidate median − reference median) / reference median × 100\n")
	ew.printf("  p = two-sided Mann–Whitney U test of the runs' values; ~ = not significant at α = %g\n", r.Options.Alpha)
	ew.printf("  reference: %s\n  candidate: %s\n", runList(r.References), runList(r.Candidates))
	writeHeadlineText(ew, r)
}

func describe(ri RunInfo) string {
	s := fmt.Sprintf("%s (%s, %s", ri.Name, ri.Path, ri.Format)
	if ri.Requests > 0 || ri.Errors > 0 {
		s += fmt.Sprintf(", %d requests", ri.Requests)
		if ri.Errors > 0 {
			s += fmt.Sprintf(" + %d failed", ri.Errors)
		}
	}
	return s + ")"
}

func runList(rs []RunInfo) string {
	names := make([]string, len(rs))
	for i, ri := range rs {
		names[i] = ri.Path
	}
	return strings.Join(names, ", ")
}

// metricsBox lays the rows out one statistic per line, the metric title
// wrapped down the first column of its group.
func metricsBox(r *Report) *box {
	headers, cells := columns(r)
	b := &box{headers: headers, left: 2}
	for _, g := range groups(shownRows(r.Rows)) {
		title := wrapWords(metricTitle(g[0].Metric, g[0].Unit), metricColumnWidth)
		for i := 0; i < max(len(g), len(title)); i++ {
			line := make([]string, len(headers))
			if i < len(title) {
				line[0] = title[i]
			}
			if i < len(g) {
				copy(line[1:], cells(g[i]))
			}
			b.rows = append(b.rows, line)
		}
	}
	return b
}

var (
	pairHeaders = []string{"Metric", "Stat", "Reference", "Candidate", "Diff", "Error"}
	runsHeaders = []string{"Metric", "Stat", "Reference", "[min … max]", "Candidate", "[min … max]", "Error", "p"}
)

// columns are the table's headers and a row's cells after its metric
// title: with one run per side the two values, their difference and the
// error; with several each side's median and [min … max], the error of the
// medians and the p-value.
func columns(r *Report) ([]string, func(Row) []string) {
	if r.Paired() {
		return pairHeaders, pairCells
	}
	return runsHeaders, runsCells
}

func pairCells(m Row) []string {
	return []string{statLabel(m.Stat), fmtValue(m.Stat, m.Reference), fmtValue(m.Stat, m.Candidate),
		fmtSignedValue(m.Stat, m.Diff), fmtPct(m.ErrorPct)}
}

func runsCells(m Row) []string {
	return []string{statLabel(m.Stat), fmtValue(m.Stat, m.Reference), spreadRange(m.Stat, m.RefRuns),
		fmtValue(m.Stat, m.Candidate), spreadRange(m.Stat, m.CandRuns), noiseError(m), fmtP(m.Test)}
}

func spreadRange(stat string, s Spread) string {
	return "[" + fmtValue(stat, s.Min) + " … " + fmtValue(stat, s.Max) + "]"
}

// noiseError is the error %, prefixed "~" when the runs do not differ
// significantly.
func noiseError(m Row) string {
	if m.Significant {
		return fmtPct(m.ErrorPct)
	}
	return "~ " + fmtPct(m.ErrorPct)
}

// fmtP is a row's p-value, "n/a" without a test.
func fmtP(t *UTest) string {
	if t == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.3f", t.P)
}

func onlyLines(r *Report) string {
	var sb strings.Builder
	if len(r.OnlyInReference) > 0 {
		fmt.Fprintf(&sb, "Only in reference: %s\n", strings.Join(r.OnlyInReference, ", "))
	}
	if len(r.OnlyInCandidate) > 0 {
		fmt.Fprintf(&sb, "Only in candidate: %s\n", strings.Join(r.OnlyInCandidate, ", "))
	}
	return sb.String()
}

func joinTable(j *Join) [][]string {
	rows := [][]string{{"Metric", "n", "MAPE", "mean error", "mean error %", "Pearson r", "bias", "grade"}}
	for _, m := range j.Metrics {
		rows = append(rows, []string{m.Metric, fmt.Sprint(m.N), fmtOptPct(m.MAPEPct),
			fmtSigned(m.MeanError), fmtPct(m.MeanErrorPct), fmtOptR(m.PearsonR), m.Bias, m.Grade})
	}
	return rows
}

// stallTable lists the stall figures of both runs side by side; the
// per-tenth counts only when withDeciles (they are too wide for a text
// column: see writeDecilesText).
func stallTable(a, b *Stalls, withDeciles bool) [][]string {
	rows := [][]string{{"", "Reference", "Candidate"}}
	for _, f := range stallFields {
		if f.label == decilesLabel && !withDeciles {
			continue
		}
		rows = append(rows, []string{f.label, stallCell(a, f.value), stallCell(b, f.value)})
	}
	return rows
}

const decilesLabel = "stalls per tenth of the run"

func writeDecilesText(ew *errWriter, a, b *Stalls) {
	ew.printf("  %s:\n", decilesLabel)
	for _, side := range []struct {
		name string
		s    *Stalls
	}{{"reference", a}, {"candidate", b}} {
		if side.s != nil {
			ew.printf("    %-9s  %s\n", side.name, deciles(side.s))
		}
	}
}

func deciles(s *Stalls) string { return strings.Trim(fmt.Sprint(s.ByDecile), "[]") }

func stallCell(s *Stalls, f func(*Stalls) string) string {
	if s == nil {
		return "no token gaps"
	}
	return f(s)
}

var stallFields = []struct {
	label string
	value func(*Stalls) string
}{
	{"token gaps", func(s *Stalls) string { return commas(fmt.Sprint(s.Gaps)) }},
	{"median gap (ms)", func(s *Stalls) string { return fmtNum(s.MedianGapMs) }},
	{"stall threshold (ms)", func(s *Stalls) string { return fmtNum(s.ThresholdMs) }},
	{"stalls", func(s *Stalls) string { return commas(fmt.Sprint(s.Count)) }},
	{"stalls per 1,000 gaps", func(s *Stalls) string { return fmtNum(s.Per1000Gaps) }},
	{"blocked stream time (s)", func(s *Stalls) string { return fmtNum(s.BlockedS) }},
	{"token gap p99 / p99.9 / max (ms)", func(s *Stalls) string {
		return fmtNum(s.P99Ms) + " / " + fmtNum(s.P999Ms) + " / " + fmtNum(s.MaxMs)
	}},
	{"first – last stall (s from start)", func(s *Stalls) string {
		if s.Count == 0 {
			return "–"
		}
		return fmtNum(s.FirstS) + " – " + fmtNum(s.LastS)
	}},
	{decilesLabel, deciles},
	{"overlapping another prefill", func(s *Stalls) string {
		return fmt.Sprintf("%d (%.1f%%)", s.PrefillOverlap, 100*s.OverlapShare)
	}},
	{"expected by chance (prefill coverage)", func(s *Stalls) string {
		return fmt.Sprintf("%.1f%% per %s", 100*s.PrefillCoverage, s.Scope)
	}},
	{"chunked-prefill interference suspected", func(s *Stalls) string { return yesNo(s.InterferenceSuspected) }},
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// writeBreakdownText prints the server-side TTFT breakdowns side by side
// and whether each adds up.
func writeBreakdownText(ew *errWriter, b *BreakdownComparison) {
	if b == nil {
		return
	}
	ew.printf("\nTTFT breakdown: server-side stage means over the run window (reference: %s; candidate: %s)\n",
		breakdownSource(b.Reference), breakdownSource(b.Candidate))
	ew.do(func(w io.Writer) error { return plain(w, breakdownTable(b), "ll") })
	ew.printf("  (a stage missing from a run counts as 0 ms in the diff; share = diff / TTFT mean diff)\n")
	ew.printf("  reference: %s\n  candidate: %s\n", additivityNote(b.Reference), additivityNote(b.Candidate))
}

// writeServerMetricsText prints the common server metrics side by side.
func writeServerMetricsText(ew *errWriter, rows []ServerMetricRow) {
	if len(rows) == 0 {
		return
	}
	ew.printf("\nServer metrics: server-side, over the run window, by common name (error %% = (candidate − reference)/reference × 100)\n")
	ew.do(func(w io.Writer) error { return plain(w, serverMetricsTable(rows), "lllrrrrl") })
}

func writeVerdictsText(ew *errWriter, r *Report) {
	if len(r.Verdicts) == 0 {
		return
	}
	ew.printf("\nVerdicts: %s\n", verdictSummary(r))
	ew.do(func(w io.Writer) error { return plain(w, verdictTable(r.Verdicts, r.verdictNote), "llrrl") })
}

// verdictTable has a line per verdict: status, field, error, bound and
// note.
func verdictTable(vs []Verdict, note func(Verdict) string) [][]string {
	rows := [][]string{{"status", "field", "error", "bound", ""}}
	for _, v := range vs {
		rows = append(rows, []string{strings.ToUpper(v.Status), v.Name(), fmtPct(v.ErrorPct), fmt.Sprintf("±%g%%", v.MaxPct), note(v)})
	}
	return rows
}

// verdictNote explains the verdicts that are not a plain comparison: with
// several runs per side every verdict, whose reason has the p-value.
func (r *Report) verdictNote(v Verdict) string {
	if !r.Paired() || v.Status == Missing || v.ErrorPct == nil {
		return v.Reason
	}
	return ""
}

// errWriter keeps the first write error, so renderers read straight.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

func (e *errWriter) do(f func(io.Writer) error) {
	if e.err == nil {
		e.err = f(e.w)
	}
}

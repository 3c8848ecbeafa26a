package compare

import (
	"fmt"
	"io"
	"strings"
)

// WriteMultiMarkdown writes a multi-run comparison for a pull-request
// comment: a summary line, the verdicts, the statistics that differ beyond
// noise, the full table folded in a <details> block, plot links and the
// warnings.
func WriteMultiMarkdown(w io.Writer, r *MultiReport, plots []string) error {
	ew := &errWriter{w: w}
	ew.printf("### simbench compare: %d candidate vs %d reference runs\n\n", len(r.Candidates), len(r.References))
	ew.printf("%s\n\n", multiSummaryLine(r))
	writeMultiVerdictsMarkdown(ew, r.Verdicts)
	if sig := SignificantOffenders(r.Rows, worstOffenders); len(sig) > 0 {
		ew.printf("#### Largest differences beyond run-to-run noise (p ≤ %g)\n\n", r.Options.Alpha)
		mdTable(ew, multiRowsMarkdown(sig, false), "ll")
	}
	ew.printf("<details><summary>All %d statistics (medians and [min … max] over the runs; ~ = within noise)</summary>\n\n",
		len(shownMultiRows(r.Rows)))
	ew.printf("Reference runs: %s\n\nCandidate runs: %s\n\n", mdRunList(r.References), mdRunList(r.Candidates))
	mdTable(ew, multiRowsMarkdown(shownMultiRows(r.Rows), true), "ll")
	ew.printf("</details>\n\n")
	writePlotsMarkdown(ew, plots)
	writeWarningsMarkdown(ew, r.Warnings)
	return ew.err
}

func multiSummaryLine(r *MultiReport) string {
	sig := 0
	for _, m := range r.Rows {
		if m.Significant && !m.Informational {
			sig++
		}
	}
	s := fmt.Sprintf("**%d statistics compared** over %d reference and %d candidate runs; %d differ beyond run-to-run noise (Mann–Whitney p ≤ %g)",
		len(r.Rows), len(r.References), len(r.Candidates), sig, r.Options.Alpha)
	if len(r.Verdicts) > 0 {
		s += "; gate: " + gateBadge(r.Verdicts, multiVerdictSummary)
	}
	return s + "."
}

func writeMultiVerdictsMarkdown(ew *errWriter, vs []Verdict) {
	if len(vs) == 0 {
		return
	}
	ew.printf("#### Verdicts\n\n")
	t := [][]string{{"", "Field", "Error of medians", "Bound", "Note"}}
	icons := map[string]string{Pass: "✅", Breach: "❌", Missing: "⚠️", NotSignificant: "〰️"}
	for _, v := range vs {
		t = append(t, []string{icons[v.Status] + " " + v.Status, "`" + v.Field() + "`", fmtPct(v.ErrorPct),
			fmt.Sprintf("±%g%%", v.MaxPct), v.Reason})
	}
	mdTable(ew, t, "llrrl")
}

// multiRowsMarkdown is the table of rows; grouped names the metric only on
// the first row of its group.
func multiRowsMarkdown(rows []MultiRow, grouped bool) [][]string {
	t := [][]string{append([]string(nil), multiHeaders...)}
	for i, m := range rows {
		name := metricTitle(m.Metric, m.Unit)
		if grouped && i > 0 && rows[i-1].Metric == m.Metric {
			name = ""
		}
		t = append(t, append([]string{name}, multiCells(m)...))
	}
	return t
}

func mdRunList(rs []RunInfo) string {
	names := make([]string, len(rs))
	for i, ri := range rs {
		names[i] = mdCode(ri.Path)
	}
	return strings.Join(names, ", ")
}

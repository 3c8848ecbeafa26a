package compare

import (
	"fmt"

	"github.com/simbench/simbench/results"
)

// Table is one table of a report with the cells the text and markdown
// renderers lay out, for other renderers (the HTML report): Rows[0] is the
// head; Align has a letter per column, 'l' for left and anything else for
// right; the columns after its last letter are right-aligned.
type Table struct {
	Title string
	Rows  [][]string
	Align string
	// Folded says the table is long and secondary (every statistic): a
	// renderer may fold it away.
	Folded bool
}

// Tables returns the report's tables in reading order: the verdicts, the
// headline statistics (those of the error chart), the token-gap stalls,
// the TTFT breakdown, the server metrics, the per-request join and every
// statistic.
func (r *Report) Tables() []Table {
	var out []Table
	if len(r.Verdicts) > 0 {
		out = append(out, Table{Title: "Verdicts: " + verdictSummary(r), Rows: verdictTable(r.Verdicts, r.verdictNote), Align: "llrrl"})
	}
	var headline []Row
	for _, c := range r.ChartRows() {
		headline = append(headline, c.Row)
	}
	if len(headline) > 0 {
		out = append(out, Table{Title: "Headline statistics", Rows: rowsMarkdown(r, headline, true), Align: "ll"})
	}
	if r.RefStalls != nil || r.CandStalls != nil {
		out = append(out, Table{Title: fmt.Sprintf("Token-gap stalls (gap > max(%g × median, %g ms))", r.Options.Stall.K, r.Options.Stall.FloorMs),
			Rows: stallTable(r.RefStalls, r.CandStalls, true), Align: "l"})
	}
	if b := r.TTFTBreakdown; b != nil {
		out = append(out, Table{Title: fmt.Sprintf("TTFT breakdown (server-side stage means; reference: %s; candidate: %s)",
			breakdownSource(b.Reference), breakdownSource(b.Candidate)), Rows: breakdownTable(b), Align: "ll"})
	}
	if len(r.ServerMetrics) > 0 {
		out = append(out, Table{Title: "Server metrics (server-side, over the run window, by common name)",
			Rows: serverMetricsTable(r.ServerMetrics), Align: "lllrrrrl"})
	}
	if j := r.PerRequest; j != nil {
		out = append(out, Table{Title: "Per-request join: " + j.String(), Rows: joinTable(j), Align: "lrrrrrll"})
	}
	shown := shownRows(r.Rows)
	return append(out, Table{Title: fmt.Sprintf("All %d statistics", len(shown)), Rows: rowsMarkdown(r, shown, true), Align: "ll", Folded: true})
}

// Tables returns the load-sweep comparison's tables: the SLO capacities,
// the points' headline errors, the verdicts.
func (r *SweepReport) Tables() []Table {
	out := []Table{
		{Title: "SLO capacity (" + slosText(r) + ")", Rows: r.capacityTable(), Align: "l"},
		{Title: fmt.Sprintf("Points by %s: error %% of the headline statistics (attainment and SLO met: reference / candidate)", r.Load),
			Rows: r.pointsTable(), Align: "r"},
	}
	if len(r.Verdicts) > 0 {
		out = append(out, Table{Title: "Verdicts: " + sweepVerdictSummary(r), Rows: verdictTable(r.Verdicts, sweepVerdictNote), Align: "llrrl"})
	}
	return out
}

// VerdictName is a set of verdicts in one word: ungated without any,
// incomplete when a gated field is missing, else breach on any breach, else
// pass.
func VerdictName(vs []Verdict) string {
	if len(vs) == 0 {
		return "ungated"
	}
	name := "pass"
	for _, v := range vs {
		switch v.Status {
		case Missing:
			return "incomplete"
		case Breach:
			name = "breach"
		}
	}
	return name
}

// MetricTitle is AIPerf's "Header (unit)" of a metric ("" unit: the
// header alone), the stall statistics' "Token-Gap Stalls", the tag of a
// metric AIPerf does not define: the label of a metric in tables and
// figures.
func MetricTitle(tag, unit string) string {
	if _, ok := results.Lookup(tag); !ok && tag != StallMetric {
		if unit == "" {
			return tag
		}
		return tag + " (" + unit + ")"
	}
	return metricTitle(tag, unit)
}

// StatLabel is a statistic's short label in tables and figures ("count"
// for stall_count).
func StatLabel(stat string) string { return statLabel(stat) }

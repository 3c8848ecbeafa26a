package compare

import (
	"fmt"
	"io"
	"math"
	"path"
	"slices"
	"strings"
)

// worstOffenders is how many rows the markdown summary ranks.
const worstOffenders = 5

// WriteMarkdown writes the report ready to paste into a pull request: a
// summary line, the worst offenders, the verdicts, the stalls, the TTFT
// breakdown and the per-request join, the full table folded in a <details>
// block, links to plots (paths as given, typically relative to where the
// markdown lives) and the warnings. With several runs per side the
// offenders are the statistics that differ beyond run-to-run noise and the
// table has each side's median and [min … max] and the p-value.
func WriteMarkdown(w io.Writer, r *Report, plots []string) error {
	ew := &errWriter{w: w}
	ew.printf("### simbench compare: %s\n\n", mdTitle(r))
	writeHeadlineMarkdown(ew, r)
	ew.printf("%s\n\n", summaryLine(r))
	writeOffendersMarkdown(ew, r)
	writeVerdictsMarkdown(ew, r)
	if r.RefStalls != nil || r.CandStalls != nil {
		ew.printf("#### Token-gap stalls (gap > max(%g × median, %g ms))\n\n", r.Options.Stall.K, r.Options.Stall.FloorMs)
		mdTable(ew, stallTable(r.RefStalls, r.CandStalls, true), "l")
	}
	writeBreakdownMarkdown(ew, r.TTFTBreakdown)
	writeServerMetricsMarkdown(ew, r.ServerMetrics)
	if j := r.PerRequest; j != nil {
		ew.printf("#### Per-request join\n\n%s.\n\n", j)
		mdTable(ew, joinTable(j), "lrrrrrll")
	}
	writeDetailsMarkdown(ew, r)
	writePlotsMarkdown(ew, plots)
	writeWarningsMarkdown(ew, r.Warnings)
	return ew.err
}

func mdTitle(r *Report) string {
	if r.Paired() {
		return fmt.Sprintf("`%s` vs `%s`", r.Candidate().Name, r.Reference().Name)
	}
	return fmt.Sprintf("%d candidate vs %d reference runs", len(r.Candidates), len(r.References))
}

func writeWarningsMarkdown(ew *errWriter, ws []Warning) {
	if len(ws) == 0 {
		return
	}
	ew.printf("#### Warnings\n\n")
	for _, wn := range ws {
		ew.printf("- %s\n", mdEscape(wn.Msg))
	}
	ew.printf("\n")
}

// summaryLine says in one sentence how far apart the runs are: with one
// run per side the median and worst |error|, with several how many
// statistics differ beyond run-to-run noise.
func summaryLine(r *Report) string {
	if !r.Paired() {
		return runsSummaryLine(r)
	}
	var abs []float64
	for _, row := range r.Rows {
		if !row.Informational && row.ErrorPct != nil {
			abs = append(abs, math.Abs(*row.ErrorPct))
		}
	}
	s := fmt.Sprintf("**%d statistics compared**", len(r.Rows))
	if len(abs) > 0 {
		slices.Sort(abs)
		s += fmt.Sprintf(", median |error| %.2f %%", abs[len(abs)/2])
	}
	if r.RefStalls != nil && r.CandStalls != nil {
		s += fmt.Sprintf("; token-gap stalls: %d reference, %d candidate", r.RefStalls.Count, r.CandStalls.Count)
	}
	return s + "."
}

func runsSummaryLine(r *Report) string {
	sig := 0
	for _, m := range r.Rows {
		if m.Significant && !m.Informational {
			sig++
		}
	}
	return fmt.Sprintf("**%d statistics compared** over %d reference and %d candidate runs; %d differ beyond run-to-run noise (Mann–Whitney p ≤ %g).",
		len(r.Rows), len(r.References), len(r.Candidates), sig, r.Options.Alpha)
}

// writeOffendersMarkdown ranks the rows furthest apart: with several runs
// per side only those that differ beyond noise, one per metric.
func writeOffendersMarkdown(ew *errWriter, r *Report) {
	if !r.Paired() {
		if sig := SignificantOffenders(r.Rows, worstOffenders); len(sig) > 0 {
			ew.printf("#### Largest differences beyond run-to-run noise (p ≤ %g)\n\n", r.Options.Alpha)
			mdTable(ew, rowsMarkdown(r, sig, false), "ll")
		}
		return
	}
	worst := HeadlineOffenders(r.Rows, worstOffenders)
	if len(worst) == 0 {
		return
	}
	ew.printf("#### Worst offenders (%s)\n\n", headlineScope)
	t := [][]string{{"Metric", "Stat", "Error", "Reference", "Candidate", "Diff"}}
	for _, m := range worst {
		t = append(t, []string{metricTitle(m.Metric, m.Unit), statLabel(m.Stat), fmtPct(m.ErrorPct),
			fmtValue(m.Stat, m.Reference), fmtValue(m.Stat, m.Candidate), fmtSignedValue(m.Stat, m.Diff)})
	}
	mdTable(ew, t, "ll")
}

func writeBreakdownMarkdown(ew *errWriter, b *BreakdownComparison) {
	if b == nil {
		return
	}
	ew.printf("#### TTFT breakdown\n\nServer-side stage means over the run window; reference: %s; candidate: %s. "+
		"A stage missing from a run counts as 0 ms in the diff; share = diff / TTFT mean diff.\n\n",
		mdEscape(breakdownSource(b.Reference)), mdEscape(breakdownSource(b.Candidate)))
	mdTable(ew, breakdownTable(b), "ll")
	ew.printf("- reference: %s\n- candidate: %s\n\n", mdEscape(additivityNote(b.Reference)), mdEscape(additivityNote(b.Candidate)))
}

func writeServerMetricsMarkdown(ew *errWriter, rows []ServerMetricRow) {
	if len(rows) == 0 {
		return
	}
	ew.printf("#### Server metrics\n\nServer-side, over the run window, by common name; the source is the family read.\n\n")
	t := serverMetricsTable(rows)
	for i := 1; i < len(t); i++ {
		t[i][7] = mdCode(t[i][7])
	}
	mdTable(ew, t, "lllrrrrl")
}

func writeVerdictsMarkdown(ew *errWriter, r *Report) {
	if len(r.Verdicts) == 0 {
		return
	}
	errorHeader := "Error"
	if !r.Paired() {
		errorHeader = "Error of medians"
	}
	mdVerdicts(ew, r.Verdicts, errorHeader, r.verdictNote)
}

// mdVerdicts writes the verdicts' section: a line per verdict with its
// icon, field, error, bound and note.
func mdVerdicts(ew *errWriter, vs []Verdict, errorHeader string, note func(Verdict) string) {
	ew.printf("#### Verdicts\n\n")
	t := [][]string{{"", "Field", errorHeader, "Bound", "Note"}}
	icons := map[string]string{Pass: "✅", Breach: "❌", Missing: "⚠️", NotSignificant: "〰️"}
	for _, v := range vs {
		t = append(t, []string{icons[v.Status] + " " + v.Status, "`" + v.Name() + "`", fmtPct(v.ErrorPct),
			fmt.Sprintf("±%g%%", v.MaxPct), note(v)})
	}
	mdTable(ew, t, "llrrl")
}

// writeDetailsMarkdown folds the table of every statistic in a <details>
// block, with the statistics only one side has.
func writeDetailsMarkdown(ew *errWriter, r *Report) {
	shown := shownRows(r.Rows)
	if r.Paired() {
		ew.printf("<details><summary>All %d statistics (reference: %s, candidate: %s)</summary>\n\n",
			len(shown), mdCode(r.Reference().Path), mdCode(r.Candidate().Path))
	} else {
		ew.printf("<details><summary>All %d statistics (medians and [min … max] over the runs; ~ = within noise)</summary>\n\n", len(shown))
		ew.printf("Reference runs: %s\n\nCandidate runs: %s\n\n", mdRunList(r.References), mdRunList(r.Candidates))
	}
	mdTable(ew, rowsMarkdown(r, shown, true), "ll")
	ew.printf("%s</details>\n\n", mdOnly(r))
}

// rowsMarkdown is the table of rows; grouped names the metric only on the
// first row of its group.
func rowsMarkdown(r *Report, rows []Row, grouped bool) [][]string {
	headers, cells := columns(r)
	t := [][]string{slices.Clone(headers)}
	for i, m := range rows {
		name := metricTitle(m.Metric, m.Unit)
		if grouped && i > 0 && rows[i-1].Metric == m.Metric {
			name = ""
		}
		t = append(t, append([]string{name}, cells(m)...))
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

func mdOnly(r *Report) string {
	var sb strings.Builder
	for _, side := range []struct {
		name string
		tags []string
	}{{"reference", r.OnlyInReference}, {"candidate", r.OnlyInCandidate}} {
		if len(side.tags) > 0 {
			fmt.Fprintf(&sb, "Only in the %s: `%s`\n\n", side.name, strings.Join(side.tags, "`, `"))
		}
	}
	return sb.String()
}

func writePlotsMarkdown(ew *errWriter, plots []string) {
	if len(plots) == 0 {
		return
	}
	ew.printf("#### Plots\n\n")
	for _, p := range plots {
		name := strings.TrimSuffix(path.Base(p), ".png")
		ew.printf("![%s](%s)\n", name, p)
	}
	ew.printf("\n")
}

// mdTable writes a GitHub table; align has one letter per column, 'l' for
// left and anything else for right.
func mdTable(ew *errWriter, rows [][]string, align string) {
	for i, r := range rows {
		cells := make([]string, len(r))
		for j, c := range r {
			cells[j] = mdEscape(c)
		}
		ew.printf("| %s |\n", strings.Join(cells, " | "))
		if i == 0 {
			seps := make([]string, len(r))
			for j := range r {
				seps[j] = "---:"
				if j < len(align) && align[j] == 'l' {
					seps[j] = "---"
				}
			}
			ew.printf("|%s|\n", strings.Join(seps, "|"))
		}
	}
	ew.printf("\n")
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func mdCode(s string) string {
	return "<code>" + strings.NewReplacer("<", "&lt;", ">", "&gt;").Replace(s) + "</code>"
}

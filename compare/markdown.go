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
// breakdown and the per-request join, the full table folded in a <details> block, links to
// plots (paths as given, typically relative to where the markdown lives)
// and the warnings.
func WriteMarkdown(w io.Writer, r *Report, plots []string) error {
	ew := &errWriter{w: w}
	ew.printf("### simbench compare: `%s` vs `%s`\n\n", r.Candidate.Name, r.Reference.Name)
	ew.printf("%s\n\n", summaryLine(r))
	writeWorstMarkdown(ew, r.Rows)
	writeVerdictsMarkdown(ew, r.Verdicts)
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
	ew.printf("<details><summary>All %d statistics (reference: %s, candidate: %s)</summary>\n\n",
		len(shownRows(r.Rows)), mdCode(r.Reference.Path), mdCode(r.Candidate.Path))
	mdTable(ew, metricRowsMarkdown(r.Rows), "ll")
	ew.printf("%s</details>\n\n", mdOnly(r))
	writePlotsMarkdown(ew, plots)
	writeWarningsMarkdown(ew, r.Warnings)
	return ew.err
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

// summaryLine says in one sentence how far apart the runs are.
func summaryLine(r *Report) string {
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
	if worst := WorstOffenders(r.Rows, 1); len(worst) > 0 {
		s += fmt.Sprintf(", worst `%s.%s` %s", worst[0].Metric, worst[0].Stat, fmtPct(worst[0].ErrorPct))
	}
	if len(r.Verdicts) > 0 {
		s += "; gate: " + gateBadge(r.Verdicts, verdictSummary)
	}
	if r.RefStalls != nil && r.CandStalls != nil {
		s += fmt.Sprintf("; token-gap stalls: %d reference, %d candidate", r.RefStalls.Count, r.CandStalls.Count)
	}
	return s + "."
}

// gateBadge is the markdown summary's verdict: incomplete when a gated
// field is missing, else fail on any breach; summary counts the verdicts.
func gateBadge(vs []Verdict, summary func([]Verdict) string) string {
	b := "✅ pass"
	for _, v := range vs {
		if v.Status == Missing {
			return "⚠️ incomplete (" + summary(vs) + ")"
		}
		if v.Status == Breach {
			b = "❌ fail"
		}
	}
	return b + " (" + summary(vs) + ")"
}

func writeWorstMarkdown(ew *errWriter, rows []Row) {
	worst := WorstOffenders(rows, worstOffenders)
	if len(worst) == 0 {
		return
	}
	ew.printf("#### Worst offenders\n\n")
	t := [][]string{{"Metric", "Stat", "Error", "Reference", "Candidate", "Diff"}}
	for _, r := range worst {
		t = append(t, []string{metricTitle(r.Metric, r.Unit), statLabel(r.Stat), fmtPct(r.ErrorPct),
			fmtValue(r.Stat, r.Reference), fmtValue(r.Stat, r.Candidate), fmtSignedValue(r.Stat, r.Diff)})
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

func writeVerdictsMarkdown(ew *errWriter, vs []Verdict) {
	if len(vs) == 0 {
		return
	}
	ew.printf("#### Verdicts\n\n")
	t := [][]string{{"", "Field", "Error", "Bound", "Note"}}
	icons := map[string]string{Pass: "✅", Breach: "❌", Missing: "⚠️"}
	for _, v := range vs {
		t = append(t, []string{icons[v.Status] + " " + v.Status, "`" + v.Field() + "`", fmtPct(v.ErrorPct),
			fmt.Sprintf("±%g%%", v.MaxPct), verdictNote(v)})
	}
	mdTable(ew, t, "llrrl")
}

func metricRowsMarkdown(rows []Row) [][]string {
	t := [][]string{{"Metric", "Stat", "Reference", "Candidate", "Diff", "Error"}}
	for _, g := range groups(shownRows(rows)) {
		for i, r := range g {
			name := ""
			if i == 0 {
				name = metricTitle(r.Metric, r.Unit)
			}
			t = append(t, []string{name, statLabel(r.Stat), fmtValue(r.Stat, r.Reference),
				fmtValue(r.Stat, r.Candidate), fmtSignedValue(r.Stat, r.Diff), fmtPct(r.ErrorPct)})
		}
	}
	return t
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

package validate

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/simbench/simbench/compare"
	"github.com/simbench/simbench/plots"
	"github.com/simbench/simbench/plots/figures"
)

// WriteHistoryTable prints the header rows of the last n validations and
// one row per statistic.
func WriteHistoryTable(w io.Writer, path string, entries []HistoryEntry, n int) error {
	first := max(0, len(entries)-n)
	shown := entries[first:]
	var rows [][]string
	row := func(label string, cell func(i int, e HistoryEntry) string) {
		r := []string{label}
		for i, e := range shown {
			r = append(r, cell(first+i+1, e))
		}
		rows = append(rows, r)
	}
	row("validation", func(i int, _ HistoryEntry) string { return fmt.Sprintf("#%d", i) })
	row("time (UTC)", func(_ int, e HistoryEntry) string {
		return strings.TrimSuffix(strings.Replace(e.Time, "T", " ", 1), "Z")
	})
	row("commit", func(_ int, e HistoryEntry) string { return orDash(shortSHA(e.Commit)) })
	row("verdict", func(_ int, e HistoryEntry) string { return e.Verdict })
	for _, f := range historyFields(shown) {
		row(f, func(_ int, e HistoryEntry) string {
			if v, ok := e.Metrics[f]; ok {
				return fmt.Sprintf("%+.2f%%", v)
			}
			return "–"
		})
	}
	_, err := fmt.Fprintf(w, "%s: %d validations (showing %d–%d)\n\n%s", path, len(entries), first+1, len(entries), alignRows(rows))
	return err
}

// alignRows lays rows out in columns, the first aligned left, the others
// right, two spaces apart.
func alignRows(rows [][]string) string {
	var widths []int
	for _, r := range rows {
		for i, c := range r {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	var sb strings.Builder
	for _, r := range rows {
		for i, c := range r {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
			if i == 0 {
				sb.WriteString("  " + c + pad)
			} else {
				sb.WriteString("  " + pad + c)
			}
		}
		sb.WriteString("\n")
	}
	return sb.String()
}

func shortSHA(s string) string { return s[:min(len(s), 10)] }

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// historyFields lists every recorded statistic, sorted by metric and then
// by its place in AIPerf's statistic order.
func historyFields(entries []HistoryEntry) []string {
	var out []string
	for _, e := range entries {
		for f := range e.Metrics {
			if !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
	}
	slices.SortFunc(out, func(a, b string) int {
		ma, sa, _ := strings.Cut(a, ".")
		mb, sb, _ := strings.Cut(b, ".")
		return cmp.Or(strings.Compare(ma, mb), cmp.Compare(statIndex(sa), statIndex(sb)))
	})
	return out
}

// historyStatOrder is the order of statistics in the table and legends.
var historyStatOrder = []string{"avg", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "p99.9", "min", "max", "std",
	"stall_count", "stalls_per_1000_gaps", "blocked_stream_time_s"}

func statIndex(s string) int {
	if i := slices.Index(historyStatOrder, s); i >= 0 {
		return i
	}
	return len(historyStatOrder)
}

// WriteHistoryPlots draws one PNG per metric: its statistics' error % by
// validation number (1 = oldest).
func WriteHistoryPlots(dir string, entries []HistoryEntry) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	byMetric := map[string][]plots.HistoryLine{}
	var metrics []string
	for _, f := range historyFields(entries) {
		metric, stat, _ := strings.Cut(f, ".")
		line := plots.HistoryLine{Name: compare.StatLabel(stat)}
		for i, e := range entries {
			if v, ok := e.Metrics[f]; ok {
				line.X, line.Y = append(line.X, float64(i+1)), append(line.Y, v)
			}
		}
		if len(byMetric[metric]) == 0 {
			metrics = append(metrics, metric)
		}
		byMetric[metric] = append(byMetric[metric], line)
	}
	w := &figures.Writer{Dir: dir}
	for _, m := range metrics {
		title := fmt.Sprintf("%s: error %% across %d validations", compare.MetricTitle(m, ""), len(entries))
		bound := latestBound(entries, m)
		w.Add("history_"+m+".png", func() (plots.Figure, error) { return plots.ErrorHistory(title, bound, byMetric[m]...) })
	}
	paths, err := w.Run()
	if err == nil && len(paths) == 0 {
		err = fmt.Errorf("%s: no error %% recorded in any validation: nothing to plot", filepath.Clean(dir))
	}
	return paths, err
}

// latestBound is the single bound the latest validation set on metric's
// statistics, or 0 when it set none or several different ones.
func latestBound(entries []HistoryEntry, metric string) float64 {
	bound := 0.0
	for f, b := range entries[len(entries)-1].Bounds {
		if m, _, _ := strings.Cut(f, "."); m == metric {
			if bound != 0 && bound != b {
				return 0
			}
			bound = b
		}
	}
	return bound
}

package compare

import (
	"slices"

	"github.com/simbench/simbench/results"
)

// chartMetrics and chartStats select the error chart's bars: the headline
// latency and throughput figures and the stall figures. Gated statistics
// are always added.
var (
	chartMetrics = []string{results.TagTTFT, results.TagTTST, results.TagITL, results.TagRequestLatency,
		results.TagOTPU, results.TagTokenGap, results.TagOutputThroughput, results.TagRequestThroughput, StallMetric}
	chartStats = []string{"avg", "p50", "p90", "p99", "p99.9", "stall_count", "stalls_per_1000_gaps", "blocked_stream_time_s"}
)

// ChartRow is a row of the error chart with its bound (0 when ungated).
type ChartRow struct {
	Row
	BoundPct float64
}

// ChartRows returns the rows worth a bar in an error chart, in row order:
// the headline statistics of the headline metrics and every gated
// statistic, when their error (of the medians, with several runs per side)
// is defined.
func (r *Report) ChartRows() []ChartRow {
	var out []ChartRow
	for _, row := range r.Rows {
		bound := r.bound(row)
		headline := slices.Contains(chartMetrics, row.Metric) && slices.Contains(chartStats, row.Stat)
		if row.ErrorPct != nil && (headline || bound > 0) {
			out = append(out, ChartRow{Row: row, BoundPct: bound})
		}
	}
	return out
}

func (r *Report) bound(row Row) float64 {
	for _, t := range r.Options.Thresholds {
		if t.Metric == row.Metric && t.Stat == row.Stat {
			return t.MaxPct
		}
	}
	return 0
}

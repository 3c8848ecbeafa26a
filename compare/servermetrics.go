package compare

import (
	"path/filepath"

	"github.com/simbench/simbench/servermetrics"
)

// ServerMetricRow compares one statistic of one server metric of the
// common vocabulary (servermetrics.Vocabulary) between the runs.
type ServerMetricRow struct {
	Metric, Stat, Unit    string
	RefServer, CandServer string // differ only when the runs share no server for the metric
	RefFamily, CandFamily string
	Reference, Candidate  float64
	Diff                  float64
	ErrorPct              *float64 // nil when the reference is 0 and the candidate is not
}

// CompareServerMetrics lines up two runs' common server metrics: for each
// metric, the servers both runs have; when they share none, each run's
// first (say vLLM's queue time against SGLang's). Metrics only one run has
// are left out.
func CompareServerMetrics(ref, cand []servermetrics.CommonMetric) []ServerMetricRow {
	var rows []ServerMetricRow
	for _, name := range commonNames(ref) {
		a, b := withName(ref, name), withName(cand, name)
		if len(b) == 0 {
			continue
		}
		pairs := 0
		for _, x := range a {
			for _, y := range b {
				if x.Server == y.Server {
					rows = append(rows, metricRows(x, y)...)
					pairs++
				}
			}
		}
		if pairs == 0 {
			rows = append(rows, metricRows(a[0], b[0])...)
		}
	}
	return rows
}

func commonNames(ms []servermetrics.CommonMetric) []string {
	var names []string
	seen := map[string]bool{}
	for _, m := range ms {
		if !seen[m.Name] {
			seen[m.Name] = true
			names = append(names, m.Name)
		}
	}
	return names
}

func withName(ms []servermetrics.CommonMetric, name string) []servermetrics.CommonMetric {
	var out []servermetrics.CommonMetric
	for _, m := range ms {
		if m.Name == name {
			out = append(out, m)
		}
	}
	return out
}

// metricRows compares the statistics both sides have, in the reference's
// order.
func metricRows(a, b servermetrics.CommonMetric) []ServerMetricRow {
	var rows []ServerMetricRow
	for _, st := range a.Stats {
		cv, ok := b.Stats.Get(st.Name)
		if !ok {
			continue
		}
		rows = append(rows, ServerMetricRow{Metric: a.Name, Stat: st.Name, Unit: statUnit(a, st.Name),
			RefServer: a.Server, CandServer: b.Server, RefFamily: a.Family, CandFamily: b.Family,
			Reference: st.Value, Candidate: cv, Diff: cv - st.Value, ErrorPct: errorPct(st.Value, cv)})
	}
	return rows
}

// statUnit is the unit of one statistic: a count has none of the
// metric's, a rate is per second.
func statUnit(m servermetrics.CommonMetric, stat string) string {
	switch stat {
	case "count":
		return "observations"
	case "rate":
		return m.Unit + "/s"
	}
	return m.Unit
}

// ServerSide is what a run's server-side metrics files say: its TTFT
// breakdowns (best source first) and its metrics by common name.
type ServerSide struct {
	Breakdowns []*servermetrics.TTFTBreakdown
	Metrics    []servermetrics.CommonMetric
}

// LoadServerSide reads the server_metrics_export.json beside a run
// (simbench's or AIPerf's), else its ttft_breakdown.json. A file that cannot
// be read is a warning, never an error: server metrics are a supplement.
func LoadServerSide(in *Input) (ServerSide, []Warning) {
	var ss ServerSide
	var warns []Warning
	dir := in.Dir()
	if dir == "" {
		return ss, nil
	}
	if path := filepath.Join(dir, servermetrics.JSONName); isFile(path) {
		e, err := servermetrics.LoadJSON(path)
		if err != nil {
			warns = append(warns, warnf("%s: server metrics not read: %v", in.Name, err))
		} else {
			ss.Breakdowns, ss.Metrics = servermetrics.TTFTBreakdowns(e), servermetrics.CommonMetrics(e)
		}
	}
	if path := filepath.Join(dir, servermetrics.TTFTBreakdownName); len(ss.Breakdowns) == 0 && isFile(path) {
		b, err := servermetrics.LoadTTFTBreakdownJSON(path)
		if err != nil {
			warns = append(warns, warnf("%s: TTFT breakdown not read: %v", in.Name, err))
		} else {
			ss.Breakdowns = []*servermetrics.TTFTBreakdown{b}
		}
	}
	return ss, warns
}

// addServerSide reads both runs' server-side files once and compares their
// TTFT breakdowns and their metrics by common name.
func (r *Report) addServerSide(ref, cand *Input) {
	a, w := LoadServerSide(ref)
	r.Warnings = append(r.Warnings, w...)
	b := a
	if cand != ref {
		b, w = LoadServerSide(cand)
		r.Warnings = append(r.Warnings, w...)
	}
	r.addBreakdown(a.Breakdowns, b.Breakdowns)
	if len(a.Metrics) > 0 && len(b.Metrics) > 0 {
		r.ServerMetrics = CompareServerMetrics(a.Metrics, b.Metrics)
	}
}

// serverMetricsTable is the section's table, for text and markdown.
func serverMetricsTable(rows []ServerMetricRow) [][]string {
	t := [][]string{{"Metric", "Stat", "Unit", "Reference", "Candidate", "Diff", "Error", "Source"}}
	for _, r := range rows {
		src := r.RefFamily
		if r.RefFamily != r.CandFamily {
			src = r.RefFamily + " vs " + r.CandFamily
		}
		t = append(t, []string{r.Metric, r.Stat, r.Unit, fmtNum(r.Reference), fmtNum(r.Candidate),
			fmtSigned(r.Diff), fmtPct(r.ErrorPct), src})
	}
	return t
}

package compare

import (
	"path/filepath"

	"github.com/simbench/simbench/results"
)

// ServerMetricRow compares one statistic of one server metric of the
// common vocabulary (results.ServerMetricVocabulary) between the runs.
type ServerMetricRow struct {
	Metric, Stat, Unit    string
	RefServer, CandServer string // differ only when the runs share no server for the metric
	RefFamily, CandFamily string
	Reference, Candidate  float64
	Diff                  float64
	ErrorPct              *float64 // nil when the reference is 0 and the candidate is not
}

// SameServer reports whether both sides read the metric from the same kind
// of server (so from the same family).
func (r ServerMetricRow) SameServer() bool { return r.RefServer == r.CandServer }

// CompareServerMetrics lines up two runs' common server metrics: for each
// metric, the servers both runs have; when they share none, each run's
// first (say vLLM's queue time against SGLang's). Metrics only one run has
// are left out.
func CompareServerMetrics(ref, cand []results.CommonMetric) []ServerMetricRow {
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

func commonNames(ms []results.CommonMetric) []string {
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

func withName(ms []results.CommonMetric, name string) []results.CommonMetric {
	var out []results.CommonMetric
	for _, m := range ms {
		if m.Name == name {
			out = append(out, m)
		}
	}
	return out
}

// metricRows compares the statistics both sides have, in the reference's
// order.
func metricRows(a, b results.CommonMetric) []ServerMetricRow {
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
func statUnit(m results.CommonMetric, stat string) string {
	switch stat {
	case "count":
		return "observations"
	case "rate":
		return m.Unit + "/s"
	}
	return m.Unit
}

// LoadServerMetrics reads the common server metrics of a run from the
// server_metrics_export.json beside it (simbench's or AIPerf's); none
// without one. A file that cannot be read is a warning.
func LoadServerMetrics(in *Input) ([]results.CommonMetric, []Warning) {
	dir := in.Dir()
	if dir == "" {
		return nil, nil
	}
	path := filepath.Join(dir, results.ServerMetricsJSONName)
	if !isFile(path) {
		return nil, nil
	}
	e, err := results.LoadServerMetricsJSON(path)
	if err != nil {
		return nil, []Warning{warnf("%s: server metrics not read: %v", in.Name, err)}
	}
	return results.CommonServerMetrics(e), nil
}

// addServerMetrics compares the runs' common server metrics when both have
// server metrics.
func (r *Report) addServerMetrics(ref, cand *Input) {
	a, w := LoadServerMetrics(ref)
	r.Warnings = append(r.Warnings, w...)
	b := a
	if cand != ref {
		b, w = LoadServerMetrics(cand)
		r.Warnings = append(r.Warnings, w...)
	}
	if len(a) == 0 || len(b) == 0 {
		return
	}
	r.ServerMetrics = CompareServerMetrics(a, b)
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

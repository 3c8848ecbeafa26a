package servermetrics

import (
	"math"
	"slices"

	"github.com/simbench/simbench/results"
)

// CommonMetric is one vocabulary metric as one server exposes it in an
// export, combined over the server's endpoints and label sets (summed, or
// averaged for ratios): what lines up between runs against different
// servers, or a server and the simulator.
type CommonMetric struct {
	Name   string // the common name (Vocabulary)
	Server string
	Family string // the family it was read from
	Kind   Kind
	Unit   string // display unit: seconds become ms
	// Stats: histograms count and avg (Σsum/Σcount); counters total and
	// rate; gauges avg (summed over series, or averaged for ratios).
	Stats StatValues
}

// CommonMetrics summarises the export in the common vocabulary: one
// entry per vocabulary metric and server whose family the export has with
// data, in vocabulary order. A server listing several families for one
// metric (vLLM's renamed ones) contributes its first present one.
func CommonMetrics(e *Export) []CommonMetric {
	var out []CommonMetric
	for _, info := range Vocabulary() {
		if info.Combine == "" {
			continue
		}
		done := map[string]bool{}
		for _, src := range info.Families {
			if done[src.Server] {
				continue
			}
			m, ok := e.Metrics[src.Family]
			if !ok || m.Type != info.Kind || len(m.Series) == 0 {
				continue
			}
			cm, ok := combine(info, src, m)
			if ok {
				done[src.Server] = true
				out = append(out, cm)
				out = append(out, byRole(info, src, m)...)
			}
		}
	}
	return append(out, specRatios(out)...)
}

// specRatios derives, for each server whose speculative decoding counters
// the metrics hold with drafts in the window, the acceptance rate and the
// mean accepted length (stat avg), as results.SpecDecode defines them.
func specRatios(ms []CommonMetric) []CommonMetric {
	total := func(name, server string) float64 {
		for _, m := range ms {
			if m.Name == name && m.Server == server {
				v, _ := m.Stats.Get("total")
				return v
			}
		}
		return 0
	}
	var out []CommonMetric
	for _, m := range ms {
		if m.Name != SpecDrafts {
			continue
		}
		s := results.SpecDecode{Drafts: total(SpecDrafts, m.Server), DraftTokens: total(SpecDraftTokens, m.Server),
			AcceptedTokens: total(SpecAcceptedTokens, m.Server)}
		if !s.Valid() {
			continue
		}
		out = append(out,
			CommonMetric{Name: SpecAcceptanceRate, Server: m.Server, Family: m.Family, Kind: KindGauge, Unit: "ratio",
				Stats: StatValues{{"avg", s.AcceptanceRate()}}},
			CommonMetric{Name: SpecMeanAcceptedLength, Server: m.Server, Family: m.Family, Kind: KindGauge, Unit: "tokens",
				Stats: StatValues{{"avg", s.MeanAcceptedLength()}}})
	}
	return out
}

func combine(info MetricInfo, src FamilySource, m *Metric) (CommonMetric, bool) {
	cm := CommonMetric{Name: info.Name, Server: src.Server, Family: src.Family, Kind: info.Kind, Unit: info.Unit}
	scale := 1.0
	if info.Unit == "seconds" {
		cm.Unit, scale = "ms", 1000
	}
	switch info.Kind {
	case KindHistogram:
		count, sum := sumStat(m, "count"), sumStat(m, "sum")
		if count <= 0 {
			return cm, false
		}
		cm.Stats = StatValues{{"count", count}, {"avg", scale * sum / count}}
	case KindCounter:
		cm.Stats = StatValues{{"total", sumStat(m, "total")}, {"rate", sumStat(m, "rate")}}
	default:
		avg := sumStat(m, "avg")
		if info.Combine == "mean" {
			avg /= float64(countStat(m, "avg"))
		}
		cm.Stats = StatValues{{"avg", avg}}
	}
	for _, v := range cm.Stats {
		if math.IsNaN(v.Value) || math.IsInf(v.Value, 0) {
			return cm, false
		}
	}
	return cm, true
}

// RoleLabel is the label of a disaggregated deployment's engine series:
// the worker's pool (prefill or decode), as simbench's simulator writes it.
const RoleLabel = "role"

// byRole is the metric once per pool role (named "ttft/prefill", …) when
// its series carry RoleLabel: a sum over prefill and decode workers mixes
// two different requests (the prefill's and the decode's), so each pool is
// also reported on its own.
func byRole(info MetricInfo, src FamilySource, m *Metric) []CommonMetric {
	var roles []string
	for i := range m.Series {
		if r := m.Series[i].Labels[RoleLabel]; r != "" && !slices.Contains(roles, r) {
			roles = append(roles, r)
		}
	}
	slices.Sort(roles)
	var out []CommonMetric
	for _, role := range roles {
		sub := *m
		sub.Series = nil
		for i := range m.Series {
			if m.Series[i].Labels[RoleLabel] == role {
				sub.Series = append(sub.Series, m.Series[i])
			}
		}
		if cm, ok := combine(info, src, &sub); ok {
			cm.Name += "/" + role
			out = append(out, cm)
		}
	}
	return out
}

// sumStat adds a statistic over a family's series (missing ones count 0).
func sumStat(m *Metric, name string) float64 {
	var s float64
	for i := range m.Series {
		if v, ok := m.Series[i].Stat(name); ok {
			s += v
		}
	}
	return s
}

func countStat(m *Metric, name string) int {
	n := 0
	for i := range m.Series {
		if _, ok := m.Series[i].Stat(name); ok {
			n++
		}
	}
	return n
}

package peerruns

import (
	"encoding/json"
	"math"
	"strconv"

	"github.com/simbench/simbench/results"
)

// aiperfPercentiles are the percentiles AIPerf writes.
var aiperfPercentiles = map[float64]string{1: "p1", 5: "p5", 10: "p10", 25: "p25", 50: "p50", 75: "p75", 90: "p90", 95: "p95", 99: "p99"}

// percentileStat names percentile p (99, 99.9, …) as AIPerf's statistic;
// false when AIPerf has no such percentile.
func percentileStat(p string) (string, bool) {
	v, err := strconv.ParseFloat(p, 64)
	if err != nil {
		return "", false
	}
	name, ok := aiperfPercentiles[v]
	return name, ok
}

// profile collects a run's metrics in display units.
type profile struct {
	p *results.Profile
}

// newProfile starts a profile in the schema simbench writes, so that
// summarize's files are AIPerf's.
func newProfile() *profile {
	return &profile{p: &results.Profile{SchemaVersion: results.SchemaVersion}}
}

// encodeInputConfig writes ic with the format the run was read from, as
// input_config.converted_from.
func encodeInputConfig(ic results.InputConfig, format string) (json.RawMessage, error) {
	from, err := json.Marshal(map[string]string{"format": format})
	if err != nil {
		return nil, err
	}
	ic.Unknown = map[string]json.RawMessage{"converted_from": from}
	return ic.Encode()
}

// dist adds record metric tag from statistics already named as AIPerf's
// (avg, p50, std, …), multiplied by scale; non-finite values are dropped.
func (b *profile) dist(tag string, stats map[string]float64, scale float64) {
	out := make(map[string]float64, len(stats))
	for k, v := range stats {
		if v *= scale; finite(v) {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return
	}
	d, _ := results.Lookup(tag)
	b.p.Metrics = append(b.p.Metrics, results.MetricResult{Tag: tag, Unit: d.Unit, Stats: out})
}

// scalar adds run-level metric tag when v is finite.
func (b *profile) scalar(tag string, v float64) {
	if !finite(v) {
		return
	}
	d, _ := results.Lookup(tag)
	b.p.Metrics = append(b.p.Metrics, results.MetricResult{Tag: tag, Unit: d.Unit, Stats: map[string]float64{"avg": v}})
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// appendDerived appends a request's AIPerf-derived metrics (results.Derive:
// inter_token_latency, output_token_throughput_per_user,
// prefill_throughput_per_user), those it has, to the lists given; a nil
// list pointer skips that metric.
func appendDerived(latencyMs, ttftMs, isl, osl float64, itl, otpu, prefill *[]float64) {
	d := results.Derive(latencyMs, ttftMs, isl, osl)
	for _, m := range []struct {
		ok   bool
		v    float64
		list *[]float64
	}{{d.HasITL, d.ITL, itl}, {d.HasOTPU, d.OTPU, otpu}, {d.HasPrefill, d.PrefillPerUser, prefill}} {
		if m.ok && m.list != nil {
			*m.list = append(*m.list, m.v)
		}
	}
}

package results

import (
	"cmp"
	"encoding/json"
	"math"
	"slices"
)

// SchemaVersion is the profile_export_aiperf.json schema simbench writes:
// AIPerf 1.1 (count and sum on record metrics).
const SchemaVersion = "1.1"

// MetricResult is one metric of a profile in display units. Record metrics
// carry every statistic (see StatNames); aggregate metrics carry only "avg".
// Statistics that a file did not have are absent from Stats.
type MetricResult struct {
	Tag   string
	Unit  string
	Stats map[string]float64
}

// Get returns one statistic.
func (m MetricResult) Get(stat string) (float64, bool) {
	v, ok := m.Stats[stat]
	return v, ok
}

// Scalar reports whether the metric is a run-level scalar ({unit, avg}).
func (m MetricResult) Scalar() bool {
	_, hasP50 := m.Stats["p50"]
	_, hasMax := m.Stats["max"]
	return !hasP50 && !hasMax
}

// Header is AIPerf's display name of the metric.
func (m MetricResult) Header() string {
	d, _ := Lookup(m.Tag)
	return d.Header
}

// Profile is a run's aggregate: the content of profile_export_aiperf.json.
type Profile struct {
	SchemaVersion string
	AIPerfVersion string
	BenchmarkID   string
	Metrics       []MetricResult
	InputConfig   json.RawMessage
	WasCancelled  bool
	ErrorSummary  []ErrorCount
	StartTime     string // naive ISO local time, as AIPerf writes it
	EndTime       string
	// MinRequestNs and MaxResponseNs bound the benchmark window (wall ns).
	// They are not written (AIPerf hides them since 2026-02).
	MinRequestNs, MaxResponseNs int64
}

// Metric returns the metric with tag.
func (p *Profile) Metric(tag string) (MetricResult, bool) {
	for _, m := range p.Metrics {
		if m.Tag == tag {
			return m, true
		}
	}
	return MetricResult{}, false
}

// Value returns metric tag's statistic stat.
func (p *Profile) Value(tag, stat string) (float64, bool) {
	m, ok := p.Metric(tag)
	if !ok {
		return 0, false
	}
	return m.Get(stat)
}

// MedianValue is the median (numpy-linear p50) of tag.stat over repeated
// runs' profiles, of those that have a finite value, and how many did.
func MedianValue(profs []*Profile, tag, stat string) (median float64, n int) {
	vs := make([]float64, 0, len(profs))
	for _, p := range profs {
		if v, ok := p.Value(tag, stat); ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return 0, 0
	}
	slices.Sort(vs)
	return PercentileSorted(vs, 50), len(vs)
}

// addDistribution summarizes values, sorting them in place: the aggregator's
// slices are its own and nothing depends on their order.
func (p *Profile) addDistribution(tag string, values []float64) {
	if len(values) == 0 {
		return
	}
	s, ok := Summarize(values)
	if !ok {
		return
	}
	d, _ := Lookup(tag)
	p.Metrics = append(p.Metrics, MetricResult{Tag: tag, Unit: d.Unit, Stats: s.Stats()})
}

func (p *Profile) addScalar(tag string, v float64) {
	d, _ := Lookup(tag)
	p.Metrics = append(p.Metrics, MetricResult{Tag: tag, Unit: d.Unit, Stats: map[string]float64{"avg": v}})
}

// sortMetrics puts metrics in AIPerf's key order; unknown tags keep their
// relative order after the known ones.
func (p *Profile) sortMetrics() {
	slices.SortStableFunc(p.Metrics, func(a, b MetricResult) int { return cmp.Compare(order(a.Tag), order(b.Tag)) })
}

// Attainment is the run's SLO attainment (slo_attainment): the share of
// requests that met every --goodput SLO, good_request_count over valid plus
// failed requests (request_count + error_request_count), as AIPerf's
// good_request_fraction: a failed request counts against it, whatever
// --max-error-rate says. It is the one definition simbench uses (the
// aggregate's slo_attainment, sweeps' meets_slo, compare); it is computed
// from the counts when the profile has them (a stored slo_attainment of an
// older simbench divided by valid requests only), else read from
// slo_attainment. It is false without goodput or without a valid request.
func (p *Profile) Attainment() (float64, bool) {
	good, okG := p.Value(TagGoodRequestCount, "avg")
	valid, okV := p.Value(TagRequestCount, "avg")
	if okG && okV && valid > 0 {
		failed, _ := p.Value(TagErrorRequestCount, "avg")
		return attainment(good, valid, failed), true
	}
	if v, ok := p.Value(TagAttainment, "avg"); ok {
		return v, true
	}
	return 0, false
}

// attainment is good / (valid + failed) requests, valid > 0.
func attainment(good, valid, failed float64) float64 { return good / (valid + failed) }

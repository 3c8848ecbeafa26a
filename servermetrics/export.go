package servermetrics

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/simbench/simbench/internal/warning"
	"github.com/simbench/simbench/results"
)

// SchemaVersion is the schema_version of AIPerf's
// server_metrics_export.json that simbench writes.
const SchemaVersion = "1.0"

// histogramEstimator says how histogram percentiles are estimated: AIPerf
// uses a polynomial estimator; simbench uses Prometheus' histogram_quantile
// (linear within a bucket), so p*_estimate values differ from AIPerf's.
const histogramEstimator = "prometheus histogram_quantile: linear interpolation within the bucket"

// Export is AIPerf's server_metrics_export.json: per metric
// family and per series (endpoint × labels), statistics over the profiling
// window.
type Export struct {
	SchemaVersion string             `json:"schema_version"`
	BenchmarkID   string             `json:"benchmark_id,omitempty"`
	Summary       Summary            `json:"summary"`
	Metrics       map[string]*Metric `json:"metrics"`
	Simbench      *Extension         `json:"simbench,omitempty"`
	InputConfig   any                `json:"input_config,omitempty"`
}

// Summary is the export's summary section.
type Summary struct {
	EndpointsConfigured []string                 `json:"endpoints_configured"`
	EndpointsSuccessful []string                 `json:"endpoints_successful"`
	StartTime           string                   `json:"start_time,omitempty"`
	EndTime             string                   `json:"end_time,omitempty"`
	EndpointInfo        map[string]*EndpointInfo `json:"endpoint_info,omitempty"`
}

// EndpointInfo is the collection metadata of one endpoint.
type EndpointInfo struct {
	TotalFetches           int      `json:"total_fetches"`
	FirstFetchNs           int64    `json:"first_fetch_ns,omitempty"`
	LastFetchNs            int64    `json:"last_fetch_ns,omitempty"`
	AvgFetchLatencyMs      *PyFloat `json:"avg_fetch_latency_ms,omitempty"`
	UniqueUpdates          int      `json:"unique_updates"`
	FirstUpdateNs          int64    `json:"first_update_ns,omitempty"`
	LastUpdateNs           int64    `json:"last_update_ns,omitempty"`
	DurationSeconds        *PyFloat `json:"duration_seconds,omitempty"`
	AvgUpdateIntervalMs    *PyFloat `json:"avg_update_interval_ms,omitempty"`
	MedianUpdateIntervalMs *PyFloat `json:"median_update_interval_ms,omitempty"`
}

// Extension is what simbench adds to the export.
type Extension struct {
	WindowStartNs      int64          `json:"window_start_ns"`
	WindowEndNs        int64          `json:"window_end_ns"`
	FailedFetches      map[string]int `json:"failed_fetches,omitempty"`
	HistogramEstimator string         `json:"histogram_percentile_estimator"`
	Warnings           warning.List   `json:"warnings,omitempty"`
}

// Metric is one metric family of the export.
type Metric struct {
	Type        Kind          `json:"type"`
	Description string        `json:"description"`
	Unit        string        `json:"unit,omitempty"`
	Series      []SeriesStats `json:"series"`
}

// SeriesStats is the statistics of one endpoint × label combination.
// Histogram buckets are per-bucket deltas of the cumulative counts over the
// window, keyed by upper bound ("+Inf" last).
type SeriesStats struct {
	EndpointURL string            `json:"endpoint_url"`
	Labels      map[string]string `json:"labels,omitempty"`
	Stats       StatValues        `json:"stats"`
	Buckets     StatValues        `json:"buckets,omitempty"`
}

// Stat returns the named statistic of a series.
func (s *SeriesStats) Stat(name string) (float64, bool) { return s.Stats.Get(name) }

// Window is the profiling window the export's statistics cover, in wall ns.
// Counters and histograms are deltas from the last sample before StartNs
// (or the first sample, when none precedes it) to the last sample at or
// before EndNs; gauges use the samples inside the window.
type Window struct {
	StartNs, EndNs int64
}

func (w Window) seconds() float64 { return float64(w.EndNs-w.StartNs) / 1e9 }

// Export computes the export over the window.
func (c *Collector) Export(w Window, inputConfig any) *Export {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := &Export{SchemaVersion: SchemaVersion, Metrics: map[string]*Metric{},
		InputConfig: inputConfig}
	e.Summary = c.summary(w)
	ext := &Extension{WindowStartNs: w.StartNs, WindowEndNs: w.EndNs, HistogramEstimator: histogramEstimator}
	for _, sd := range c.order {
		fi := c.families[sd.family]
		ss, warn, ok := seriesStats(sd, fi.kind, w, c.seenBefore(sd.endpoint, w.StartNs))
		if warn != "" {
			ext.Warnings = append(ext.Warnings, fmt.Errorf("server metrics: %s: %s: %s", sd.endpoint, sd.family, warn))
		}
		if !ok {
			continue
		}
		m := e.Metrics[sd.family]
		if m == nil {
			m = &Metric{Type: fi.kind, Description: fi.help, Unit: familyUnit(sd.family, fi.kind)}
			e.Metrics[sd.family] = m
		}
		m.Series = append(m.Series, ss)
	}
	ext.Warnings = append(slices.Clone(c.warnings), ext.Warnings...)
	for _, ep := range c.endpoints {
		if n := c.fetches[ep].failures; n > 0 {
			if ext.FailedFetches == nil {
				ext.FailedFetches = map[string]int{}
			}
			ext.FailedFetches[ep] = n
		}
	}
	e.Simbench = ext
	return e
}

func (c *Collector) summary(w Window) Summary {
	s := Summary{EndpointsConfigured: []string{}, EndpointsSuccessful: []string{},
		EndpointInfo: map[string]*EndpointInfo{}}
	if w.StartNs > 0 {
		s.StartTime, s.EndTime = results.FormatTime(w.StartNs), results.FormatTime(w.EndNs)
	}
	for _, ep := range c.endpoints {
		s.EndpointsConfigured = append(s.EndpointsConfigured, ep)
		fl := c.fetches[ep]
		if len(fl.okAt) == 0 {
			continue
		}
		s.EndpointsSuccessful = append(s.EndpointsSuccessful, ep)
		s.EndpointInfo[ep] = fl.info()
	}
	return s
}

func (fl *fetchLog) info() *EndpointInfo {
	in := &EndpointInfo{TotalFetches: len(fl.okAt) + fl.failures, FirstFetchNs: fl.okAt[0],
		LastFetchNs: fl.okAt[len(fl.okAt)-1], UniqueUpdates: len(fl.updates)}
	var lat float64
	for _, l := range fl.latency {
		lat += float64(l)
	}
	in.AvgFetchLatencyMs = pyFloat(lat / float64(len(fl.latency)) / 1e6)
	in.FirstUpdateNs, in.LastUpdateNs = fl.updates[0], fl.updates[len(fl.updates)-1]
	in.DurationSeconds = pyFloat(float64(in.LastUpdateNs-in.FirstUpdateNs) / 1e9)
	if n := len(fl.updates) - 1; n >= 1 {
		gaps := make([]float64, n)
		for i := range gaps {
			gaps[i] = float64(fl.updates[i+1]-fl.updates[i]) / 1e6
		}
		in.AvgUpdateIntervalMs = pyFloat(float64(in.LastUpdateNs-in.FirstUpdateNs) / 1e6 / float64(n))
		if n >= 2 {
			slices.Sort(gaps)
			in.MedianUpdateIntervalMs = pyFloat(results.PercentileSorted(gaps, 50))
		}
	}
	return in
}

// seenBefore reports whether endpoint answered a scrape before t: a counter
// or histogram series it did not expose then was still at zero.
func (c *Collector) seenBefore(endpoint string, t int64) bool {
	fl := c.fetches[endpoint]
	return fl != nil && len(fl.okAt) > 0 && fl.okAt[0] < t
}

// seriesStats computes one series' statistics; ok is false when the window
// holds nothing for it. warn explains a reset or layout change. zeroRef
// says a series absent before the window started from zero (servers create
// labelled series at their first observation).
func seriesStats(sd *seriesData, kind Kind, w Window, zeroRef bool) (SeriesStats, string, bool) {
	ss := SeriesStats{EndpointURL: sd.endpoint, Labels: sd.labels}
	switch kind {
	case KindCounter:
		ref, last, ok := deltaPoints(sd.points, w, zeroRef)
		if !ok {
			return ss, "", false
		}
		total, warn := last.v-ref.v, ""
		if total < 0 {
			total, warn = 0, "counter went down (a server restart?): total clamped to 0"
		}
		ss.Stats = StatValues{{"total", total}, {"rate", safeDiv(total, w.seconds())}}
		return ss, warn, true
	case KindHistogram:
		return histogramStats(sd, w, zeroRef)
	default:
		vals := gaugeValues(sd.points, w)
		if len(vals) == 0 {
			return ss, "", false
		}
		ss.Stats = gaugeStats(vals)
		return ss, "", true
	}
}

// deltaPoints returns the reference (last before the window; else zero when
// zeroRef, else the first in it) and the last point in the window.
func deltaPoints(ps []point, w Window, zeroRef bool) (ref, last point, ok bool) {
	refIdx, lastIdx, firstIdx := -1, -1, -1
	for i, p := range ps { // by time: a stamped scrape may be added late
		switch {
		case p.t < w.StartNs:
			if refIdx < 0 || p.t >= ps[refIdx].t {
				refIdx = i
			}
		case p.t <= w.EndNs:
			if lastIdx < 0 || p.t >= ps[lastIdx].t {
				lastIdx = i
			}
			if firstIdx < 0 || p.t < ps[firstIdx].t {
				firstIdx = i
			}
		}
	}
	switch {
	case lastIdx < 0:
		return point{}, point{}, false
	case refIdx >= 0:
		return ps[refIdx], ps[lastIdx], true
	case zeroRef:
		zero := point{t: w.StartNs - 1, h: &histPoint{buckets: make([]float64, len(ps[lastIdx].buckets()))}}
		return zero, ps[lastIdx], true
	}
	return ps[firstIdx], ps[lastIdx], true
}

func gaugeValues(ps []point, w Window) []float64 {
	var vals []float64
	for _, p := range ps {
		if p.t >= w.StartNs && p.t <= w.EndNs && finite(p.v) {
			vals = append(vals, p.v)
		}
	}
	return vals
}

// gaugeStats are AIPerf's gauge statistics: mean, min, max, sample standard
// deviation (ddof=1, 0 for one sample) and numpy-linear percentiles.
func gaugeStats(vals []float64) StatValues {
	s, _ := results.Summarize(vals)
	std := 0.0
	if s.Count > 1 {
		std = s.Std * math.Sqrt(float64(s.Count)/float64(s.Count-1))
	}
	out := StatValues{{"avg", s.Avg}, {"min", s.Min}, {"max", s.Max}, {"std", std}}
	for i, p := range results.Percentiles {
		out = append(out, StatValue{results.PercentileName(p), s.P[i]})
	}
	return out
}

func histogramStats(sd *seriesData, w Window, zeroRef bool) (SeriesStats, string, bool) {
	ss := SeriesStats{EndpointURL: sd.endpoint, Labels: sd.labels}
	ref, last, ok := deltaPoints(sd.points, w, zeroRef)
	if !ok {
		return ss, "", false
	}
	count, sum := last.v-ref.v, last.sum()-ref.sum()
	if count < 0 || resetBetween(sd.points, ref.t, last.t) {
		ss.Stats = StatValues{{"count", 0}}
		return ss, "histogram reset or bucket layout changed in the window (a server restart?): not summarised", true
	}
	lb, rb := last.buckets(), ref.buckets()
	deltas := make([]float64, len(lb))
	if len(rb) == len(lb) {
		for i := range deltas {
			deltas[i] = lb[i] - rb[i]
		}
	}
	bounds := last.bounds()
	for i, b := range bounds {
		ss.Buckets = append(ss.Buckets, StatValue{boundKey(b), deltas[i]})
	}
	if count == 0 {
		ss.Stats = StatValues{{"count", 0}}
		return ss, "", true
	}
	secs := w.seconds()
	ss.Stats = StatValues{{"count", count}, {"sum", sum}, {"avg", sum / count},
		{"count_rate", safeDiv(count, secs)}, {"sum_rate", safeDiv(sum, secs)}}
	for _, p := range results.Percentiles {
		ss.Stats = append(ss.Stats, StatValue{results.PercentileName(p) + "_estimate",
			histogramQuantile(p/100, bounds, deltas, count)})
	}
	return ss, "", true
}

func resetBetween(ps []point, from, to int64) bool {
	prev := math.Inf(-1)
	for _, p := range ps {
		if p.t < from || p.t > to {
			continue
		}
		if p.t > from && p.boundsDiff() || p.v < prev {
			return true
		}
		prev = p.v
	}
	return false
}

func boundKey(b float64) string {
	if math.IsInf(b, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(b, 'g', -1, 64)
}

// histogramQuantile estimates the q-quantile (0 ≤ q ≤ 1) of a histogram
// from its cumulative bucket counts as Prometheus' histogram_quantile does:
// linear interpolation inside the bucket holding the rank, the first
// bucket starting at 0 (when its bound is positive), and the highest finite
// bound when the rank falls in the +Inf bucket. total is the observation
// count (the +Inf bucket, also when the exposition omits it).
func histogramQuantile(q float64, bounds, cumulative []float64, total float64) float64 {
	if total <= 0 || len(bounds) == 0 {
		return math.NaN()
	}
	rank := q * total
	for i, b := range bounds {
		if cumulative[i] < rank || (cumulative[i] == 0 && rank == 0 && i+1 < len(bounds)) {
			continue
		}
		if math.IsInf(b, 1) {
			if i == 0 {
				return math.NaN()
			}
			return bounds[i-1]
		}
		lo, below := 0.0, 0.0
		if i > 0 {
			lo, below = bounds[i-1], cumulative[i-1]
		} else if b <= 0 {
			return b
		}
		in := cumulative[i] - below
		if in <= 0 {
			return b
		}
		return lo + (b-lo)*(rank-below)/in
	}
	// The rank lies above the last exposed bucket (no +Inf bucket).
	last := bounds[len(bounds)-1]
	if math.IsInf(last, 1) && len(bounds) > 1 {
		return bounds[len(bounds)-2]
	}
	return last
}

func safeDiv(a, b float64) float64 {
	if b <= 0 {
		return math.NaN()
	}
	return a / b
}

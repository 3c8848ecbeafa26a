package servermetrics

import (
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/simbench/simbench/results"
)

// File names of the server-side metrics a run keeps.
const (
	JSONName          = "server_metrics_export.json"
	TTFTBreakdownName = "ttft_breakdown.json"
)

// Kind is a Prometheus metric type as AIPerf's server-metrics export
// names it. Summaries are not collected (they cover the server's lifetime).
type Kind string

// Metric kinds.
const (
	KindCounter   Kind = "counter"
	KindGauge     Kind = "gauge"
	KindHistogram Kind = "histogram"
	KindUnknown   Kind = "unknown" // untyped: treated like a gauge
)

// Family is one metric family of one scrape.
type Family struct {
	Name   string
	Help   string
	Kind   Kind
	Series []Series
}

// Series is one labelled series of a family at one scrape.
type Series struct {
	Labels map[string]string
	Value  float64 // counters, gauges and untyped
	// Histograms: the cumulative count and sum, and the cumulative bucket
	// counts by ascending upper bound (the +Inf bucket last, when exposed).
	Count, Sum float64
	Buckets    []Bucket
}

// Bucket is one cumulative histogram bucket.
type Bucket struct {
	UpperBound float64
	Count      float64
}

// Scrape is one successful fetch of one metrics endpoint.
type Scrape struct {
	Endpoint  string // the full URL scraped
	AtNs      int64  // wall ns when the fetch was sent
	LatencyNs int64  // how long it took
	Families  []Family
}

// Collector accumulates the scrapes of a run and turns them
// into AIPerf's server-metrics export. It keeps every sample compactly (one
// float per series per scrape, plus the buckets of histograms) so the
// statistics can be taken over any window afterwards. It is safe for
// concurrent use.
type Collector struct {
	mu        sync.Mutex
	endpoints []string
	families  map[string]*familyInfo
	series    map[uint64][]*seriesData // by identity hash
	order     []*seriesData            // in first-seen order
	fetches   map[string]*fetchLog
	warnings  []error
	// typeWarned marks the endpoint/family pairs already warned about a
	// type that differs from the family's first one.
	typeWarned map[string]bool
}

type familyInfo struct {
	kind Kind
	help string
}

type seriesData struct {
	endpoint, family string
	labels           map[string]string
	bounds           []float64
	points           []point
}

// point is one sample: 24 bytes for counters and gauges, which a long run
// keeps by the hundred thousand.
type point struct {
	t int64
	v float64    // value, or histogram count
	h *histPoint // histograms only
}

// histPoint is a histogram sample. Consecutive equal samples share one
// histPoint, so an idle histogram costs 24 bytes a scrape.
type histPoint struct {
	sum        float64
	buckets    []float64 // cumulative counts, aligned with bounds
	bounds     []float64 // the layout at this sample (shared while it holds)
	boundsDiff bool      // the bucket layout changed at this point (a restart)
}

func (p point) sum() float64 {
	if p.h == nil {
		return 0
	}
	return p.h.sum
}

func (p point) buckets() []float64 {
	if p.h == nil {
		return nil
	}
	return p.h.buckets
}

func (p point) bounds() []float64 {
	if p.h == nil {
		return nil
	}
	return p.h.bounds
}

func (p point) boundsDiff() bool { return p.h != nil && p.h.boundsDiff }

type fetchLog struct {
	okAt, latency []int64
	updates       []int64 // times of fetches whose content changed
	failures      int
	// recent holds, per family, the series of the endpoint's last scrape in
	// its order: the next scrape usually lists the same series in the same
	// order, found without hashing their labels.
	recent map[string][]*seriesData
}

// NewCollector returns a collector for the given endpoints
// (listed in the export's summary even when they never answer). Endpoints
// are kept, and so exported and named in warnings, without the
// credentials of their URL (results.RedactURL).
func NewCollector(endpoints []string) *Collector {
	c := &Collector{families: map[string]*familyInfo{}, series: map[uint64][]*seriesData{},
		fetches: map[string]*fetchLog{}, typeWarned: map[string]bool{}}
	for _, e := range endpoints {
		c.fetchLog(e)
	}
	return c
}

// Add records a successful scrape. Summary families are ignored.
func (c *Collector) Add(s Scrape) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fl := c.fetchLog(s.Endpoint)
	fl.okAt = append(fl.okAt, s.AtNs)
	fl.latency = append(fl.latency, s.LatencyNs)
	changed := len(fl.updates) == 0
	endpoint := results.RedactURL(s.Endpoint)
	for i := range s.Families {
		changed = c.addFamily(fl, endpoint, s.AtNs, &s.Families[i]) || changed
	}
	if changed {
		fl.updates = append(fl.updates, s.AtNs)
	}
}

// Fail records a failed scrape: a gap in the series and a warning, never an
// error of the run.
func (c *Collector) Fail(endpoint string, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fl := c.fetchLog(endpoint)
	fl.failures++
	if fl.failures <= 3 {
		c.warnings = append(c.warnings, fmt.Errorf("server metrics: %s: %w", results.RedactURL(endpoint), err))
	}
}

// Warnings returns what went wrong while scraping: the first failures of
// each endpoint and a count of the rest, and layout changes seen.
func (c *Collector) Warnings() []error {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := slices.Clone(c.warnings)
	for _, e := range c.endpoints {
		if n := c.fetches[e].failures; n > 3 {
			out = append(out, fmt.Errorf("server metrics: %s: %d scrapes failed in all", e, n))
		}
	}
	return out
}

// Scrapes is the number of successful scrapes of endpoint.
func (c *Collector) Scrapes(endpoint string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if fl, ok := c.fetches[results.RedactURL(endpoint)]; ok {
		return len(fl.okAt)
	}
	return 0
}

// fetchLog is endpoint's log, keyed by its redacted URL.
func (c *Collector) fetchLog(endpoint string) *fetchLog {
	endpoint = results.RedactURL(endpoint)
	fl, ok := c.fetches[endpoint]
	if !ok {
		fl = &fetchLog{}
		c.fetches[endpoint] = fl
		c.endpoints = append(c.endpoints, endpoint)
	}
	return fl
}

// addFamily adds a family's series; changed reports a new series or a
// value that differs from the series' previous sample.
func (c *Collector) addFamily(fl *fetchLog, endpoint string, at int64, f *Family) (changed bool) {
	if f.Kind != KindCounter && f.Kind != KindGauge && f.Kind != KindHistogram && f.Kind != KindUnknown {
		return false
	}
	fi, ok := c.families[f.Name]
	if !ok {
		fi = &familyInfo{kind: f.Kind, help: f.Help}
		c.families[f.Name] = fi
	} else if fi.kind != f.Kind {
		if key := endpoint + "\x00" + f.Name; !c.typeWarned[key] {
			c.typeWarned[key] = true
			c.warnings = append(c.warnings, fmt.Errorf("server metrics: %s: family %s is a %s, first seen as a %s; its samples are ignored",
				endpoint, f.Name, f.Kind, fi.kind))
		}
		return false
	}
	if fl.recent == nil {
		fl.recent = map[string][]*seriesData{}
	}
	recent := fl.recent[f.Name]
	for i := range f.Series {
		s := &f.Series[i]
		var sd *seriesData
		if i < len(recent) && maps.Equal(recent[i].labels, s.Labels) {
			sd = recent[i]
		} else {
			sd = c.lookup(endpoint, f.Name, s.Labels)
			if i < len(recent) {
				recent[i] = sd
			} else {
				recent = append(recent, sd)
			}
		}
		changed = addPoint(sd, at, f.Kind, s) || changed
	}
	fl.recent[f.Name] = recent[:min(len(recent), len(f.Series))]
	return changed
}

// addPoint appends a sample to a series; it reports whether it differs
// from the previous one (or is the first).
func addPoint(sd *seriesData, at int64, kind Kind, s *Series) bool {
	p := point{t: at, v: s.Value}
	var last *point
	if n := len(sd.points); n > 0 {
		last = &sd.points[n-1]
	}
	if kind == KindHistogram {
		p.v, p.h = s.Count, histSample(sd, s)
		if last != nil && last.h != nil && last.v == p.v && sameHist(last.h, p.h) {
			p.h = last.h // unchanged: share the previous sample
		}
	}
	changed := last == nil || last.v != p.v || last.sum() != p.sum() || p.h != last.h
	sd.points = append(sd.points, p)
	return changed
}

// histSample copies a histogram's sum and buckets, and notes a change of
// bucket layout (a restart) against the series' current one.
func histSample(sd *seriesData, s *Series) *histPoint {
	h := &histPoint{sum: s.Sum, buckets: make([]float64, len(s.Buckets))}
	same := len(sd.bounds) == len(s.Buckets)
	for i, b := range s.Buckets {
		h.buckets[i] = b.Count
		same = same && sd.bounds[i] == b.UpperBound
	}
	if !same {
		h.boundsDiff = sd.bounds != nil
		sd.bounds = make([]float64, len(s.Buckets))
		for i, b := range s.Buckets {
			sd.bounds[i] = b.UpperBound
		}
	}
	h.bounds = sd.bounds
	return h
}

func sameHist(a, b *histPoint) bool {
	return a.sum == b.sum && !b.boundsDiff && slices.Equal(a.buckets, b.buckets)
}

// lookup finds (or creates) a series by endpoint, family and labels without
// building a key string: series are bucketed by an order-independent hash
// of their identity and told apart by comparison.
func (c *Collector) lookup(endpoint, family string, labels map[string]string) *seriesData {
	h := fnvString(fnvString(fnvOffset, endpoint), family) ^ labelsHash(labels)
	for _, sd := range c.series[h] {
		if sd.endpoint == endpoint && sd.family == family && maps.Equal(sd.labels, labels) {
			return sd
		}
	}
	sd := &seriesData{endpoint: endpoint, family: family, labels: cloneLabels(labels)}
	c.series[h] = append(c.series[h], sd)
	c.order = append(c.order, sd)
	return sd
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// fnvString continues an FNV-1a hash with s and a separator.
func fnvString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime
	}
	return (h ^ 0xff) * fnvPrime
}

// labelsHash hashes a label set independently of map order.
func labelsHash(labels map[string]string) uint64 {
	var acc uint64
	for k, v := range labels {
		x := fnvString(fnvString(fnvOffset, k), v)
		x ^= x >> 33
		x *= 0xff51afd7ed558ccd
		x ^= x >> 33
		acc += x
	}
	return acc
}

func cloneLabels(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

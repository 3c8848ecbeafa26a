package results

import (
	"maps"
	"math"
	"slices"
	"strconv"
	"sync"
)

// File names of the server-side metrics a run keeps.
const (
	ServerMetricsJSONName = "server_metrics_export.json"
	TTFTBreakdownName     = "ttft_breakdown.json"
)

// MetricKind is a Prometheus metric type as AIPerf's server-metrics export
// names it. Summaries are not collected (they cover the server's lifetime).
type MetricKind string

// Metric kinds.
const (
	KindCounter   MetricKind = "counter"
	KindGauge     MetricKind = "gauge"
	KindHistogram MetricKind = "histogram"
	KindUnknown   MetricKind = "unknown" // untyped: treated like a gauge
)

// Family is one metric family of one scrape.
type Family struct {
	Name   string
	Help   string
	Kind   MetricKind
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

// ServerMetricsCollector accumulates the scrapes of a run and turns them
// into AIPerf's server-metrics export. It keeps every sample compactly (one
// float per series per scrape, plus the buckets of histograms) so the
// statistics can be taken over any window afterwards. It is safe for
// concurrent use.
type ServerMetricsCollector struct {
	mu        sync.Mutex
	endpoints []string
	families  map[string]*familyInfo
	series    map[uint64][]*seriesData // by identity hash
	order     []*seriesData            // in first-seen order
	fetches   map[string]*fetchLog
	warnings  []string
}

type familyInfo struct {
	kind MetricKind
	help string
}

type seriesData struct {
	endpoint, family string
	labels           map[string]string
	bounds           []float64
	points           []point
}

type point struct {
	t          int64
	v          float64 // value, or histogram count
	sum        float64
	buckets    []float64 // cumulative counts, aligned with seriesData.bounds
	boundsDiff bool      // the bucket layout changed at this point (a restart)
}

type fetchLog struct {
	okAt, latency []int64
	updates       []int64 // times of fetches whose content changed
	lastHash      uint64
	failures      int
}

// NewServerMetricsCollector returns a collector for the given endpoints
// (listed in the export's summary even when they never answer).
func NewServerMetricsCollector(endpoints []string) *ServerMetricsCollector {
	c := &ServerMetricsCollector{families: map[string]*familyInfo{}, series: map[uint64][]*seriesData{},
		fetches: map[string]*fetchLog{}}
	for _, e := range endpoints {
		c.endpoints = append(c.endpoints, e)
		c.fetches[e] = &fetchLog{}
	}
	return c
}

// Add records a successful scrape. Summary families are ignored.
func (c *ServerMetricsCollector) Add(s Scrape) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fl := c.fetchLog(s.Endpoint)
	fl.okAt = append(fl.okAt, s.AtNs)
	fl.latency = append(fl.latency, s.LatencyNs)
	if h := scrapeHash(s.Families); len(fl.updates) == 0 || h != fl.lastHash {
		fl.updates = append(fl.updates, s.AtNs)
		fl.lastHash = h
	}
	for i := range s.Families {
		c.addFamily(s.Endpoint, s.AtNs, &s.Families[i])
	}
}

// Fail records a failed scrape: a gap in the series and a warning, never an
// error of the run.
func (c *ServerMetricsCollector) Fail(endpoint string, atNs int64, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fl := c.fetchLog(endpoint)
	fl.failures++
	if fl.failures <= 3 {
		c.warnings = append(c.warnings, "server metrics: "+endpoint+": "+err.Error())
	}
}

// Warnings returns what went wrong while scraping: the first failures of
// each endpoint and a count of the rest, and layout changes seen.
func (c *ServerMetricsCollector) Warnings() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := slices.Clone(c.warnings)
	for _, e := range c.sortedEndpoints() {
		if n := c.fetches[e].failures; n > 3 {
			out = append(out, "server metrics: "+e+": "+strconv.Itoa(n)+" scrapes failed in all")
		}
	}
	return out
}

// Scrapes is the number of successful scrapes of endpoint.
func (c *ServerMetricsCollector) Scrapes(endpoint string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if fl, ok := c.fetches[endpoint]; ok {
		return len(fl.okAt)
	}
	return 0
}

func (c *ServerMetricsCollector) fetchLog(endpoint string) *fetchLog {
	fl, ok := c.fetches[endpoint]
	if !ok {
		fl = &fetchLog{}
		c.fetches[endpoint] = fl
		c.endpoints = append(c.endpoints, endpoint)
	}
	return fl
}

func (c *ServerMetricsCollector) sortedEndpoints() []string { return c.endpoints }

func (c *ServerMetricsCollector) addFamily(endpoint string, at int64, f *Family) {
	if f.Kind != KindCounter && f.Kind != KindGauge && f.Kind != KindHistogram && f.Kind != KindUnknown {
		return
	}
	fi, ok := c.families[f.Name]
	if !ok {
		fi = &familyInfo{kind: f.Kind, help: f.Help}
		c.families[f.Name] = fi
	} else if fi.kind != f.Kind {
		c.warnings = append(c.warnings, "server metrics: "+endpoint+": family "+f.Name+" changed type from "+
			string(fi.kind)+" to "+string(f.Kind)+"; later samples ignored")
		return
	}
	for i := range f.Series {
		c.addSeries(endpoint, at, f, &f.Series[i])
	}
}

func (c *ServerMetricsCollector) addSeries(endpoint string, at int64, f *Family, s *Series) {
	sd := c.lookup(endpoint, f.Name, s.Labels)
	p := point{t: at, v: s.Value}
	if f.Kind == KindHistogram {
		p.v, p.sum = s.Count, s.Sum
		p.buckets = make([]float64, len(s.Buckets))
		same := len(sd.bounds) == len(s.Buckets)
		for i, b := range s.Buckets {
			p.buckets[i] = b.Count
			same = same && sd.bounds[i] == b.UpperBound
		}
		if !same {
			first := sd.bounds == nil
			sd.bounds = make([]float64, len(s.Buckets))
			for i, b := range s.Buckets {
				sd.bounds[i] = b.UpperBound
			}
			p.boundsDiff = !first
		}
	}
	sd.points = append(sd.points, p)
}

// lookup finds (or creates) a series by endpoint, family and labels without
// building a key string: series are bucketed by an order-independent hash
// of their identity and told apart by comparison.
func (c *ServerMetricsCollector) lookup(endpoint, family string, labels map[string]string) *seriesData {
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

func fnvFloat(h uint64, f float64) uint64 {
	u := math.Float64bits(f)
	for i := 0; i < 8; i++ {
		h = (h ^ (u & 0xff)) * fnvPrime
		u >>= 8
	}
	return h
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

// scrapeHash fingerprints a scrape's values, to count unique updates.
func scrapeHash(fams []Family) uint64 {
	h := uint64(fnvOffset)
	for _, f := range fams {
		h = fnvString(h, f.Name)
		for _, s := range f.Series {
			h ^= labelsHash(s.Labels)
			h = fnvFloat(fnvFloat(fnvFloat(h, s.Value), s.Count), s.Sum)
			for _, b := range s.Buckets {
				h = fnvFloat(h, b.Count)
			}
		}
	}
	return h
}

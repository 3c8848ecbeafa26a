package results

import (
	"hash/fnv"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
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
	series    map[string]*seriesData
	order     []string // series keys in first-seen order
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
	c := &ServerMetricsCollector{families: map[string]*familyInfo{}, series: map[string]*seriesData{},
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
	key := seriesKey(endpoint, f.Name, s.Labels)
	sd, ok := c.series[key]
	if !ok {
		sd = &seriesData{endpoint: endpoint, family: f.Name, labels: cloneLabels(s.Labels)}
		c.series[key] = sd
		c.order = append(c.order, key)
	}
	p := point{t: at, v: s.Value}
	if f.Kind == KindHistogram {
		p.v, p.sum = s.Count, s.Sum
		bounds := make([]float64, len(s.Buckets))
		p.buckets = make([]float64, len(s.Buckets))
		for i, b := range s.Buckets {
			bounds[i], p.buckets[i] = b.UpperBound, b.Count
		}
		if sd.bounds == nil {
			sd.bounds = bounds
		} else if !slices.Equal(sd.bounds, bounds) {
			sd.bounds, p.boundsDiff = bounds, true
		}
	}
	sd.points = append(sd.points, p)
}

func seriesKey(endpoint, family string, labels map[string]string) string {
	var b strings.Builder
	b.WriteString(endpoint)
	b.WriteByte(0)
	b.WriteString(family)
	for _, k := range sortedKeys(labels) {
		b.WriteByte(0)
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(labels[k])
	}
	return b.String()
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
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
	h := fnv.New64a()
	var buf [8]byte
	put := func(f float64) {
		u := math.Float64bits(f)
		for i := range buf {
			buf[i] = byte(u >> (8 * i))
		}
		h.Write(buf[:])
	}
	for _, f := range fams {
		h.Write([]byte(f.Name))
		for _, s := range f.Series {
			for _, k := range sortedKeys(s.Labels) {
				h.Write([]byte(k + "=" + s.Labels[k]))
			}
			put(s.Value)
			put(s.Count)
			put(s.Sum)
			for _, b := range s.Buckets {
				put(b.Count)
			}
		}
	}
	return h.Sum64()
}

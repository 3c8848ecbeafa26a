package loadgen

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/simbench/simbench/internal/warning"
	"github.com/simbench/simbench/loadgen/openaitest"
	"github.com/simbench/simbench/servermetrics"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeClock is a wall clock the test sets.
type fakeClock struct{ ns atomic.Int64 }

func (c *fakeClock) now() int64      { return c.ns.Load() }
func (c *fakeClock) set(sec float64) { c.ns.Store(int64(sec * 1e9)) }
func secNs(sec float64) int64        { return int64(sec * 1e9) }
func (c *fakeClock) window(from float64) servermetrics.Window {
	return servermetrics.Window{StartNs: secNs(from), EndNs: c.now()}
}

// manualScraper is a Scraper whose ticks the test sends: tick returns once
// every fetch the tick started has reached the collector.
type manualScraper struct {
	*Scraper
	col    *servermetrics.Collector
	ticks  chan time.Time
	ticked chan struct{}
}

func newManualScraper(t *testing.T, clock *fakeClock, urls ...string) *manualScraper {
	t.Helper()
	col := servermetrics.NewCollector(urls)
	ms := &manualScraper{col: col, ticks: make(chan time.Time), ticked: make(chan struct{})}
	s, err := NewScraper(ScraperConfig{URLs: urls, Interval: time.Second, Collector: col, Now: clock.now,
		Ticker: func(time.Duration) (<-chan time.Time, func()) { return ms.ticks, func() {} }})
	require.NoError(t, err)
	s.afterTick = func() { ms.ticked <- struct{}{} }
	ms.Scraper = s
	return ms
}

// tick sends one tick and waits until the tick's fetches are done (the
// loop is then blocked on the next tick, so Wait races no Add).
func (ms *manualScraper) tick() {
	ms.ticks <- time.Time{}
	<-ms.ticked
	ms.fetches.Wait()
}

// tickDispatched sends one tick and returns once its fetches started.
func (ms *manualScraper) tickDispatched() {
	ms.ticks <- time.Time{}
	<-ms.ticked
}

func findSeries(t *testing.T, e *servermetrics.Export, family string, labels map[string]string) *servermetrics.SeriesStats {
	t.Helper()
	m, ok := e.Metrics[family]
	require.True(t, ok, "family %s exported", family)
	for i := range m.Series {
		s := &m.Series[i]
		match := true
		for k, v := range labels {
			match = match && s.Labels[k] == v
		}
		if match {
			return s
		}
	}
	require.FailNow(t, "no series", "%s %v", family, labels)
	return nil
}

func stat(t *testing.T, s *servermetrics.SeriesStats, name string) float64 {
	t.Helper()
	v, ok := s.Stat(name)
	require.True(t, ok, "stat %s", name)
	return v
}

func TestNormalizeMetricsURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"localhost:8000", "http://localhost:8000/metrics"},
		{"localhost:8000/", "http://localhost:8000/metrics"},
		{"http://host:9400", "http://host:9400/metrics"},
		{"https://host/custom/metrics", "https://host/custom/metrics"},
		{" node:9100/metrics ", "http://node:9100/metrics"},
	} {
		got, err := NormalizeMetricsURL(tc.in)
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
	for _, bad := range []string{"", "ftp://host/metrics", "http://"} {
		_, err := NormalizeMetricsURL(bad)
		assert.Error(t, err, bad)
	}
}

func TestDefaultMetricsURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"localhost:8000", "http://localhost:8000/metrics"},
		{"http://127.0.0.1:8000/", "http://127.0.0.1:8000/metrics"},
		{"https://gw.example/llm", "https://gw.example/llm/metrics"},
	} {
		got, err := DefaultMetricsURL(tc.in)
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
	_, err := DefaultMetricsURL("gopher://x")
	assert.Error(t, err)
}

// fixtureServer serves the given files in turn (the last one repeated).
func fixtureServer(t *testing.T, files ...string) *httptest.Server {
	t.Helper()
	var pages [][]byte
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join("..", "testdata", "servermetrics", f))
		require.NoError(t, err)
		pages = append(pages, b)
	}
	var n atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := min(int(n.Add(1)-1), len(pages)-1)
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_, _ = w.Write(pages[i])
	}))
	t.Cleanup(ts.Close)
	return ts
}

// TestScrapeVLLMFixture scrapes vLLM's /metrics before and after a run and
// checks the export's deltas, counters, gauges and the vLLM TTFT breakdown
// against the numbers the fixture was written with (its README).
func TestScrapeVLLMFixture(t *testing.T) {
	t.Parallel()
	ts := fixtureServer(t, "vllm_metrics_0.txt", "vllm_metrics_1.txt")
	url := ts.URL + "/metrics"
	clock := &fakeClock{}
	ms := newManualScraper(t, clock, url)
	clock.set(1000)
	ms.Start(context.Background())
	clock.set(1010)
	assert.Equal(t, secNs(1010), ms.Stop())
	e := ms.col.Export(clock.window(1000), nil)

	assert.Equal(t, []string{url}, e.Summary.EndpointsSuccessful)
	assert.Equal(t, 2, e.Summary.EndpointInfo[url].TotalFetches)
	_, summary := e.Metrics["http_request_size_bytes"]
	assert.False(t, summary, "summaries are dropped")

	vllm := map[string]string{"model_name": "Qwen/Qwen3-8B", "engine": "0"}
	for _, h := range []struct {
		family   string
		sum, avg float64
	}{
		{"vllm:time_to_first_token_seconds", 12.5, 0.125},
		{"vllm:request_queue_time_seconds", 3, 0.03},
		{"vllm:request_prefill_time_seconds", 9.125, 0.09125},
		{"vllm:request_decode_time_seconds", 80, 0.8},
		{"vllm:e2e_request_latency_seconds", 93, 0.93},
	} {
		s := findSeries(t, e, h.family, vllm)
		assert.Equal(t, servermetrics.KindHistogram, e.Metrics[h.family].Type)
		assert.Equal(t, 100.0, stat(t, s, "count"), h.family)
		assert.InDelta(t, h.sum, stat(t, s, "sum"), 1e-9, h.family)
		assert.InDelta(t, h.avg, stat(t, s, "avg"), 1e-12, h.family)
		assert.InDelta(t, 10, stat(t, s, "count_rate"), 1e-9, h.family)
	}
	// Δbuckets of TTFT: 10 ≤ 80 ms, 40 ≤ 100 ms, 90 ≤ 250 ms, 100 ≤ 500 ms;
	// rank 50 lies in (0.1, 0.25]: 0.1 + 0.15·10/50.
	assert.InDelta(t, 0.13, stat(t, findSeries(t, e, "vllm:time_to_first_token_seconds", vllm), "p50_estimate"), 1e-12)

	for _, c := range []struct {
		family string
		labels map[string]string
		total  float64
	}{
		{"vllm:prompt_tokens", vllm, 51200},
		{"vllm:generation_tokens", vllm, 12800},
		{"vllm:prefix_cache_queries", vllm, 51200},
		{"vllm:prefix_cache_hits", vllm, 20480},
		{"vllm:num_preemptions", vllm, 0},
		{"vllm:request_success", map[string]string{"finished_reason": "length"}, 100},
		{"vllm:request_success", map[string]string{"finished_reason": "stop"}, 0},
		{"python_gc_objects_collected", nil, 123},
	} {
		s := findSeries(t, e, c.family, c.labels)
		assert.Equal(t, servermetrics.KindCounter, e.Metrics[c.family].Type)
		assert.Equal(t, c.total, stat(t, s, "total"), c.family)
		assert.InDelta(t, c.total/10, stat(t, s, "rate"), 1e-9, c.family)
	}

	for _, g := range []struct {
		family             string
		avg, lo, hi, stdev float64
	}{
		{"vllm:num_requests_running", 4, 2, 6, math.Sqrt(8)},
		{"vllm:num_requests_waiting", 1, 0, 2, math.Sqrt(2)},
		{"vllm:kv_cache_usage_perc", 0.25, 0.125, 0.375, 0.125 * math.Sqrt(2)},
	} {
		s := findSeries(t, e, g.family, vllm)
		assert.Equal(t, servermetrics.KindGauge, e.Metrics[g.family].Type)
		assert.InDelta(t, g.avg, stat(t, s, "avg"), 1e-12, g.family)
		assert.Equal(t, g.lo, stat(t, s, "min"), g.family)
		assert.Equal(t, g.hi, stat(t, s, "max"), g.family)
		assert.InDelta(t, g.stdev, stat(t, s, "std"), 1e-12, g.family)
	}

	bds := servermetrics.TTFTBreakdowns(e)
	require.NotEmpty(t, bds)
	b := bds[0]
	assert.Equal(t, servermetrics.VLLM, b.Server)
	assert.InDelta(t, 125, b.TTFTMeanMs, 1e-9)
	require.Len(t, b.Stages, 2)
	assert.Equal(t, "queue", b.Stages[0].Stage)
	assert.InDelta(t, 30, b.Stages[0].MeanMs, 1e-9)
	assert.Equal(t, "prefill", b.Stages[1].Stage)
	assert.InDelta(t, 91.25, b.Stages[1].MeanMs, 1e-9)
	assert.InDelta(t, 121.25, b.StageSumMs, 1e-9)
	assert.False(t, b.Additive, "vLLM's stages do not cover tokenisation")
	assert.Contains(t, b.Reason, "-3.0%")
	assert.Contains(t, b.Reason, "tokenisation")

	// The export is valid JSON without NaN and reads back.
	var buf bytes.Buffer
	require.NoError(t, servermetrics.WriteJSON(&buf, e))
	assert.NotContains(t, buf.String(), "NaN")
	back, err := servermetrics.ReadJSON(&buf)
	require.NoError(t, err)
	assert.Len(t, back.Metrics, len(e.Metrics))
}

// stageObs is one request's exclusive TTFT stages, in seconds.
type stageObs struct{ tokenize, route, backend, firstToken float64 }

func (o stageObs) ttft() float64 { return o.tokenize + o.route + o.backend + o.firstToken }

// dynamoRegistry is Dynamo's frontend TTFT histogram and its exclusive
// stage histogram, exposed by client_golang.
type dynamoRegistry struct {
	reg          *prometheus.Registry
	ttft, stages *prometheus.HistogramVec
}

func newDynamoRegistry() *dynamoRegistry {
	d := &dynamoRegistry{reg: prometheus.NewRegistry()}
	buckets := prometheus.ExponentialBuckets(0.001, 2, 16)
	d.ttft = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "dynamo_frontend_time_to_first_token_seconds",
		Help: "Time to first token", Buckets: buckets}, []string{"model"})
	d.stages = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "dynamo_frontend_ttft_stage_seconds",
		Help: "Exclusive TTFT stage durations", Buckets: buckets}, []string{"model", "stage", "phase"})
	d.reg.MustRegister(d.ttft, d.stages)
	return d
}

func (d *dynamoRegistry) observe(o stageObs) {
	d.ttft.WithLabelValues("M").Observe(o.ttft())
	d.stages.WithLabelValues("M", "tokenize", "none").Observe(o.tokenize)
	d.stages.WithLabelValues("M", "route", "aggregated").Observe(o.route)
	d.stages.WithLabelValues("M", "backend", "aggregated").Observe(o.backend)
	d.stages.WithLabelValues("M", "first_token", "aggregated").Observe(o.firstToken)
}

// refusedURL is the address of a closed listener: connection refused.
func refusedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return "http://" + addr + "/metrics"
}

// TestScrapeDynamoBreakdown serves a real client_golang exposition with
// Dynamo's stage and phase labels; requests observed before the baseline
// stay out, a 500 on one tick and an endpoint that refuses every connection
// are warnings and gaps, and the breakdown equals what was observed.
func TestScrapeDynamoBreakdown(t *testing.T) {
	t.Parallel()
	d := newDynamoRegistry()
	prom := promhttp.HandlerFor(d.reg, promhttp.HandlerOpts{})
	var served atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if served.Add(1) == 3 { // the second tick
			http.Error(w, "scripted", http.StatusInternalServerError)
			return
		}
		prom.ServeHTTP(w, r)
	}))
	defer ts.Close()
	good, dead := ts.URL+"/metrics", refusedURL(t)
	clock := &fakeClock{}
	ms := newManualScraper(t, clock, good, dead)

	d.observe(stageObs{0.5, 0.5, 5, 1}) // a request before the run
	clock.set(100)
	ms.Start(context.Background())
	reqs := []stageObs{{0.002, 0.001, 0.090, 0.007}, {0.004, 0.003, 0.180, 0.013}, {0.003, 0.002, 0.300, 0.015}}
	clock.set(101)
	d.observe(reqs[0])
	ms.tick()
	clock.set(102)
	d.observe(reqs[1])
	ms.tick() // 500
	clock.set(103)
	d.observe(reqs[2])
	ms.tick()
	clock.set(110)
	ms.Stop()
	assert.EqualValues(t, 5, served.Load())

	e := ms.col.Export(servermetrics.Window{StartNs: secNs(100.5), EndNs: clock.now()}, nil)
	assert.Equal(t, []string{good, dead}, e.Summary.EndpointsConfigured)
	assert.Equal(t, []string{good}, e.Summary.EndpointsSuccessful)
	assert.Equal(t, map[string]int{good: 1, dead: 5}, e.Simbench.FailedFetches)
	warn := strings.Join(warning.Messages(ms.col.Warnings()), "\n")
	assert.Contains(t, warn, good+": HTTP 500")
	assert.Contains(t, warn, dead+": ")
	assert.Contains(t, warn, "5 scrapes failed in all")

	var ttftSum float64
	for _, o := range reqs {
		ttftSum += o.ttft()
	}
	ttft := findSeries(t, e, "dynamo_frontend_time_to_first_token_seconds", nil)
	assert.Equal(t, 3.0, stat(t, ttft, "count"))
	assert.InDelta(t, ttftSum, stat(t, ttft, "sum"), 1e-12)
	assert.InDelta(t, ttftSum/3, stat(t, ttft, "avg"), 1e-12)

	stageMean := map[string]float64{}
	for _, o := range reqs {
		stageMean["tokenize/none"] += 1000 * o.tokenize / 3
		stageMean["route/aggregated"] += 1000 * o.route / 3
		stageMean["backend/aggregated"] += 1000 * o.backend / 3
		stageMean["first_token/aggregated"] += 1000 * o.firstToken / 3
	}
	bds := servermetrics.TTFTBreakdowns(e)
	require.Len(t, bds, 1)
	b := bds[0]
	assert.Equal(t, servermetrics.Dynamo, b.Server)
	assert.True(t, b.Additive, b.Reason)
	assert.InDelta(t, 1000*ttftSum/3, b.TTFTMeanMs, 1e-9)
	var keys []string
	for _, st := range b.Stages {
		keys = append(keys, st.Key())
		assert.Equal(t, 3.0, st.Count, st.Key())
		assert.InDelta(t, stageMean[st.Key()], st.MeanMs, 1e-9, st.Key())
	}
	assert.Equal(t, []string{"tokenize/none", "route/aggregated", "backend/aggregated", "first_token/aggregated"}, keys)
	assert.InDelta(t, b.TTFTMeanMs, b.StageSumMs, 1e-9)
}

// TestScrapeSlowEndpointSkipsTicks: a tick finds the slow endpoint still
// being fetched and skips it, while the fast one is fetched every tick.
func TestScrapeSlowEndpointSkipsTicks(t *testing.T) {
	t.Parallel()
	page := "# TYPE up gauge\nup 1\n"
	var slowServed, fastServed atomic.Int64
	entered, release := make(chan struct{}), make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if slowServed.Add(1) == 2 { // the first tick's fetch hangs
			entered <- struct{}{}
			<-release
		}
		_, _ = w.Write([]byte(page))
	}))
	defer slow.Close()
	fast := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fastServed.Add(1)
		_, _ = w.Write([]byte(page))
	}))
	defer fast.Close()
	clock := &fakeClock{}
	ms := newManualScraper(t, clock, slow.URL+"/metrics", fast.URL+"/metrics")
	ms.Start(context.Background())

	fastDone := func() {
		require.Eventually(t, func() bool { return !ms.busy[1].Load() }, 5*time.Second, time.Millisecond)
	}
	ms.tickDispatched()
	<-entered
	fastDone()
	ms.tickDispatched()
	fastDone()
	ms.tickDispatched()
	fastDone()
	assert.True(t, ms.busy[0].Load(), "the slow fetch is still running")
	assert.EqualValues(t, 2, slowServed.Load(), "ticks skipped the slow endpoint")
	close(release)
	ms.Stop()
	assert.EqualValues(t, 3, slowServed.Load(), "baseline, first tick, final")
	assert.EqualValues(t, 5, fastServed.Load(), "baseline, three ticks, final")
	assert.Equal(t, 3, ms.col.Scrapes(slow.URL+"/metrics"))
	assert.Equal(t, 5, ms.col.Scrapes(fast.URL+"/metrics"))
}

func TestScraperProbe(t *testing.T) {
	t.Parallel()
	ok := fixtureServer(t, "vllm_metrics_0.txt")
	notFound := httptest.NewServer(http.NotFoundHandler())
	defer notFound.Close()
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html><body>hello</body></html>\n"))
	}))
	defer html.Close()
	s, err := NewScraper(ScraperConfig{URLs: []string{"x"}, Collector: servermetrics.NewCollector(nil)})
	require.NoError(t, err)
	ctx := context.Background()
	assert.NoError(t, s.Probe(ctx, ok.URL+"/metrics"))
	assert.ErrorContains(t, s.Probe(ctx, notFound.URL+"/metrics"), "404")
	assert.ErrorContains(t, s.Probe(ctx, html.URL+"/metrics"), "exposition")
	assert.Error(t, s.Probe(ctx, refusedURL(t)))
}

func TestNewScraperErrors(t *testing.T) {
	t.Parallel()
	col := servermetrics.NewCollector(nil)
	for _, cfg := range []ScraperConfig{
		{Collector: col},
		{URLs: []string{"http://h/metrics"}},
		{URLs: []string{"http://h/metrics"}, Collector: col, Interval: -time.Second},
	} {
		_, err := NewScraper(cfg)
		assert.Error(t, err)
	}
	s, err := NewScraper(ScraperConfig{URLs: []string{"http://h/metrics"}, Collector: col, Interval: 10 * time.Second})
	require.NoError(t, err)
	assert.Equal(t, maxScrapeTimeout, s.client.Timeout, "timeout capped at 5 s")
	s, err = NewScraper(ScraperConfig{URLs: []string{"http://h/metrics"}, Collector: col})
	require.NoError(t, err)
	assert.Equal(t, 3*DefaultScrapeInterval, s.client.Timeout)
}

// TestScraperStopAfterCancelAndWithoutStart: the final scrape runs even
// when the run's context was cancelled, and Stop without Start takes it
// alone; Stop is idempotent.
func TestScraperStopAfterCancelAndWithoutStart(t *testing.T) {
	t.Parallel()
	ts := fixtureServer(t, "vllm_metrics_0.txt")
	url := ts.URL + "/metrics"
	clock := &fakeClock{}

	ms := newManualScraper(t, clock, url)
	ctx, cancel := context.WithCancel(context.Background())
	clock.set(1)
	ms.Start(ctx)
	cancel()
	<-ms.loopDone
	clock.set(2)
	assert.Equal(t, secNs(2), ms.Stop())
	clock.set(3)
	assert.Equal(t, secNs(2), ms.Stop(), "idempotent")
	assert.Equal(t, 2, ms.col.Scrapes(url))
	assert.Empty(t, ms.col.Warnings())

	alone := newManualScraper(t, clock, url)
	alone.Stop()
	alone.Start(context.Background()) // after Stop: nothing
	assert.Equal(t, 1, alone.col.Scrapes(url))
}

// TestScraperRealTicker is the one real-time test: the scripted server's
// Dynamo metrics scraped every 5 ms while requests run.
func TestScraperRealTicker(t *testing.T) {
	t.Parallel()
	m, err := openaitest.NewMetrics("M", nil)
	require.NoError(t, err)
	srv := &openaitest.Server{TTFT: 20 * time.Millisecond, ITL: time.Millisecond, Tokens: 3, Metrics: m}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	url := ts.URL + "/metrics"
	col := servermetrics.NewCollector([]string{url})
	s, err := NewScraper(ScraperConfig{URLs: []string{url}, Interval: 5 * time.Millisecond, Timeout: 2 * time.Second, Collector: col})
	require.NoError(t, err)
	s.Start(context.Background())
	start := time.Now().UnixNano()
	for range 3 {
		resp, err := http.Post(ts.URL+"/v1/completions", "application/json",
			strings.NewReader(`{"model":"M","prompt":"hi","stream":true}`))
		require.NoError(t, err)
		_, _ = new(bytes.Buffer).ReadFrom(resp.Body)
		resp.Body.Close()
	}
	// The ticker scrapes on its own: wait for two ticks after the baseline
	// (a loaded machine may run the three requests between two ticks)
	// instead of assuming how many fit in their time.
	require.Eventually(t, func() bool { return col.Scrapes(url) >= 3 }, 10*time.Second, time.Millisecond,
		"the ticker never scraped twice after the baseline")
	end := s.Stop()
	assert.GreaterOrEqual(t, col.Scrapes(url), 4, "baseline, ticks, final")
	e := col.Export(servermetrics.Window{StartNs: start, EndNs: end}, nil)
	ttft := findSeries(t, e, openaitest.FamilyTTFT, map[string]string{"model": "M"})
	assert.Equal(t, 3.0, stat(t, ttft, "count"))
	assert.GreaterOrEqual(t, stat(t, ttft, "avg"), 0.020)
	bds := servermetrics.TTFTBreakdowns(e)
	require.Len(t, bds, 1)
	assert.True(t, bds[0].Additive, bds[0].Reason)
}

// TestScrapeAtStampsAndIsBounded: ScrapeAt's scrapes carry the given time;
// it does nothing before Start or after Stop.
func TestScrapeAtStampsAndIsBounded(t *testing.T) {
	var served atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		fmt.Fprintf(w, "# TYPE g gauge\ng %d\n", served.Load())
	}))
	defer ts.Close()
	var clock atomic.Int64
	clock.Store(1000)
	c := servermetrics.NewCollector([]string{ts.URL})
	never := func(time.Duration) (<-chan time.Time, func()) { return make(chan time.Time), func() {} }
	s, err := NewScraper(ScraperConfig{URLs: []string{ts.URL}, Interval: time.Hour, Collector: c,
		Now: func() int64 { return clock.Add(1) }, Ticker: never})
	require.NoError(t, err)
	s.ScrapeAt(1) // before Start: nothing
	assert.Equal(t, int64(0), served.Load())
	s.Start(context.Background())
	clock.Store(5000)
	s.ScrapeAt(5001)
	end := s.Stop()
	s.ScrapeAt(9e9) // after Stop: nothing
	assert.False(t, s.BoundaryMissed())
	assert.Equal(t, int64(3), served.Load(), "baseline, ScrapeNow, final")
	e := c.Export(servermetrics.Window{StartNs: 5002, EndNs: end}, nil)
	// The window starts after the stamp (5001): the ScrapeNow sample is the
	// reference, so only the final sample is inside.
	st := e.Metrics["g"].Series[0].Stats
	n, _ := st.Get("avg")
	assert.Equal(t, 3.0, n)
	assert.Equal(t, 3, c.Scrapes(ts.URL))
}

// TestScrapeAtIgnoresBusyAndReportsFailure: the profiling-start scrape goes
// out even while a periodic fetch of the endpoint hangs, and a failed one
// is reported.
func TestScrapeAtIgnoresBusyAndReportsFailure(t *testing.T) {
	t.Parallel()
	var served atomic.Int64
	entered, release := make(chan struct{}), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch served.Add(1) {
		case 2: // the first tick's fetch hangs
			entered <- struct{}{}
			<-release
		case 4: // the second ScrapeAt fails
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("# TYPE up gauge\nup 1\n"))
	}))
	defer srv.Close()
	url := srv.URL + "/metrics"
	ms := newManualScraper(t, &fakeClock{}, url)
	ms.Start(context.Background())
	ms.tickDispatched()
	<-entered
	ms.ScrapeAt(777)
	require.Eventually(t, func() bool { return ms.col.Scrapes(url) == 2 }, 5*time.Second, time.Millisecond,
		"baseline and the ScrapeAt fetch, while the tick's fetch hangs")
	assert.False(t, ms.BoundaryMissed())
	ms.ScrapeAt(778)
	close(release)
	ms.Stop()
	assert.True(t, ms.BoundaryMissed())
	assert.EqualValues(t, 5, served.Load(), "baseline, tick, two ScrapeAt, final")
}

package loadgen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/servermetrics"
)

// DefaultScrapeInterval is AIPerf's server-metrics collection interval
// (AIPERF_SERVER_METRICS_COLLECTION_INTERVAL = 0.333 s).
const DefaultScrapeInterval = 333 * time.Millisecond

// maxScrapeTimeout caps the default per-fetch timeout.
const maxScrapeTimeout = 5 * time.Second

// maxScrapeBody caps what one fetch reads (a /metrics page is kilobytes to
// a few megabytes).
const maxScrapeBody = 64 << 20

// scrapeAccept prefers the classic text format; OpenMetrics and delimited
// protobuf decode too.
const scrapeAccept = "text/plain;version=0.0.4;q=1,application/openmetrics-text;version=1.0.0;q=0.5," +
	"application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.3,*/*;q=0.1"

// ScraperConfig configures a Scraper.
type ScraperConfig struct {
	// URLs are the full metrics URLs to scrape (see NormalizeMetricsURL).
	URLs []string
	// Interval between scrapes; 0 = DefaultScrapeInterval.
	Interval time.Duration
	// Timeout of one fetch when Client is nil; 0 = min(3·Interval, 5 s).
	Timeout time.Duration
	// Client fetches; nil = a client with Timeout.
	Client *http.Client
	// Collector receives every scrape (Add) and every failure (Fail).
	Collector *servermetrics.Collector
	// Now is the wall clock in ns; nil = time.Now().UnixNano.
	Now func() int64
	// Ticker returns the tick channel of the periodic scrapes and a
	// function that stops it; nil = a time.Ticker of Interval.
	Ticker func(time.Duration) (<-chan time.Time, func())
}

// Scraper scrapes Prometheus endpoints during a run: a baseline before the
// first request (Start), one every Interval, and a final one after the last
// request (Stop). A failed fetch is a gap and a warning in the collector,
// never an error of the run. Endpoints are fetched concurrently, and an
// endpoint whose previous fetch is still running skips the tick, so a slow
// endpoint never piles up fetches of itself.
type Scraper struct {
	cfg    ScraperConfig
	client *http.Client
	owned  bool // client is ours: its idle connections close at Stop
	now    func() int64
	busy   []atomic.Bool // per URL: a fetch is running

	startOnce, stopOnce sync.Once
	quit                chan struct{} // closed by Stop
	loopDone            chan struct{} // closed when the tick loop returned
	fetches             sync.WaitGroup
	finalNs             int64

	stateMu sync.Mutex      // guards ctx and stopped (ScrapeNow races Start and Stop)
	ctx     context.Context // set by Start
	stopped bool            // set by Stop before it waits for the fetches

	boundaryMissed atomic.Bool // a ScrapeAt fetch failed

	afterTick func() // test hook: called after each tick's fetches are dispatched
}

// NewScraper validates cfg and returns a Scraper.
func NewScraper(cfg ScraperConfig) (*Scraper, error) {
	if len(cfg.URLs) == 0 {
		return nil, errors.New("server metrics: no URL to scrape")
	}
	if cfg.Collector == nil {
		return nil, errors.New("server metrics: no collector")
	}
	if cfg.Interval < 0 {
		return nil, fmt.Errorf("server metrics: interval %v must be positive", cfg.Interval)
	}
	if cfg.Interval == 0 {
		cfg.Interval = DefaultScrapeInterval
	}
	s := &Scraper{cfg: cfg, client: cfg.Client, now: cfg.Now, busy: make([]atomic.Bool, len(cfg.URLs)),
		quit: make(chan struct{}), loopDone: make(chan struct{})}
	if s.client == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = 2
		s.client, s.owned = &http.Client{Timeout: scrapeTimeout(cfg), Transport: tr}, true
	}
	if s.now == nil {
		s.now = func() int64 { return time.Now().UnixNano() }
	}
	return s, nil
}

func scrapeTimeout(cfg ScraperConfig) time.Duration {
	if cfg.Timeout > 0 {
		return cfg.Timeout
	}
	return min(3*cfg.Interval, maxScrapeTimeout)
}

// Probe checks that url answers 200 with a parseable exposition; it is
// how the default <url>/metrics is found.
func (s *Scraper) Probe(ctx context.Context, url string) error {
	_, err := s.fetch(ctx, url)
	return err
}

// Start takes the baseline scrape of every endpoint (it returns once they
// are in the collector) and then scrapes every Interval until Stop or until
// ctx ends. Calls after the first do nothing.
func (s *Scraper) Start(ctx context.Context) {
	s.startOnce.Do(func() {
		s.stateMu.Lock()
		s.ctx = ctx
		s.stateMu.Unlock()
		s.scrapeAll(ctx)
		tick, stop := s.ticker()
		go s.loop(ctx, tick, stop)
	})
}

// Stop ends the periodic scrapes, waits for the fetches in flight, takes a
// final scrape of every endpoint and returns once everything is in the
// collector. It returns the send time of the last final fetch (the end of
// the profiling window). It is idempotent; Stop without Start takes only
// the final scrape.
func (s *Scraper) Stop() int64 {
	s.stopOnce.Do(func() {
		started := true
		s.startOnce.Do(func() { started = false })
		s.stateMu.Lock()
		s.stopped = true
		ctx := s.ctx
		s.stateMu.Unlock()
		if ctx == nil {
			ctx = context.Background()
		}
		close(s.quit)
		if started {
			<-s.loopDone
		}
		s.fetches.Wait()
		// The final scrape runs even when the run's context was cancelled.
		s.finalNs = s.scrapeAll(context.WithoutCancel(ctx))
		s.Close()
	})
	return s.finalNs
}

// Close releases the idle connections of the scraper's own client (Stop
// does it; a scraper used only to Probe needs it).
func (s *Scraper) Close() {
	if s.owned {
		s.client.CloseIdleConnections()
	}
}

func (s *Scraper) ticker() (<-chan time.Time, func()) {
	if s.cfg.Ticker != nil {
		return s.cfg.Ticker(s.cfg.Interval)
	}
	t := time.NewTicker(s.cfg.Interval)
	return t.C, t.Stop
}

func (s *Scraper) loop(ctx context.Context, tick <-chan time.Time, stop func()) {
	defer close(s.loopDone)
	defer stop()
	for {
		select {
		case <-s.quit:
			return
		case <-ctx.Done():
			return
		case <-tick:
			s.tick(ctx)
			if s.afterTick != nil {
				s.afterTick()
			}
		}
	}
}

// ScrapeAt starts a scrape of every endpoint, also of one whose periodic
// fetch is still running, and returns at once (Stop waits for it). The
// scrapes are stamped atNs (the caller's clock), even if their requests go
// out a moment later: a run calls it when its profiling phase begins, so
// the window's reference samples are taken after the warmup and before its
// first profiling send. A fetch that fails leaves the reference before the
// warmup's end: BoundaryMissed reports it. It does nothing before Start or
// after Stop.
func (s *Scraper) ScrapeAt(atNs int64) {
	s.stateMu.Lock()
	defer s.stateMu.Unlock()
	if s.ctx == nil || s.stopped {
		return
	}
	for _, u := range s.cfg.URLs {
		s.fetches.Add(1)
		go func() {
			defer s.fetches.Done()
			if err := s.scrapeStamped(s.ctx, u, atNs); err != nil {
				s.boundaryMissed.Store(true)
			}
		}()
	}
}

// BoundaryMissed reports whether a ScrapeAt fetch failed.
func (s *Scraper) BoundaryMissed() bool { return s.boundaryMissed.Load() }

// tick starts a fetch of every endpoint that is not still being fetched.
func (s *Scraper) tick(ctx context.Context) {
	for i := range s.cfg.URLs {
		if !s.busy[i].CompareAndSwap(false, true) {
			continue
		}
		s.fetches.Add(1)
		go func() {
			defer s.fetches.Done()
			defer s.busy[i].Store(false)
			s.scrape(ctx, s.cfg.URLs[i])
		}()
	}
}

// scrapeAll fetches every endpoint concurrently and waits; it returns the
// latest send time.
func (s *Scraper) scrapeAll(ctx context.Context) int64 {
	var wg sync.WaitGroup
	at := make([]int64, len(s.cfg.URLs))
	for i, u := range s.cfg.URLs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			at[i] = s.scrape(ctx, u)
		}()
	}
	wg.Wait()
	return maxInt64(at)
}

// scrape fetches url into the collector and returns the send time.
func (s *Scraper) scrape(ctx context.Context, url string) int64 {
	sc, err := s.fetch(ctx, url)
	s.record(sc, err)
	return sc.AtNs
}

// scrapeStamped is scrape with the scrape's time set to stamp.
func (s *Scraper) scrapeStamped(ctx context.Context, url string, stamp int64) error {
	sc, err := s.fetch(ctx, url)
	sc.AtNs = stamp
	s.record(sc, err)
	return err
}

// record adds a fetch to the collector, or its failure.
func (s *Scraper) record(sc servermetrics.Scrape, err error) {
	if err != nil {
		s.cfg.Collector.Fail(sc.Endpoint, err)
		return
	}
	s.cfg.Collector.Add(sc)
}

// fetch GETs url and parses the exposition. The returned Scrape carries
// the send time also on failure.
func (s *Scraper) fetch(ctx context.Context, url string) (servermetrics.Scrape, error) {
	sc := servermetrics.Scrape{Endpoint: url, AtNs: s.now()}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return sc, err
	}
	req.Header.Set("Accept", scrapeAccept)
	resp, err := s.client.Do(req)
	if err != nil {
		return sc, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		return sc, fmt.Errorf("HTTP %s", resp.Status)
	}
	fams, err := servermetrics.ParseExposition(io.LimitReader(resp.Body, maxScrapeBody), expfmt.ResponseFormat(resp.Header))
	if err != nil {
		return sc, err
	}
	sc.LatencyNs, sc.Families = s.now()-sc.AtNs, fams
	return sc, nil
}

func maxInt64(v []int64) int64 {
	m := v[0]
	for _, x := range v[1:] {
		m = max(m, x)
	}
	return m
}

// NormalizeMetricsURL reads a --server-metrics value as AIPerf does: the
// scheme is optional (http:// assumed) and a URL without a path gets
// /metrics.
func NormalizeMetricsURL(s string) (string, error) {
	raw := strings.TrimSpace(s)
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", fmt.Errorf("server metrics URL %q: want [http[s]://]host[:port][/path]", results.RedactURL(s))
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/metrics"
	}
	return u.String(), nil
}

// DefaultMetricsURL is the metrics endpoint scraped by default:
// <base>/metrics for the server's base URL (scheme optional).
func DefaultMetricsURL(baseURL string) (string, error) {
	base := strings.TrimSpace(baseURL)
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	u, err := url.Parse(base)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", fmt.Errorf("--url %q: want [http[s]://]host[:port][/prefix]", results.RedactURL(baseURL))
	}
	u.Path = strings.TrimRight(u.Path, "/") + "/metrics"
	u.RawPath, u.RawQuery, u.Fragment = "", "", ""
	return u.String(), nil
}

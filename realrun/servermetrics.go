package realrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync/atomic"
	"time"

	"github.com/simbench/simbench/internal/usage"
	"github.com/simbench/simbench/internal/warning"
	"github.com/simbench/simbench/loadgen"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/servermetrics"
)

// ServerMetricsOptions say which Prometheus endpoints a run scrapes.
type ServerMetricsOptions struct {
	// Off scrapes nothing, not even <url>/metrics.
	Off bool
	// URLs are scraped always (normalised, see loadgen.NormalizeMetricsURL);
	// <url>/metrics is scraped too when it answers with an exposition.
	URLs []string
	// Interval is the time between scrapes; 0 = loadgen.DefaultScrapeInterval.
	Interval time.Duration
	// Timeout bounds each scrape; 0 = loadgen's default, min(3 intervals, 5 s).
	Timeout time.Duration
}

// serverMetrics is the server-metrics collection of one run; a nil
// *serverMetrics collects nothing.
type serverMetrics struct {
	scraper   *loadgen.Scraper
	collector *servermetrics.Collector
	urls      []string
	errw      io.Writer
	warn      func([]error)
	firstNs   atomic.Int64 // earliest send of a non-warmup request; 0 = none
	endNs     int64        // the final scrape
}

// newServerMetrics finds the endpoints to scrape: those given, and
// <url>/metrics when it answers. It is nil when there is nothing to scrape.
func newServerMetrics(ctx context.Context, baseURL string, o Options) (*serverMetrics, error) {
	if o.ServerMetrics.Off {
		return nil, nil
	}
	cfg := loadgen.ScraperConfig{Interval: o.ServerMetrics.Interval, Timeout: o.ServerMetrics.Timeout,
		URLs: slices.Clone(o.ServerMetrics.URLs)}
	if cfg.Interval == 0 {
		cfg.Interval = loadgen.DefaultScrapeInterval
	}
	def, err := loadgen.DefaultMetricsURL(baseURL)
	if err != nil {
		return nil, usage.Wrap(err)
	}
	if !slices.Contains(cfg.URLs, def) {
		if err := probeMetricsURL(ctx, cfg, def); err != nil {
			if !o.Quiet {
				fmt.Fprintf(o.Log, "server metrics: %s not scraped: %v\n", results.RedactURL(def), err)
			}
		} else {
			cfg.URLs = append([]string{def}, cfg.URLs...)
		}
	}
	if len(cfg.URLs) == 0 {
		return nil, nil
	}
	cfg.Collector = servermetrics.NewCollector(cfg.URLs)
	s, err := loadgen.NewScraper(cfg)
	if err != nil {
		return nil, err
	}
	return &serverMetrics{scraper: s, collector: cfg.Collector, urls: cfg.URLs, errw: o.Log, warn: o.warn}, nil
}

// probeMetricsURL checks that the default endpoint answers with an exposition.
func probeMetricsURL(ctx context.Context, cfg loadgen.ScraperConfig, url string) error {
	cfg.URLs, cfg.Collector = []string{url}, servermetrics.NewCollector(nil)
	s, err := loadgen.NewScraper(cfg)
	if err != nil {
		return err
	}
	defer s.Close()
	return s.Probe(ctx, url)
}

// start takes the baseline scrape and starts the periodic ones, until stop
// (give it a context the run's interrupt does not cancel: an interrupted
// run is still scraped to its end).
func (sm *serverMetrics) start(ctx context.Context) {
	if sm != nil {
		sm.scraper.Start(ctx)
	}
}

// profilingStart scrapes at the start of the profiling phase (after a
// warmup phase), so the window's reference samples exclude the warmup.
func (sm *serverMetrics) profilingStart(atNs int64) {
	if sm != nil {
		sm.scraper.ScrapeAt(atNs)
	}
}

// stop takes the final scrape, after the last request finished.
func (sm *serverMetrics) stop() {
	if sm != nil {
		sm.endNs = sm.scraper.Stop()
	}
}

// sink passes every record on and notes the earliest non-warmup send, the
// start of the profiling window.
func (sm *serverMetrics) sink(next loadgen.Sink) loadgen.Sink {
	if sm == nil {
		return next
	}
	return func(r *results.Record) (results.RecordMetrics, error) {
		if !r.Warmup && r.StartNs > 0 {
			sm.noteSend(r.StartNs)
		}
		return next(r)
	}
}

func (sm *serverMetrics) noteSend(ns int64) {
	for {
		cur := sm.firstNs.Load()
		if (cur != 0 && cur <= ns) || sm.firstNs.CompareAndSwap(cur, ns) {
			return
		}
	}
}

// finish writes DIR/server_metrics_export.json and .csv over the profiling
// window (from the first non-warmup send, else runStartNs, to the final
// scrape) and, when the server breaks TTFT down, DIR/ttft_breakdown.json;
// it returns that breakdown (nil when none) and the server's speculative
// decoding counters over the window (nil when it drafted nothing). Scrape
// warnings (each once), and a failure to write these files, go to the warn
// hook and the note that none was scraped to the log: they are a
// supplement to the run's results and never fail it.
func (sm *serverMetrics) finish(dir string, runStartNs int64, inputConfig any) (*servermetrics.TTFTBreakdown, *results.SpecDecode) {
	if sm == nil {
		return nil, nil
	}
	if !sm.scraped() {
		sm.warn(warning.Unique(sm.collector.Warnings()))
		fmt.Fprintf(sm.errw, "server metrics: no endpoint was scraped successfully; %s not written\n", servermetrics.JSONName)
		return nil, nil
	}
	w := servermetrics.Window{StartNs: sm.firstNs.Load(), EndNs: sm.endNs}
	if w.StartNs == 0 || w.StartNs > w.EndNs {
		w.StartNs = min(runStartNs, w.EndNs)
	}
	e := sm.collector.Export(w, inputConfig)
	if sm.scraper.BoundaryMissed() {
		e.Simbench.Warnings = append(e.Simbench.Warnings, errors.New("the scrape at the start of the profiling phase failed: "+
			"server-side counters and histograms may include warmup requests"))
	}
	sm.warn(warning.Unique(append(sm.collector.Warnings(), e.Simbench.Warnings...)))
	b, err := servermetrics.WriteFiles(dir, e)
	if err != nil {
		sm.warn([]error{fmt.Errorf("server metrics: %w", err)})
	}
	if s, ok := servermetrics.SpecDecode(e); ok {
		return b, &s
	}
	return b, nil
}

func (sm *serverMetrics) scraped() bool {
	for _, u := range sm.urls {
		if sm.collector.Scrapes(u) > 0 {
			return true
		}
	}
	return false
}

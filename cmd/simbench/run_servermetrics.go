package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync/atomic"

	"github.com/simbench/simbench/loadgen"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/servermetrics"
	"github.com/urfave/cli/v2"
)

// serverMetricsDescription is the run command's help on server metrics.
const serverMetricsDescription = "Server metrics (AIPerf's flags): <url>/metrics is probed before the run and, when it answers\n" +
	"with a Prometheus exposition, scraped (else one note on stderr); --server-metrics URL adds endpoints\n" +
	"(repeatable; scheme optional, /metrics added when the URL has no path), always scraped;\n" +
	"--no-server-metrics scrapes nothing. Each endpoint is scraped before the first request, every\n" +
	"--server-metrics-interval (default 333ms) and after the last request; a failed scrape is a warning\n" +
	"and a gap, never a failed run. DIR/server_metrics_export.json holds counters (total, rate),\n" +
	"gauges (avg/min/max/std/percentiles) and histograms (count, sum, avg, estimated percentiles) over\n" +
	"the profiling window, from the first non-warmup request to the final scrape. When the server\n" +
	"exports a TTFT breakdown (Dynamo's dynamo_frontend_ttft_stage_seconds, vLLM's queue and prefill\n" +
	"times), its stage means are printed after the summary and written to DIR/ttft_breakdown.json."

func serverMetricsFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "server-metrics", Usage: "Prometheus endpoint to scrape during the run (scheme optional, /metrics added when no path); repeatable; <url>/metrics is scraped too when it answers"},
		&cli.BoolFlag{Name: "no-server-metrics", Usage: "scrape no server metrics, not even <url>/metrics"},
		&cli.DurationFlag{Name: "server-metrics-interval", Value: loadgen.DefaultScrapeInterval, Usage: "time between server-metrics scrapes"},
	}
}

// serverMetrics is the server-metrics collection of one run; a nil
// *serverMetrics collects nothing.
type serverMetrics struct {
	scraper   *loadgen.Scraper
	collector *servermetrics.Collector
	urls      []string
	errw      io.Writer
	firstNs   atomic.Int64 // earliest send of a non-warmup request; 0 = none
	endNs     int64        // the final scrape
}

// newServerMetrics reads the flags and finds the endpoints to scrape:
// those given, and <url>/metrics when it answers. It is nil when there is
// nothing to scrape.
func newServerMetrics(c *cli.Context, baseURL string) (*serverMetrics, error) {
	if c.Bool("no-server-metrics") {
		return nil, nil
	}
	cfg := loadgen.ScraperConfig{Interval: c.Duration("server-metrics-interval")}
	if cfg.Interval <= 0 {
		return nil, usagef("--server-metrics-interval must be positive, got %v", cfg.Interval)
	}
	for _, v := range c.StringSlice("server-metrics") {
		u, err := loadgen.NormalizeMetricsURL(v)
		if err != nil {
			return nil, usagef("--server-metrics: %v", err)
		}
		if !slices.Contains(cfg.URLs, u) {
			cfg.URLs = append(cfg.URLs, u)
		}
	}
	def, err := loadgen.DefaultMetricsURL(baseURL)
	if err != nil {
		return nil, usageError{err}
	}
	if !slices.Contains(cfg.URLs, def) {
		if err := probeMetricsURL(c.Context, cfg, def); err != nil {
			if !c.Bool("quiet") {
				fmt.Fprintf(c.App.ErrWriter, "server metrics: %s not scraped: %v\n", def, err)
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
	return &serverMetrics{scraper: s, collector: cfg.Collector, urls: cfg.URLs, errw: c.App.ErrWriter}, nil
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
// it returns that breakdown (nil when none). Scrape warnings, and a failure
// to write these files, go to stderr: they are a supplement to the run's
// results and never fail it.
func (sm *serverMetrics) finish(dir string, runStartNs int64, inputConfig any) *servermetrics.TTFTBreakdown {
	if sm == nil {
		return nil
	}
	if !sm.scraped() {
		sm.warn(sm.collector.Warnings())
		fmt.Fprintf(sm.errw, "server metrics: no endpoint was scraped successfully; %s not written\n", servermetrics.JSONName)
		return nil
	}
	w := servermetrics.Window{StartNs: sm.firstNs.Load(), EndNs: sm.endNs}
	if w.StartNs == 0 || w.StartNs > w.EndNs {
		w.StartNs = min(runStartNs, w.EndNs)
	}
	e := sm.collector.Export(w, inputConfig)
	if sm.scraper.BoundaryMissed() {
		e.Simbench.Warnings = append(e.Simbench.Warnings, "the scrape at the start of the profiling phase failed: "+
			"server-side counters and histograms may include warmup requests")
	}
	sm.warn(append(sm.collector.Warnings(), e.Simbench.Warnings...))
	b, err := servermetrics.WriteFiles(dir, e)
	if err != nil {
		fmt.Fprintf(sm.errw, "warning: server metrics: %v\n", err)
	}
	return b
}

func (sm *serverMetrics) scraped() bool {
	for _, u := range sm.urls {
		if sm.collector.Scrapes(u) > 0 {
			return true
		}
	}
	return false
}

// warn prints each warning once.
func (sm *serverMetrics) warn(ws []string) {
	seen := map[string]bool{}
	for _, w := range ws {
		if !seen[w] {
			seen[w] = true
			fmt.Fprintf(sm.errw, "warning: %s\n", w)
		}
	}
}

// printRunBreakdown prints the TTFT breakdown after the run summary.
func printRunBreakdown(w io.Writer, b *servermetrics.TTFTBreakdown) error {
	if b == nil {
		return nil
	}
	if _, err := fmt.Fprintln(w); err != nil {
		return err
	}
	return b.WriteText(w)
}

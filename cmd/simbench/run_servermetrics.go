package main

import (
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/simbench/simbench/loadgen"
	"github.com/simbench/simbench/realrun"
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

// serverMetricsFromFlags reads --no-server-metrics, --server-metrics and
// --server-metrics-interval.
func serverMetricsFromFlags(c *cli.Context) (realrun.ServerMetricsOptions, error) {
	o := realrun.ServerMetricsOptions{Off: c.Bool("no-server-metrics"), Interval: c.Duration("server-metrics-interval")}
	if o.Off {
		return o, nil
	}
	if o.Interval <= 0 {
		return o, usagef("--server-metrics-interval must be positive, got %v", o.Interval)
	}
	for _, v := range c.StringSlice("server-metrics") {
		u, err := loadgen.NormalizeMetricsURL(v)
		if err != nil {
			return o, usagef("--server-metrics: %v", err)
		}
		if !slices.Contains(o.URLs, u) {
			o.URLs = append(o.URLs, u)
		}
	}
	return o, nil
}

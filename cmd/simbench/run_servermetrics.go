package main

import (
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/simbench/simbench/loadgen"
	"github.com/simbench/simbench/realrun"
)

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

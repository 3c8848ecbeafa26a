package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/simbench/simbench/compare"
	"github.com/simbench/simbench/plots"
	"github.com/simbench/simbench/results"
	"github.com/urfave/cli/v2"
)

func plotCommand() *cli.Command {
	return &cli.Command{
		Name:      "plot",
		Usage:     "draw PNG plots of one run: latency CDFs, token-gap timeline with stalls, throughput over time",
		ArgsUsage: "RUN",
		UsageText: "simbench plot RUN -o DIR [--stall-k 5] [--stall-floor-ms 50]",
		Description: "RUN is a run directory, a profile_export.jsonl (AIPerf's or simbench's) or a DynoSim\n" +
			"--per-request-jsonl file; the plots need per-request records. Writes into DIR:\n" +
			"  cdf_time_to_first_token.png, cdf_inter_token_latency.png, cdf_request_latency.png,\n" +
			"  cdf_token_gap.png   CDFs on a log x axis\n" +
			"  token_gap_timeline.png   largest and mean token gap per second, stalls marked\n" +
			"  output_throughput.png    output tokens per second in 1 s bins\n" +
			"A stall is a token gap larger than both k × the run's median gap and the floor.\n\n" +
			"Example:\n  simbench plot artifacts/real -o artifacts/real/plots",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "output-dir", Aliases: []string{"o"}, Usage: "directory to write the PNGs into", Required: true},
			&cli.StringFlag{Name: "records", Usage: "per-request JSONL to use when RUN has none beside it (e.g. DynoSim's --per-request-jsonl)"},
		}, stallFlags()...),
		Action: plotAction,
	}
}

func stallFlags() []cli.Flag {
	return []cli.Flag{
		&cli.Float64Flag{Name: "stall-k", Value: compare.DefaultStallOptions.K, Usage: "a stall is a token gap > k × the run's median gap …"},
		&cli.Float64Flag{Name: "stall-floor-ms", Value: compare.DefaultStallOptions.FloorMs, Usage: "… and > this floor (ms)"},
	}
}

func stallOptions(c *cli.Context) (compare.StallOptions, error) {
	o := compare.StallOptions{K: c.Float64("stall-k"), FloorMs: c.Float64("stall-floor-ms")}
	if !(o.K > 0) || !(o.FloorMs >= 0) {
		return o, usagef("--stall-k must be > 0 and --stall-floor-ms ≥ 0, got %g and %g", o.K, o.FloorMs)
	}
	return o, nil
}

func plotAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return usagef("plot takes one RUN, got %d arguments", c.NArg())
	}
	opts, err := stallOptions(c)
	if err != nil {
		return err
	}
	softMemoryLimit()
	in, err := openInput(c.Args().First(), c.String("records"))
	if err != nil {
		return err
	}
	d, err := compare.Scan(in, opts)
	if err != nil {
		return err
	}
	if d == nil || len(d.Requests) == 0 {
		return fmt.Errorf("%s: no per-request records to plot (give --records FILE)", in.Path)
	}
	paths, err := writeRunPlots(c.String("output-dir"), d)
	for _, p := range paths {
		fmt.Fprintln(c.App.Writer, "wrote", p)
	}
	return err
}

func openInput(path, records string) (*compare.Input, error) {
	in, err := compare.Open(path)
	if err != nil {
		return nil, err
	}
	if records != "" {
		if err := in.AttachRecords(records); err != nil {
			return nil, err
		}
	}
	return in, nil
}

// cdfMetrics are the per-request metrics drawn as CDFs, with axis labels.
var cdfMetrics = []struct{ tag, label string }{
	{results.TagTTFT, "time to first token (ms)"},
	{results.TagITL, "inter-token latency (ms)"},
	{results.TagRequestLatency, "request latency (ms)"},
}

// writeRunPlots draws the figures of one run into dir and returns the
// files written.
func writeRunPlots(dir string, d *compare.Digest) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	w := &plotWriter{dir: dir}
	addRunPlots(w, []*compare.Digest{d}, []*compare.Stalls{d.Stalls()})
	return w.run()
}

// addRunPlots adds the figures of one or two runs: CDF overlays, token-gap
// timelines and throughput over time.
func addRunPlots(w *plotWriter, ds []*compare.Digest, stalls []*compare.Stalls) {
	for _, m := range cdfMetrics {
		var ss []plots.Series
		for _, d := range ds {
			if d != nil {
				ss = append(ss, plots.Series{Name: d.Name, Values: d.Values(m.tag)})
			}
		}
		w.add("cdf_"+m.tag+".png", func() (plots.Figure, error) {
			return plots.Distribution("CDF of "+m.label, m.label, ss...)
		})
	}
	var gaps []plots.Series
	var tls []plots.GapTimeline
	var tps []plots.Throughput
	for i, d := range ds {
		if d == nil {
			continue
		}
		gaps = append(gaps, plots.Series{Name: d.Name, Values: d.TokenGaps})
		tl, tp := timelineOf(d, stalls[i])
		tls, tps = append(tls, tl), append(tps, tp)
	}
	w.add("cdf_token_gap.png", func() (plots.Figure, error) {
		return plots.Distribution("CDF of pooled token gaps", "token gap (ms)", gaps...)
	})
	w.add("token_gap_timeline.png", func() (plots.Figure, error) { return plots.Timelines("Token gaps over time", tls...) })
	w.add("output_throughput.png", func() (plots.Figure, error) {
		return plots.ThroughputOverTime("Output token throughput over time", tps...)
	})
}

func timelineOf(d *compare.Digest, s *compare.Stalls) (plots.GapTimeline, plots.Throughput) {
	tl := plots.GapTimeline{Name: d.Name}
	tp := plots.Throughput{Name: d.Name}
	for _, sec := range d.Seconds() {
		tl.Seconds = append(tl.Seconds, sec.StartS)
		tl.MeanMs = append(tl.MeanMs, sec.GapMeanMs)
		tl.MaxMs = append(tl.MaxMs, sec.GapMaxMs)
		tp.Seconds = append(tp.Seconds, sec.StartS)
		tp.TokensPerS = append(tp.TokensPerS, sec.TokensPerS)
		tp.EndS = sec.StartS + sec.SpanS
	}
	if s != nil {
		tl.ThresholdMs = s.ThresholdMs
		for _, e := range s.Events {
			tl.StallAtS = append(tl.StallAtS, e.AtS)
			tl.StallGapMs = append(tl.StallGapMs, e.GapMs)
		}
	}
	return tl, tp
}

// plotWriter collects figures and renders them concurrently, at most
// GOMAXPROCS at a time (rasterizing and PNG encoding are CPU-bound), into
// pre-allocated slots so the files are listed in the order they were added.
// A figure with nothing to show (plots.ErrNoData) is skipped.
type plotWriter struct {
	dir  string
	jobs []plotJob
}

type plotJob struct {
	name  string
	build func() (plots.Figure, error)
}

func (w *plotWriter) add(name string, build func() (plots.Figure, error)) {
	w.jobs = append(w.jobs, plotJob{name, build})
}

// run renders every figure and returns the files written, in order, and
// the first error in that order.
func (w *plotWriter) run() ([]string, error) {
	paths := make([]string, len(w.jobs))
	errs := make([]error, len(w.jobs))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, j := range w.jobs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			paths[i], errs[i] = w.render(j)
		}()
	}
	wg.Wait()
	var out []string
	for i, p := range paths {
		if errs[i] != nil {
			return out, errs[i]
		}
		if p != "" {
			out = append(out, p)
		}
	}
	return out, nil
}

func (w *plotWriter) render(j plotJob) (string, error) {
	f, err := j.build()
	if errors.Is(err, plots.ErrNoData) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("%s: %w", j.name, err)
	}
	path := filepath.Join(w.dir, j.name)
	if err := plots.SavePNG(path, f); err != nil {
		return "", err
	}
	return path, nil
}

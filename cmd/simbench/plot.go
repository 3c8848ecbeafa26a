package main

import (
	"fmt"

	"github.com/simbench/simbench/plots/figures"

	"github.com/urfave/cli/v2"

	"github.com/simbench/simbench/compare"
)

func plotCommand() *cli.Command {
	return &cli.Command{
		Name:        "plot",
		Usage:       "draw PNG plots of one run (latency CDFs, token-gap timeline with stalls, throughput over time) or of a load sweep",
		ArgsUsage:   "RUN|SWEEP_DIR",
		UsageText:   "simbench plot RUN -o DIR [--stall-k 5] [--stall-floor-ms 50]\nsimbench plot SWEEP_DIR -o DIR   (a load sweep: throughput vs latency, SLO attainment vs load)",
		Description: help("plot"),
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "output-dir", Aliases: []string{"o", "output"}, Usage: "directory to write the PNGs into (aiperf plot's --output)", Required: true},
			&cli.StringFlag{Name: "records", Usage: "per-request JSONL to use when RUN has none beside it (e.g. DynoSim's --per-request-jsonl)"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print nothing but errors"},
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
		return usagef("plot takes one RUN or load-sweep directory, got %d arguments", c.NArg())
	}
	opts, err := stallOptions(c)
	if err != nil {
		return err
	}
	if arg := c.Args().First(); compare.IsSweep(arg) {
		return plotSweep(c, arg)
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
	paths, err := figures.Run(c.String("output-dir"), d)
	if !c.Bool("quiet") {
		for _, p := range paths {
			fmt.Fprintln(c.App.Writer, "wrote", p)
		}
	}
	return err
}

// plotSweep draws a load-sweep directory: throughput against latency,
// attainment against the load.
func plotSweep(c *cli.Context, dir string) error {
	if c.IsSet("records") {
		return usagef("--records applies to a run, not to a load sweep")
	}
	side, err := compare.OpenSweep(dir)
	if err != nil {
		return err
	}
	paths, err := figures.Sweep(c.String("output-dir"), side)
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

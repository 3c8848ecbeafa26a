package main

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/simbench/simbench/compare"
	"github.com/simbench/simbench/htmlreport"
	"github.com/simbench/simbench/plots/figures"
)

func reportCommand() *cli.Command {
	return &cli.Command{
		Name:      "report",
		Usage:     "one self-contained HTML file of a run or of comparisons: tables, verdicts, the plots embedded",
		ArgsUsage: "DIR...",
		UsageText: "simbench report RUN|SWEEP_DIR -o report.html\n" +
			"simbench report REFERENCE CANDIDATE... -o report.html [--gate] [--fail-above metric.stat=PCT%]...",
		Description: help("report"),
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "the HTML `FILE` to write", Required: true},
			&cli.StringFlag{Name: "title", Value: "simbench report", Usage: "the page's title"},
			&cli.StringSliceFlag{Name: "fail-above", Usage: "metric.stat=PCT% bound on |error %|; repeatable or comma-separated"},
			&cli.BoolFlag{Name: "gate", Usage: "enable the default bounds (explicit --fail-above values override them)"},
			&cli.Float64Flag{Name: "alpha", Value: compare.DefaultAlpha, Usage: "several runs per side: Mann–Whitney significance level"},
		}, stallFlags()...),
		Action: reportAction,
	}
}

// reportAction writes the page: one run's section, or a comparison of
// each further argument with the first (runs, run lists or load sweeps).
// The exit status is the comparisons' verdict, as compare's.
func reportAction(c *cli.Context) error {
	args := c.Args().Slice()
	if len(args) == 0 {
		return usagef("report takes a RUN, or a REFERENCE and one or more CANDIDATEs")
	}
	out := c.String("output")
	if filepath.Ext(out) != ".html" {
		return usagef("-o must name an .html file, got %q", out)
	}
	if err := refuseInputAsOutput("-o", out, args); err != nil {
		return err
	}
	opts, err := judgeOptions(c)
	if err != nil {
		return err
	}
	softMemoryLimit()
	sections, verdict, err := reportSections(args, opts)
	if err != nil {
		return err
	}
	if err := htmlreport.WriteFile(out, htmlreport.Page{Title: c.String("title"), Sections: sections}); err != nil {
		return err
	}
	fmt.Fprintln(c.App.Writer, "wrote", out)
	return verdict
}

// reportSections builds the sections and the first comparison's verdict
// error (a breach or a missing gated field) among them.
func reportSections(args []string, opts compare.Options) ([]htmlreport.Section, error, error) {
	sweeps := 0
	for _, a := range args {
		if compare.IsSweep(a) {
			sweeps++
		}
	}
	switch {
	case sweeps > 0 && sweeps < len(args):
		return nil, nil, usagef("a load sweep is compared with load sweeps, not runs: give sweep directories only")
	case sweeps == 1 && len(args) == 1:
		s, err := sweepSection(args[0])
		return []htmlreport.Section{s}, nil, err
	case len(args) == 1:
		s, err := runSection(args[0], opts.Stall)
		return []htmlreport.Section{s}, nil, err
	}
	var sections []htmlreport.Section
	var verdicts []error
	for _, cand := range args[1:] {
		s, verdict, err := comparisonSection(args[0], cand, sweeps > 0, opts)
		if err != nil {
			return nil, nil, err
		}
		sections, verdicts = append(sections, s), append(verdicts, verdict)
	}
	return sections, errors.Join(verdicts...), nil
}

// comparisonSection compares cand with ref (two runs or run lists, or
// two load sweeps) and draws its figures.
func comparisonSection(ref, cand string, sweeps bool, opts compare.Options) (htmlreport.Section, error, error) {
	if sweeps {
		rep, err := compare.CompareSweepDirs(ref, cand, opts)
		if err != nil {
			return htmlreport.Section{}, nil, err
		}
		figs, err := htmlreport.Draw(func(dir string) ([]string, error) { return figures.CompareSweeps(dir, rep) })
		return htmlreport.SweepComparison(rep, figs), verdictError(rep), err
	}
	var sides [2][]*compare.Input
	for i, arg := range []string{ref, cand} {
		paths, err := compare.ExpandRuns(arg)
		if err != nil {
			return htmlreport.Section{}, nil, err
		}
		if sides[i], err = compare.OpenRuns(paths); err != nil {
			return htmlreport.Section{}, nil, err
		}
	}
	rep, err := compare.Compare(sides[0], sides[1], opts)
	if err != nil {
		return htmlreport.Section{}, nil, err
	}
	if err := rep.UnknownMetrics(); err != nil {
		return htmlreport.Section{}, nil, usagef("--fail-above %v", err)
	}
	figs, err := htmlreport.Draw(func(dir string) ([]string, error) { return figures.Compare(dir, rep) })
	return htmlreport.Comparison(rep, figs), verdictError(rep), err
}

// sweepSection is one load sweep's points, capacity and figures.
func sweepSection(dir string) (htmlreport.Section, error) {
	side, err := compare.OpenSweep(dir)
	if err != nil {
		return htmlreport.Section{}, err
	}
	figs, err := htmlreport.Draw(func(out string) ([]string, error) { return figures.Sweep(out, side) })
	return htmlreport.Sweep(side, figs), err
}

// runSection is one run's metrics and figures.
func runSection(path string, stall compare.StallOptions) (htmlreport.Section, error) {
	in, err := compare.Open(path)
	if err != nil {
		return htmlreport.Section{}, err
	}
	d, err := compare.Scan(in, stall)
	if err != nil {
		return htmlreport.Section{}, err
	}
	var figs []htmlreport.Figure
	if d != nil && len(d.Requests) > 0 {
		if figs, err = htmlreport.Draw(func(dir string) ([]string, error) { return figures.Run(dir, d) }); err != nil {
			return htmlreport.Section{}, err
		}
	}
	return htmlreport.Run(in.Name, in.Path, in.Profile, figs), nil
}

// writeHTML writes compare's --html page (nothing when path is ""): the
// --plots files when drawn, else figures drawn by draw into a temporary
// directory.
func writeHTML(path string, plots []string, draw func(dir string) ([]string, error),
	section func([]htmlreport.Figure) htmlreport.Section) error {
	if path == "" {
		return nil
	}
	figs, err := htmlreport.Embed(plots)
	if plots == nil {
		figs, err = htmlreport.Draw(draw)
	}
	if err != nil {
		return err
	}
	return htmlreport.WriteFile(path, htmlreport.Page{Title: "simbench compare", Sections: []htmlreport.Section{section(figs)}})
}

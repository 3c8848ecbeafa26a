package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/simbench/simbench/compare"
	"github.com/simbench/simbench/htmlreport"
	"github.com/simbench/simbench/plots/figures"
	"github.com/simbench/simbench/results"
)

func compareCommand() *cli.Command {
	return &cli.Command{
		Name:      "compare",
		Usage:     "line up two runs metric by metric in AIPerf's terms, with error %, stalls and plots",
		ArgsUsage: "REFERENCE CANDIDATE",
		UsageText: "simbench compare REFERENCE CANDIDATE [--format text|markdown|json|junit] [-o FILE]\n" +
			"   [--gate] [--fail-above metric.stat=PCT%]... [--plots DIR] [--stall-k 5] [--stall-floor-ms 50]\n" +
			"simbench compare REF1,REF2,... CAND1,CAND2,... [--alpha 0.05] [same flags]   (several runs per side)",
		Description: help("compare"),
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Value: "text", Usage: "text, markdown, json or junit"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the report to FILE instead of stdout"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no report on stdout: the exit code (and -o FILE) carry the verdict"},
			&cli.StringFlag{Name: "reference", Value: "a", Usage: "which argument is the reference: a (first) or b (second)"},
			&cli.StringSliceFlag{Name: "fail-above", Usage: "metric.stat=PCT% bound on |error %|; repeatable or comma-separated"},
			&cli.BoolFlag{Name: "gate", Usage: "enable the default bounds (explicit --fail-above values override them) and fail when the workloads differ"},
			&cli.StringFlag{Name: "plots", Usage: "write PNG plots (CDFs, error bars, scatter, timelines, throughput, TTFT breakdown) into DIR"},
			&cli.StringFlag{Name: "html", Usage: "also write the report as one self-contained HTML `FILE` (tables, verdicts, the plots embedded)"},
			&cli.StringFlag{Name: "records-a", Usage: "per-request JSONL for the first run (e.g. DynoSim's --per-request-jsonl)"},
			&cli.StringFlag{Name: "records-b", Usage: "per-request JSONL for the second run"},
			&cli.Float64Flag{Name: "alpha", Value: compare.DefaultAlpha, Usage: "several runs per side: Mann–Whitney significance level; p > alpha is within noise (~)"},
		}, stallFlags()...),
		Action: compareAction,
	}
}

// memoryLimit is the soft heap limit of compare and plot.
const memoryLimit = 1536 << 20

// softMemoryLimit caps the heap softly unless GOMEMLIMIT says otherwise.
// A comparison keeps two runs' pooled gaps (tens of millions of floats for
// million-request runs) while the JSONL reader produces garbage at a high
// rate; with Go's default GOGC=100 the heap may grow to twice the live
// data before a collection. Near the limit the collector runs more often
// instead, which costs a little CPU and keeps big comparisons under 2 GiB.
func softMemoryLimit() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
}

// compareFormats are the renderers by --format name.
var compareFormats = map[string]func(w io.Writer, rep *compare.Report, links []string) error{
	"text":     func(w io.Writer, rep *compare.Report, _ []string) error { return compare.WriteText(w, rep) },
	"markdown": compare.WriteMarkdown,
	"json":     func(w io.Writer, rep *compare.Report, _ []string) error { return compare.WriteJSON(w, rep) },
	"junit":    func(w io.Writer, rep *compare.Report, _ []string) error { return compare.WriteJUnit(w, rep) },
}

func compareAction(c *cli.Context) error {
	if c.NArg() != 2 {
		return usagef("compare takes REFERENCE and CANDIDATE, got %d arguments", c.NArg())
	}
	opts, err := compareOptions(c)
	if err != nil {
		return err
	}
	for _, flag := range []string{"output", "html"} {
		if err := refuseInputAsOutput("--"+flag, c.String(flag), compareInputs(c)); err != nil {
			return err
		}
	}
	softMemoryLimit()
	if a, b := compare.IsSweep(c.Args().Get(0)), compare.IsSweep(c.Args().Get(1)); a || b {
		return compareSweeps(c, a && b, opts)
	}
	refs, cands, err := openSides(c)
	if err != nil {
		return err
	}
	rep, err := compare.Compare(refs, cands, opts)
	if err != nil {
		return err
	}
	if err := rep.UnknownMetrics(); err != nil {
		return usagef("--fail-above %v", err)
	}
	return writeReport(c, rep)
}

// writeReport draws --plots, renders the report in --format, returns its verdict.
func writeReport(c *cli.Context, rep *compare.Report) error {
	var plots []string
	if dir := c.String("plots"); dir != "" {
		var err error
		if plots, err = figures.Compare(dir, rep); err != nil {
			return err
		}
	}
	if err := writeHTML(c.String("html"), plots, func(dir string) ([]string, error) { return figures.Compare(dir, rep) },
		func(figs []htmlreport.Figure) htmlreport.Section { return htmlreport.Comparison(rep, figs) }); err != nil {
		return err
	}
	render := compareFormats[c.String("format")]
	links := figures.Links(plots, c.String("output"))
	if err := writeOutput(c, func(w io.Writer) error { return render(w, rep, links) }); err != nil {
		return err
	}
	if err := rep.WorkloadError(); err != nil {
		return err // not like for like: before any verdict
	}
	return verdictError(rep)
}

func compareOptions(c *cli.Context) (compare.Options, error) {
	if compareFormats[c.String("format")] == nil {
		return compare.Options{}, usagef("--format must be text, markdown, json or junit, got %q", c.String("format"))
	}
	if r := c.String("reference"); r != "a" && r != "b" {
		return compare.Options{}, usagef("--reference must be a or b, got %q", r)
	}
	return judgeOptions(c)
}

// judgeOptions are the comparison's bounds, stall rule and significance
// level (compare's and report's flags).
func judgeOptions(c *cli.Context) (compare.Options, error) {
	var opts compare.Options
	if a := c.Float64("alpha"); !(a > 0 && a < 1) {
		return opts, usagef("--alpha must be in (0, 1), got %g", a)
	}
	stall, err := stallOptions(c)
	if err != nil {
		return opts, err
	}
	th, err := compare.ParseThresholds(c.StringSlice("fail-above"))
	if err != nil {
		return opts, usagef("--fail-above %v", err)
	}
	if c.Bool("gate") {
		th = compare.WithDefaultGate(th)
	}
	return compare.Options{Stall: stall, Thresholds: th, Alpha: c.Float64("alpha"), SameWorkload: c.Bool("gate")}, nil
}

// compareSweeps compares two load sweeps: every load both ran, and their
// capacities.
func compareSweeps(c *cli.Context, both bool, opts compare.Options) error {
	if !both || c.IsSet("records-a") || c.IsSet("records-b") {
		return usagef("a load sweep compares with a load sweep, without --records-a/-b: give two sweep directories")
	}
	ref, cand := c.Args().Get(0), c.Args().Get(1)
	if c.String("reference") == "b" {
		ref, cand = cand, ref
	}
	rep, err := compare.CompareSweepDirs(ref, cand, opts)
	if err != nil {
		return err
	}
	var plots []string
	if dir := c.String("plots"); dir != "" {
		if plots, err = figures.CompareSweeps(dir, rep); err != nil {
			return err
		}
	}
	if err := writeHTML(c.String("html"), plots, func(dir string) ([]string, error) { return figures.CompareSweeps(dir, rep) },
		func(figs []htmlreport.Figure) htmlreport.Section { return htmlreport.SweepComparison(rep, figs) }); err != nil {
		return err
	}
	links := figures.Links(plots, c.String("output"))
	if err := writeOutput(c, func(w io.Writer) error { return compare.WriteSweep(w, c.String("format"), rep, links) }); err != nil {
		return err
	}
	return verdictError(rep)
}

// compareInputs are the paths compare reads: both arguments, every run of a
// run list, and --records-a/-b.
func compareInputs(c *cli.Context) []string {
	ins := []string{c.String("records-a"), c.String("records-b")}
	for _, arg := range c.Args().Slice() {
		ins = append(ins, arg)
		if paths, err := compare.ExpandRuns(arg); err == nil {
			ins = append(ins, paths...)
		}
	}
	return ins
}

// openSides opens the runs of both arguments (each a run, a run list or a
// directory of repeated runs), the reference first.
func openSides(c *cli.Context) (refs, cands []*compare.Input, err error) {
	var sides [2][]*compare.Input
	for i, flag := range []string{"records-a", "records-b"} {
		paths, err := compare.ExpandRuns(c.Args().Get(i))
		if errors.Is(err, compare.ErrEmptyRunListElement) {
			return nil, nil, usagef("%v", err)
		}
		if err != nil {
			return nil, nil, err
		}
		if len(paths) > 1 && (c.IsSet("records-a") || c.IsSet("records-b")) {
			return nil, nil, usagef("--records-a/--records-b apply to one run per side, not to run lists")
		}
		if sides[i], err = openRuns(paths, c.String(flag)); err != nil {
			return nil, nil, err
		}
	}
	if c.String("reference") == "b" {
		return sides[1], sides[0], nil
	}
	return sides[0], sides[1], nil
}

// openRuns opens one side's runs; records (--records-a/-b) go with a side
// of one run.
func openRuns(paths []string, records string) ([]*compare.Input, error) {
	if len(paths) > 1 {
		return compare.OpenRuns(paths)
	}
	in, err := openInput(paths[0], records)
	if err != nil {
		return nil, err
	}
	return []*compare.Input{in}, nil
}

// writeOutput writes to the --output file when one is given (see
// results.WriteFile), else to stdout unless --quiet.
func writeOutput(c *cli.Context, write func(io.Writer) error) error {
	if path := c.String("output"); path != "" {
		return results.WriteFile(path, write)
	}
	if c.Bool("quiet") {
		return nil
	}
	return write(c.App.Writer)
}

// verdictError turns the verdicts into the exit status: a gated field
// missing from a side is a failure (exit 1) even when others breached,
// because the gate could not be applied; otherwise any breach exits 3.
func verdictError(rep interface {
	MissingVerdicts() []compare.Verdict
	Breaches() []compare.Verdict
}) error {
	if miss := rep.MissingVerdicts(); len(miss) > 0 {
		return fmt.Errorf("gate incomplete: %s", verdictList(miss))
	}
	if br := rep.Breaches(); len(br) > 0 {
		return thresholdError{msg: "threshold breached: " + verdictList(br)}
	}
	return nil
}

func verdictList(vs []compare.Verdict) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = v.Name() + " (" + v.Reason + ")"
	}
	return strings.Join(parts, "; ")
}

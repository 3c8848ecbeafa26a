package main

import (
	"io"

	"github.com/urfave/cli/v2"

	"github.com/simbench/simbench/internal/atomicfile"
	"github.com/simbench/simbench/plots"
	"github.com/simbench/simbench/silicon"
	"github.com/simbench/simbench/sim/calibrate"
)

func fidelityCommand() *cli.Command {
	return &cli.Command{
		Name:        "fidelity",
		Usage:       "predict public GPU runs (silicon stage files) a priori and calibrated, and tabulate the errors",
		ArgsUsage:   "DIR|FILE...",
		UsageText:   "simbench fidelity testdata/silicon [--max-requests N] [--format text|markdown|json] [--json FILE] [--png FILE]",
		Description: help("fidelity"),
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "max-requests", Usage: "measured requests per stage, sent after a warmup that warms the prefix cache and drains first; 0 = every request, as the real run"},
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Value: "markdown", Usage: "report on stdout: text, markdown or json"},
			&cli.StringFlag{Name: "json", Usage: "also write the report as JSON to `FILE`"},
			&cli.StringFlag{Name: "png", Usage: "draw predicted against measured (log-log, y = x) to `FILE`"},
			&cli.IntFlag{Name: "sim-seeds", Value: calibrate.DefaultSeeds, Usage: "simulator seeds of the calibration on each deployment's lightest stage (as calibrate's)"},
			&cli.IntFlag{Name: "max-evals", Value: calibrate.DefaultMaxEvals, Usage: "simulator runs that may fit the frontend overhead of each calibration (as calibrate's)"},
		},
		Action: fidelityAction,
	}
}

// fidelityWriters are the report's formats on stdout.
var fidelityWriters = map[string]func(*silicon.Report, io.Writer) error{
	"text":     (*silicon.Report).WriteText,
	"markdown": (*silicon.Report).WriteMarkdown,
	"json":     (*silicon.Report).WriteJSON,
}

func fidelityAction(c *cli.Context) error {
	if c.NArg() == 0 {
		return usagef("fidelity takes one or more stage files or directories (e.g. testdata/silicon)")
	}
	write, ok := fidelityWriters[c.String("format")]
	if !ok {
		return usagef("--format must be text, markdown or json, got %q", c.String("format"))
	}
	opt := silicon.Options{MaxRequests: c.Int("max-requests"), Seeds: c.Int("sim-seeds"), MaxEvals: c.Int("max-evals")}
	if opt.MaxRequests < 0 {
		return usagef("--max-requests must be >= 0, got %d", opt.MaxRequests)
	}
	if opt.Seeds < 1 {
		return usagef("--sim-seeds must be >= 1, got %d", opt.Seeds)
	}
	if opt.MaxEvals < 1 {
		return usagef("--max-evals must be >= 1, got %d", opt.MaxEvals)
	}
	stages, err := silicon.Load(c.Args().Slice()...)
	if err != nil {
		return err
	}
	rep, err := silicon.Run(c.Context, stages, opt)
	if err != nil {
		return err
	}
	if path := c.String("json"); path != "" {
		if err := atomicfile.WriteFile(path, rep.WriteJSON); err != nil {
			return err
		}
	}
	if path := c.String("png"); path != "" {
		if err := writeFidelityPNG(path, rep); err != nil {
			return err
		}
	}
	return write(rep, c.App.Writer)
}

func writeFidelityPNG(path string, rep *silicon.Report) error {
	fig, err := rep.Figure()
	if err != nil {
		return err
	}
	w, h := plots.Size(fig)
	return atomicfile.WriteFile(path, func(out io.Writer) error { return plots.WritePNG(out, fig, w, h) })
}

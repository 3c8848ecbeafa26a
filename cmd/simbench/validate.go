package main

import (
	"context"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/simbench/simbench/internal/interrupt"
	"github.com/simbench/simbench/loadgen"
	"github.com/simbench/simbench/sim"
	"github.com/simbench/simbench/validate"
)

func validateCommand() *cli.Command {
	return &cli.Command{
		Name:  "validate",
		Usage: "the nightly / pull-request pipeline: run silicon and the simulator on one workload, compare with thresholds, write the artifacts and a history line",
		UsageText: "simbench validate --config pipeline.yaml -o artifacts/ [--url URL] [--history FILE] [--quiet]\n" +
			"simbench validate --pipeline workloads.yaml -o artifacts/ [--url URL] [--replay EARLIER-ARTIFACTS]\n" +
			"simbench validate history [--history artifacts/history.jsonl] [-o DIR] [--last 10]",
		Description: help("validate"),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "config", Aliases: []string{"c"}, Usage: "pipeline `YAML` file (required)"},
			&cli.StringFlag{Name: "pipeline", Usage: "pipeline `YAML` of several workloads, plans, fits and candidates (docs/e2e.md), instead of --config"},
			&cli.StringFlag{Name: "replay", Usage: "with --pipeline: the real runs of an earlier artifact `DIR` of the pipeline instead of the target's"},
			&cli.StringFlag{Name: "output-dir", Aliases: []string{"o"}, Usage: "artifacts `DIR` (required)"},
			&cli.StringFlag{Name: "url", Usage: "override target.url (e.g. an engine started on a free port)"},
			&cli.StringFlag{Name: "history", Usage: "override history.path: the JSONL `FILE` to append to"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no step and progress lines on stderr"},
		},
		Action:      validateAction,
		Subcommands: []*cli.Command{validateHistoryCommand(), validateFidelityCommand()},
	}
}

func validateAction(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("validate takes no arguments, got %q (subcommands: history, fidelity)", c.Args().First())
	}
	cfg, out := c.String("config"), c.String("output-dir")
	if c.String("pipeline") != "" {
		return validatePipelineAction(c, out)
	}
	if c.String("replay") != "" {
		return usagef("--replay goes with --pipeline")
	}
	if cfg == "" || out == "" {
		return usagef("validate needs --config pipeline.yaml and -o DIR")
	}
	p, err := validate.Load(cfg)
	if err != nil {
		return err
	}
	res, err := validate.Run(c.Context, p, validateOptions(c, out))
	if err != nil {
		return err
	}
	if err := res.WriteSummary(c.App.Writer); err != nil {
		return err
	}
	return verdictError(res)
}

// validateOptions are the flags and the presentation of progress and
// interrupts of the runs.
func validateOptions(c *cli.Context, out string) validate.Options {
	errw := c.App.ErrWriter
	return validate.Options{Out: out, History: c.String("history"), URL: c.String("url"), Quiet: c.Bool("quiet"), Log: errw,
		RunProgress: func() (func(loadgen.Progress), time.Duration) { return progressPrinter(errw, 0) },
		SimProgress: func(total int) (sim.Option, func()) {
			bar, every := simProgress(c, total)
			if bar == nil {
				return nil, nil
			}
			return sim.WithProgress(func(p sim.Progress) {
				bar.Update(int64(p.Done), int64(p.Total), p.String(), p.Done == p.Total)
			}, every), bar.Finish
		},
		Interrupt: func(ctx context.Context) (context.Context, func()) { return interrupt.Context(ctx, errw, os.Exit) },
	}
}

// validatePipelineAction runs a pipeline file of several workloads and
// prints its compare summary and fidelity table.
func validatePipelineAction(c *cli.Context, out string) error {
	if c.String("config") != "" || c.String("history") != "" {
		return usagef("--pipeline goes without --config and --history")
	}
	s, err := validate.LoadSuite(c.String("pipeline"))
	if err != nil {
		return err
	}
	errw := c.App.ErrWriter
	f, err := validate.RunSuite(c.Context, s, validate.SuiteOptions{Out: out, URL: c.String("url"), Replay: c.String("replay"),
		Log: errw, Interrupt: func(ctx context.Context) (context.Context, func()) { return interrupt.Context(ctx, errw, os.Exit) }})
	if err != nil {
		return err
	}
	return printFidelity(c, f)
}

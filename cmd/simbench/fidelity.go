package main

import (
	"github.com/urfave/cli/v2"

	"github.com/simbench/simbench/silicon"
)

func fidelityCommand() *cli.Command {
	return &cli.Command{
		Name:        "fidelity",
		Usage:       "predict public GPU runs (silicon stage files) with the default timing and tabulate the errors",
		ArgsUsage:   "DIR|FILE...",
		UsageText:   "simbench fidelity testdata/silicon [--max-requests N]",
		Description: help("fidelity"),
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "max-requests", Usage: "measured requests per stage (a steady-state replay after a warmup); 0 = every request, as the real run"},
		},
		Action: fidelityAction,
	}
}

func fidelityAction(c *cli.Context) error {
	if c.NArg() == 0 {
		return usagef("fidelity takes one or more stage files or directories (e.g. testdata/silicon)")
	}
	n := c.Int("max-requests")
	if n < 0 {
		return usagef("--max-requests must be >= 0, got %d", n)
	}
	stages, err := silicon.Load(c.Args().Slice()...)
	if err != nil {
		return err
	}
	preds, err := silicon.Predictions(c.Context, stages, n)
	if err != nil {
		return err
	}
	return silicon.WriteMarkdown(c.App.Writer, stages, preds)
}

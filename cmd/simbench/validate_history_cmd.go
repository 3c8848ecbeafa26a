package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/simbench/simbench/validate"
)

func validateHistoryCommand() *cli.Command {
	return &cli.Command{
		Name:        "history",
		Usage:       "tabulate and plot the error % per metric across the validations of a history file",
		UsageText:   "simbench validate history [--history artifacts/history.jsonl] [-o DIR] [--last 10]",
		Description: help("validate_history"),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "history", Value: validate.DefaultHistoryPath("artifacts"), Usage: "history JSONL `FILE`"},
			&cli.StringFlag{Name: "output-dir", Aliases: []string{"o"}, Usage: "write one PNG per metric into `DIR`"},
			&cli.IntFlag{Name: "last", Value: 10, Usage: "columns: the last N validations"},
		},
		Action: validateHistoryAction,
	}
}

func validateHistoryAction(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("validate history takes no arguments, got %q (the file goes with --history)", c.Args().First())
	}
	if c.Int("last") < 1 {
		return usagef("--last must be >= 1, got %d", c.Int("last"))
	}
	path := c.String("history")
	entries, err := validate.ReadHistory(path)
	if err != nil {
		return err
	}
	if len(entries) == 0 {
		return fmt.Errorf("%s: no validations recorded", path)
	}
	if err := validate.WriteHistoryTable(c.App.Writer, path, entries, c.Int("last")); err != nil {
		return err
	}
	if dir := c.String("output-dir"); dir != "" {
		files, err := validate.WriteHistoryPlots(dir, entries)
		for _, f := range files {
			fmt.Fprintln(c.App.Writer, "wrote", f)
		}
		return err
	}
	return nil
}

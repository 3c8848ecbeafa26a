package main

import (
	"fmt"

	"github.com/simbench/simbench/validate"
	"github.com/urfave/cli/v2"
)

func validateFidelityCommand() *cli.Command {
	return &cli.Command{
		Name:        "fidelity",
		Usage:       "write the fidelity table (fidelity.txt, fidelity.json) of a real-engine artifact directory",
		UsageText:   "simbench validate fidelity DIR",
		Description: help("validate_fidelity"),
		Action:      validateFidelityAction,
	}
}

func validateFidelityAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return usagef("validate fidelity takes one artifact directory, got %d arguments", c.NArg())
	}
	f, err := validate.WriteFidelity(c.Args().First())
	if err != nil {
		return err
	}
	return printFidelity(c, f)
}

// printFidelity prints the compare summary, the table and the files.
func printFidelity(c *cli.Context, f *validate.Fidelity) error {
	fmt.Fprint(c.App.Writer, f.Summary, "\n", f.Table)
	for _, path := range f.Files {
		fmt.Fprintln(c.App.Writer, "wrote", path)
	}
	return nil
}

package main

import (
	"errors"
	"github.com/simbench/simbench/internal/warning"

	"github.com/urfave/cli/v2"

	"github.com/simbench/simbench/internal/usage"
	"github.com/simbench/simbench/results"
)

// writeOutputDir writes the output directory path whole through
// results.WriteOutput (write gets the staging directory); a -o that is
// neither empty nor a simbench output, or that holds an input, is a usage
// error.
func writeOutputDir(c *cli.Context, path string, partial results.Partial, write func(dir string) error) error {
	if err := refuseOutputHoldingInput(c, path); err != nil {
		return err
	}
	err := results.WriteOutput(path, warning.To(c.App.ErrWriter), partial, write)
	if errors.Is(err, results.ErrNotOutputDir) {
		return usage.Wrap(err)
	}
	return err
}

// inputFlags are the flags naming files a command reads.
var inputFlags = []string{"trace", "config", "tokenizer", "timing-table", "model-config", "grid"}

// refuseOutputHoldingInput is a usage error when an input (an argument or
// an inputFlags file) is the output directory path or lies inside it: the
// output replaces the directory whole, the input with it.
func refuseOutputHoldingInput(c *cli.Context, path string) error {
	inputs := c.Args().Slice()
	for _, f := range inputFlags {
		inputs = append(inputs, c.String(f))
	}
	for _, in := range inputs {
		if in != "" && (samePath(in, path) || within(in, path)) {
			return usagef("-o %s holds an input (%s), which the output would replace: write the output elsewhere", path, in)
		}
	}
	return nil
}

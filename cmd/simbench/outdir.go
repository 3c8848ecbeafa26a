package main

import (
	"errors"

	"github.com/urfave/cli/v2"

	"github.com/simbench/simbench/internal/usage"
	"github.com/simbench/simbench/results"
)

// writeOutputDir writes the output directory path whole through
// results.WriteOutput (write gets the staging directory); a -o that is
// neither empty nor a simbench output is a usage error.
func writeOutputDir(c *cli.Context, path string, partial results.Partial, write func(dir string) error) error {
	err := results.WriteOutput(path, c.App.ErrWriter, partial, write)
	if errors.Is(err, results.ErrNotOutputDir) {
		return usage.Wrap(err)
	}
	return err
}

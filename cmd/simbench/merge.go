package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/simbench/simbench/grid"
	"github.com/simbench/simbench/realrun"
	"github.com/simbench/simbench/results"
)

func mergeCommand() *cli.Command {
	return &cli.Command{
		Name:        "merge",
		Usage:       "merge the shard directories of one sharded run into the run directory one process would have written",
		UsageText:   "simbench merge DIR... -o OUT\n\n   simbench merge out/s0 out/s1 out/s2 -o out/all",
		Description: help("merge"),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "output-dir", Aliases: []string{"o"}, Required: true, Usage: "run `DIR` to write the merged files into"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print nothing but errors"},
		},
		Action: mergeAction,
	}
}

func mergeAction(c *cli.Context) error {
	dirs, out := c.Args().Slice(), c.String("output-dir")
	if len(dirs) == 0 {
		return usagef("merge needs the shard directories: simbench merge DIR... -o OUT")
	}
	if err := refuseInputAsOutput("-o", out, dirs); err != nil {
		return err
	}
	if grid.IsGrid(dirs[0]) {
		var written []string
		err := writeOutputDir(c, out, results.DropPartial, func(stage string) (err error) {
			written, err = grid.Merge(dirs, stage)
			return err
		})
		printWritten(c, written)
		return err
	}
	var m *realrun.Merged
	err := writeOutputDir(c, out, results.DropPartial, func(stage string) (err error) {
		m, err = realrun.Merge(dirs, stage)
		return err
	})
	if err != nil {
		return err
	}
	m.Dir = out
	if !c.Bool("quiet") {
		m.WriteText(c.App.Writer)
	}
	return nil
}

// printWritten prints a "wrote FILE" line per file unless --quiet, each
// under its published path (not the staging directory's).
func printWritten(c *cli.Context, files []string) {
	for _, f := range files {
		if !c.Bool("quiet") {
			fmt.Fprintf(c.App.Writer, "wrote %s\n", results.PublishedPath(f))
		}
	}
}

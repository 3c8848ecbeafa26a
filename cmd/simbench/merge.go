package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/simbench/simbench/realrun"
	"github.com/simbench/simbench/sweep"
)

func mergeCommand() *cli.Command {
	return &cli.Command{
		Name:      "merge",
		Usage:     "merge the shard directories of one sharded run into the run directory one process would have written",
		UsageText: "simbench merge DIR... -o OUT\n\n   simbench merge out/s0 out/s1 out/s2 -o out/all",
		Description: "Each DIR is the output of `simbench run --shard I/N`. merge checks that they are the N shards\n" +
			"of one run (same workload digest, same configuration, same N, every index exactly once, no\n" +
			"request twice) and refuses otherwise, saying which directory differs and how. It then writes\n" +
			"OUT/profile_export.jsonl with every request of every shard, in send order (session_num\n" +
			"renumbered), and OUT/profile_export_aiperf.json/.csv aggregated once over all of them, so the\n" +
			"aggregates are what a single computation over the union gives: benchmark_duration spans from\n" +
			"the first send of any shard to the last response of any shard. input_config keeps the run's\n" +
			"configuration and lists the shards (host, start lateness, requests) under simbench.merged.\n\n" +
			"The shards of a `simbench sim --sweep --shard I/N` merge the same way: OUT gets every point's\n" +
			"run directory, sweep_summary.json and sweep_pareto.png, as the unsharded sweep writes them.",
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
	if sweep.IsSweep(dirs[0]) {
		written, err := sweep.Merge(dirs, out)
		printWritten(c, written)
		return err
	}
	m, err := realrun.Merge(dirs, out)
	if err != nil {
		return err
	}
	if !c.Bool("quiet") {
		m.WriteText(c.App.Writer)
	}
	return nil
}

// printWritten prints a "wrote FILE" line per file unless --quiet.
func printWritten(c *cli.Context, files []string) {
	for _, f := range files {
		if !c.Bool("quiet") {
			fmt.Fprintf(c.App.Writer, "wrote %s\n", f)
		}
	}
}

package main

import (
	"fmt"
	"path/filepath"

	"github.com/simbench/simbench/internal/warning"
	"github.com/simbench/simbench/peerruns"
	"github.com/simbench/simbench/results"
	"github.com/urfave/cli/v2"
)

func summarizeCommand() *cli.Command {
	return &cli.Command{
		Name:      "summarize",
		Usage:     "recompute profile_export_aiperf.json and .csv from a per-request export, or convert another tool's run",
		ArgsUsage: "FILE.jsonl | PEER-RUN",
		UsageText: "simbench summarize profile_export.jsonl -o DIR [--goodput \"time_to_first_token:200\"]\n" +
			"simbench summarize (REPORT/stage_N | vllm-bench.json | sglang-bench.jsonl[/run_N] | guidellm.json[/benchmark_N]) -o DIR",
		Description: help("summarize"),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "output-dir", Aliases: []string{"o"}, Usage: "directory to write the aggregate files into", Required: true},
			goodputFlag(),
		},
		Action: summarizeAction,
	}
}

func summarizeAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return usagef("summarize takes one FILE.jsonl, got %d arguments", c.NArg())
	}
	slos, err := goodputSLOs(c)
	if err != nil {
		return err
	}
	p, warnings, err := summarizeInput(c.Args().First(), slos)
	if err != nil {
		return err
	}
	warning.Print(c.App.ErrWriter, warnings)
	dir := c.String("output-dir")
	if err := results.WriteProfileFiles(dir, p); err != nil {
		return err
	}
	n, _ := p.Value(results.TagRequestCount, "avg")
	fmt.Fprintf(c.App.Writer, "summarized %d valid requests\nwrote %s\nwrote %s\n", int(n),
		filepath.Join(dir, results.ProfileJSONName), filepath.Join(dir, results.ProfileCSVName))
	return nil
}

// summarizeInput aggregates a per-request export, or reads another tool's
// run (an inference-perf stage, a vllm bench serve result, a guidellm
// benchmark) as AIPerf's aggregate, with its warnings.
func summarizeInput(path string, slos []results.SLO) (*results.Profile, []error, error) {
	if peerruns.Detect(path) == "" {
		return results.RecoverJSONL(path, slos)
	}
	if len(slos) > 0 {
		return nil, nil, usagef("--goodput needs per-request records, which %s does not have", path)
	}
	run, err := peerruns.Open(path)
	if err != nil {
		return nil, nil, err
	}
	return run.Profile, run.Warnings, nil
}

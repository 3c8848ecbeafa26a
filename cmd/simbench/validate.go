package main

import (
	"context"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/simbench/simbench/loadgen"
	"github.com/simbench/simbench/sim"
	"github.com/simbench/simbench/validate"
)

func validateCommand() *cli.Command {
	return &cli.Command{
		Name:  "validate",
		Usage: "the nightly / pull-request pipeline: run silicon and the simulator on one workload, compare with thresholds, write the artifacts and a history line",
		UsageText: "simbench validate --config pipeline.yaml -o artifacts/ [--url URL] [--history FILE] [--quiet]\n" +
			"simbench validate history [--history artifacts/history.jsonl] [-o DIR] [--last 10]",
		Description: "Runs the steps of the pipeline file (see testdata/validate/pipeline-example.yaml, every key\n" +
			"documented), one process, one step at a time:\n" +
			"  1. health check: GET target.url + target.health_check (skipped with \"none\")\n" +
			"  2. simulator configuration: sim.config copied, or `simbench calibrate` on sim.calibrate_from,\n" +
			"     into OUTPUT/sim.yaml (calibrate_from: silicon fits it to this pipeline's own silicon run)\n" +
			"  3. silicon: `simbench run` against the target into OUTPUT/real\n" +
			"  4. simulator: `simbench sim --config OUTPUT/sim.yaml` on the same workload into OUTPUT/sim\n" +
			"  5. compare, with compare.fail_above / compare.gate: OUTPUT/compare.json, compare.md (for a pull\n" +
			"     request comment), junit.xml, compare.txt and plots/*.png\n" +
			"  6. one JSON line appended to the history (history.path, default OUTPUT/history.jsonl): time,\n" +
			"     git commit ($GITHUB_SHA or `git rev-parse HEAD`), config digest, error % per headline\n" +
			"     statistic and the verdict; `simbench validate history` tabulates and plots it.\n" +
			"Both arms get exactly the workload flags of the workload section, so they replay one workload.\n\n" +
			"With repeat: N > 1 each arm runs N times, interleaved in rotating order (real, sim; sim, real;\n" +
			"…) after a discarded warm-up round (OUTPUT/warmup), into OUTPUT/real/run_0001 … and\n" +
			"OUTPUT/sim/run_0001 … (simulator seeds seed, seed+1, …). The comparison is then per statistic\n" +
			"median, min and max per side and a Mann–Whitney U test: a bound fails only when the medians\n" +
			"differ by more than it AND p ≤ compare.alpha (else \"~\", within run-to-run noise).\n\n" +
			"Exit codes as compare's: 0 ok, 3 a bound breached, 1 failure (unreachable target, failed run,\n" +
			"gated statistic missing), 2 usage (bad flags or pipeline file). The API key is read from the\n" +
			"environment variable target.api_key_env names and written nowhere.\n\n" +
			"Examples:\n" +
			"  simbench validate --config testdata/validate/pipeline-ollama.yaml -o artifacts/\n" +
			"  simbench validate --config nightly.yaml --url http://127.0.0.1:8000 -o artifacts/ --history nightly/history.jsonl\n" +
			"  simbench validate history --history nightly/history.jsonl -o artifacts/history",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "config", Aliases: []string{"c"}, Usage: "pipeline `YAML` file (required)"},
			&cli.StringFlag{Name: "output-dir", Aliases: []string{"o"}, Usage: "artifacts `DIR` (required)"},
			&cli.StringFlag{Name: "url", Usage: "override target.url (e.g. an engine started on a free port)"},
			&cli.StringFlag{Name: "history", Usage: "override history.path: the JSONL `FILE` to append to"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no step and progress lines on stderr"},
		},
		Action:      validateAction,
		Subcommands: []*cli.Command{validateHistoryCommand()},
	}
}

func validateAction(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("validate takes no arguments, got %q (subcommand: history)", c.Args().First())
	}
	cfg, out := c.String("config"), c.String("output-dir")
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
	return verdictError(res.Report())
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
		Interrupt: func(ctx context.Context) (context.Context, func()) { return interruptContext(ctx, errw, os.Exit) },
	}
}

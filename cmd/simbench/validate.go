package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/urfave/cli/v2"
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

// validation is one execution of a pipeline.
type validation struct {
	p       *pipeline
	out     string // artifacts directory
	history string // history JSONL
	stdout  io.Writer
	stderr  io.Writer
	quiet   bool
	now     func() time.Time
}

func validateAction(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("validate takes no arguments, got %q (subcommand: history)", c.Args().First())
	}
	v, err := newValidation(c)
	if err != nil {
		return err
	}
	start := v.now()
	res, runErr := v.execute(c.Context)
	entry := v.historyEntry(start, res, runErr)
	if err := appendHistory(v.history, entry); err != nil {
		return errors.Join(runErr, fmt.Errorf("history: %w", err))
	}
	if runErr != nil {
		return runErr
	}
	if err := v.printSummary(res, entry); err != nil {
		return err
	}
	return verdictError(res.verdicts)
}

// newValidation reads the flags and the pipeline file.
func newValidation(c *cli.Context) (*validation, error) {
	cfg, out := c.String("config"), c.String("output-dir")
	if cfg == "" || out == "" {
		return nil, usagef("validate needs --config pipeline.yaml and -o DIR")
	}
	p, err := loadPipeline(cfg)
	if err != nil {
		return nil, err
	}
	if u := c.String("url"); u != "" {
		p.Target.URL = u
	}
	v := &validation{p: p, out: out, stdout: c.App.Writer, stderr: c.App.ErrWriter, quiet: c.Bool("quiet"), now: time.Now}
	v.history = c.String("history")
	if v.history == "" {
		v.history = p.resolve(p.History.Path)
	}
	if v.history == "" {
		v.history = defaultHistoryPath(out)
	}
	return v, nil
}

// execute runs the steps up to the comparison's artifacts.
func (v *validation) execute(ctx context.Context) (*outcome, error) {
	if err := os.MkdirAll(v.out, 0o755); err != nil {
		return nil, err
	}
	v.logf("pipeline %s (config digest %s) → %s", v.p.path, v.p.digest[:12], v.out)
	if err := v.healthCheck(ctx); err != nil {
		return nil, err
	}
	if err := v.prepareSimConfig(ctx); err != nil {
		return nil, err
	}
	if err := v.runArms(ctx); err != nil {
		return nil, err
	}
	return v.compareArms()
}

// logf prints a step line on stderr unless --quiet.
func (v *validation) logf(format string, args ...any) {
	if !v.quiet {
		fmt.Fprintf(v.stderr, "validate: "+format+"\n", args...)
	}
}

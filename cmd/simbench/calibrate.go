package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/sim"
	"github.com/simbench/simbench/sim/calibrate"
)

func calibrateCommand() *cli.Command {
	return &cli.Command{
		Name:      "calibrate",
		Usage:     "fit the simulator's timing model to one or more real runs and write a sim config",
		UsageText: "simbench calibrate --real RUN [--real RUN…] [--config base.yaml] -o sim.yaml",
		Description: "Rebuilds the workload each real run replayed (simbench's workload.jsonl, or AIPerf's\n" +
			"input_config: concurrency, request and warmup counts, ISL/OSL), then fits the linear step-time\n" +
			"model (base + per prefill token + per decoding sequence + per context token) and the\n" +
			"per-request frontend overhead so that simulated TTFT, TTST, ITL, request latency and output\n" +
			"throughput match the real ones at avg and tail percentiles (Nelder–Mead on the simulator).\n" +
			"Engine, workers, router and KV settings come from --config (default: the built-in defaults).\n" +
			"Runs at several loads (a concurrency sweep) pin the per-sequence cost; one run cannot.\n\n" +
			"Example:\n  simbench calibrate --real artifacts/c1 -o sim.yaml\n" +
			"  simbench sim --config sim.yaml --concurrency 4 --request-count 64 --isl 100 --osl 200 -o artifacts/pred-c4",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "real", Usage: "real run `DIR` (simbench's or AIPerf's run directory); repeatable", Required: true},
			&cli.StringFlag{Name: "config", Usage: "base simulator config `FILE` (YAML); its timing section is replaced"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the fitted sim config (YAML) to `FILE`", Required: true},
			&cli.IntFlag{Name: "max-evals", Value: 1500, Usage: "simulator runs the optimizer may use"},
			&cli.StringFlag{Name: "format", Value: "text", Usage: "fit report on stdout: text or json"},
		},
		Action: calibrateAction,
	}
}

func calibrateAction(c *cli.Context) error {
	if f := c.String("format"); f != "text" && f != "json" {
		return usagef("--format must be text or json, got %q", f)
	}
	base := sim.DefaultConfig()
	if path := c.String("config"); path != "" {
		var err error
		if base, err = sim.LoadConfig(path); err != nil {
			return err
		}
	}
	targets, err := loadTargets(c.StringSlice("real"))
	if err != nil {
		return err
	}
	res, err := calibrate.Fit(c.Context, targets, calibrate.Options{Base: base, MaxEvals: c.Int("max-evals")})
	if err != nil {
		return err
	}
	if err := writeConfig(c.String("output"), res.Config); err != nil {
		return err
	}
	return printFit(c.App.Writer, c.String("format"), res)
}

func loadTargets(dirs []string) ([]calibrate.Target, error) {
	var out []calibrate.Target
	for _, dir := range dirs {
		run, err := results.LoadRun(dir)
		if err != nil {
			return nil, err
		}
		wl, err := calibrate.RunWorkload(dir, run.Profile)
		if err != nil {
			return nil, err
		}
		gap, err := calibrate.EstimateClientGap(run, wl)
		if err != nil {
			return nil, err
		}
		out = append(out, calibrate.Target{Name: run.Name, Profile: run.Profile, Workload: wl, ClientGapMs: gap})
	}
	return out, nil
}

func writeConfig(path string, cfg sim.Config) error {
	b, err := cfg.YAML()
	if err != nil {
		return err
	}
	head := "# simbench sim config written by `simbench calibrate`; use with simbench sim --config\n"
	return os.WriteFile(path, append([]byte(head), b...), 0o644)
}

func printFit(w io.Writer, format string, res *calibrate.Result) error {
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	p := res.Params
	fmt.Fprintf(w, "fitted linear timing after %d simulations (loss %.3g):\n", res.Evals, res.Loss)
	fmt.Fprintf(w, "  base %.4g ms + %.4g ms/prefill token + %.4g ms/decoding sequence + %.4g ms/context token; frontend overhead %.4g ms\n\n",
		p.BaseMs, p.PrefillTokenMs, p.DecodeSeqMs, p.ContextTokenMs, p.OverheadMs)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "run\tmetric\tstat\treal\tsim\terror %\t")
	for _, r := range res.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.4f\t%.4f\t%+.2f\t\n", r.Target, r.Metric, r.Stat, r.Real, r.Sim, r.ErrorPct)
	}
	return tw.Flush()
}

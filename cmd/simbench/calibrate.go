package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

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
			&cli.StringFlag{Name: "timing", Value: "auto", Usage: "step-time model to fit: physics (from hardware.model and hardware.gpu/cpu), linear, or auto (physics when --config names the hardware)"},
			&cli.IntFlag{Name: "max-evals", Value: 32, Usage: "simulator runs that may fit the frontend overhead"},
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
	res, err := calibrate.Fit(c.Context, targets, calibrate.Options{Base: base, MaxEvals: c.Int("max-evals"), Basis: basisFlag(c.String("timing"))})
	if err != nil {
		return err
	}
	if err := writeConfig(c.String("output"), res.Config); err != nil {
		return err
	}
	return printFit(c.App.Writer, c.String("format"), res)
}

func loadTargets(dirs []string) ([]calibrate.Target, error) {
	out := make([]calibrate.Target, 0, len(dirs))
	for _, dir := range dirs {
		t, err := calibrate.LoadTarget(dir)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
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
	fmt.Fprintf(w, "fitted %s timing on %d engine steps (residual sd %.3g ms) and %d simulations (loss %.3g):\n",
		res.Model, res.Steps, res.StepResidualMs, res.Evals, res.Loss)
	pw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(pw, "  parameter\tvalue\t± sd\tprior\tdecided by\t")
	for _, p := range res.Params {
		fmt.Fprintf(pw, "  %s\t%.4g\t± %.2g\t%.4g\t%s\t\n", p.Name, p.Value, p.SD, p.Prior, p.Source)
	}
	if err := pw.Flush(); err != nil {
		return err
	}
	r := res.Range
	fmt.Fprintf(w, "calibrated range: ISL %d–%d, OSL %d–%d, concurrency %d–%d, batch %d–%d, prefix hit %.2f–%.2f\n",
		r.ISL[0], r.ISL[1], r.OSL[0], r.OSL[1], r.Concurrency[0], r.Concurrency[1], r.Batch[0], r.Batch[1],
		r.PrefixHitRate[0], r.PrefixHitRate[1])
	for _, warn := range res.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "run\tmetric\tstat\treal\tsim\terror %\t")
	for _, r := range res.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.4f\t%.4f\t%+.2f\t\n", r.Target, r.Metric, r.Stat, r.Real, r.Sim, r.ErrorPct)
	}
	return tw.Flush()
}

func basisFlag(v string) string {
	if v == "auto" {
		return ""
	}
	return v
}

package main

import (
	"encoding/json"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/simbench/simbench/internal/warning"
	"github.com/simbench/simbench/loadgen"
	"github.com/simbench/simbench/sim"
	"github.com/simbench/simbench/sim/calibrate"
	"github.com/simbench/simbench/sim/calibrate/livecal"
)

func calibrateCommand() *cli.Command {
	return &cli.Command{
		Name:        "calibrate",
		Usage:       "fit the simulator's timing model to real runs, or to a live server, and write a sim config",
		UsageText:   "simbench calibrate (--real RUN [--real RUN…] | --url URL --model M [endpoint flags]) [--config base.yaml] -o sim.yaml",
		Description: help("calibrate"),
		Flags: append([]cli.Flag{
			&cli.StringSliceFlag{Name: "real", Usage: "real run `DIR` (simbench's or AIPerf's run directory, an inference-perf REPORT/stage_N, or a vllm, SGLang or guidellm result with per-request lists); repeatable"},
			&cli.StringFlag{Name: "artifacts", Value: "artifacts/calibration", Usage: "--url: keep the plan's run directories under `DIR`"},
			&cli.IntFlag{Name: "plan-requests", Value: 24, Usage: "--url: measured requests per plan run at concurrency 1 (loaded runs get twice as many)"},
			&cli.StringFlag{Name: "config", Aliases: []string{"c"}, Usage: "base simulator config `FILE` (YAML); its timing section is replaced"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the fitted sim config (YAML) to `FILE`", Required: true},
			&cli.StringFlag{Name: "timing", Value: "auto", Usage: "step-time model to fit: physics (from hardware.model and hardware.gpu/cpu), linear, or auto (physics when --config names the hardware)"},
			&cli.IntFlag{Name: "max-evals", Value: calibrate.DefaultMaxEvals, Usage: "simulator runs that may fit the frontend overhead"},
			&cli.IntFlag{Name: "sim-seeds", Value: calibrate.DefaultSeeds, Usage: "simulator seeds every fitted run is simulated with; the fit matches the median of their statistics"},
			&cli.StringFlag{Name: "format", Value: "text", Usage: "fit report on stdout: text or json"},
			&cli.BoolFlag{Name: "fit-noise", Usage: "fit the noise layer (step jitter, host stalls, drift, arrival stall, frontend CPU share, the client's gaps, stalls and tie order) on a GPU config too; always on with hardware.cpu"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "--url: no plan or progress on stderr"},
		}, endpointFlags(false)...),
		Action: calibrateAction,
	}
}

func calibrateAction(c *cli.Context) error {
	if f := c.String("format"); f != "text" && f != "json" {
		return usagef("--format must be text or json, got %q", f)
	}
	if n := c.Int("sim-seeds"); n < 1 {
		return usagef("--sim-seeds must be >= 1, got %d", n)
	}
	if (len(c.StringSlice("real")) > 0) == (c.String("url") != "") {
		return usagef("give either --real runs or --url (a live server to run the calibration plan on)")
	}
	base, err := sim.LoadConfigOrDefault(c.String("config"))
	if err != nil {
		return err
	}
	warning.Print(c.App.ErrWriter, base.KeyWarnings())
	res, err := fitFromFlags(c, base)
	if err != nil {
		return err
	}
	if err := calibrate.WriteConfig(c.String("output"), res.Config); err != nil {
		return err
	}
	return printFit(c.App.Writer, c.String("format"), res)
}

// fitFromFlags fits on the --real runs, or runs the plan on --url first.
func fitFromFlags(c *cli.Context, base sim.Config) (*calibrate.Result, error) {
	basis := c.String("timing")
	if c.String("url") == "" {
		targets, err := loadTargets(c.StringSlice("real"), c.App.ErrWriter)
		if err != nil {
			return nil, err
		}
		return calibrate.Fit(c.Context, targets, calibrate.Options{Base: base, MaxEvals: c.Int("max-evals"), Basis: basis,
			Seeds: c.Int("sim-seeds"), FitNoise: c.Bool("fit-noise")})
	}
	ep, err := endpointFromFlags(c)
	if err != nil {
		return nil, err
	}
	res, err := livecal.Calibrate(c.Context, livecal.Options{Base: base, Config: loadgen.Config{Endpoint: ep, Spin: -1},
		Artifacts: c.String("artifacts"), Plan: calibrate.PlanOptions{Requests: c.Int("plan-requests"), Seed: 1}, Basis: basis,
		Seeds: c.Int("sim-seeds"), MaxEvals: c.Int("max-evals"), FitNoise: c.Bool("fit-noise"), Log: c.App.ErrWriter, Quiet: c.Bool("quiet")})
	if err != nil {
		return nil, err
	}
	return res.Fit, nil
}

func printFit(w io.Writer, format string, res *calibrate.Result) error {
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	return res.WriteText(w)
}

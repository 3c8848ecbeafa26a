package main

import (
	"encoding/json"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/simbench/simbench/sim"
	"github.com/simbench/simbench/sim/calibrate"
)

func calibrateCommand() *cli.Command {
	return &cli.Command{
		Name:        "calibrate",
		Usage:       "fit the simulator's timing model to one or more real runs and write a sim config",
		UsageText:   "simbench calibrate --real RUN [--real RUN…] [--config base.yaml] -o sim.yaml",
		Description: help("calibrate"),
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "real", Usage: "real run `DIR` (simbench's or AIPerf's run directory); repeatable", Required: true},
			&cli.StringFlag{Name: "config", Usage: "base simulator config `FILE` (YAML); its timing section is replaced"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the fitted sim config (YAML) to `FILE`", Required: true},
			&cli.StringFlag{Name: "timing", Value: "auto", Usage: "step-time model to fit: physics (from hardware.model and hardware.gpu/cpu), linear, or auto (physics when --config names the hardware)"},
			&cli.IntFlag{Name: "max-evals", Value: calibrate.DefaultMaxEvals, Usage: "simulator runs that may fit the frontend overhead"},
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
	targets, err := calibrate.LoadTargets(c.StringSlice("real"))
	if err != nil {
		return err
	}
	res, err := calibrate.Fit(c.Context, targets, calibrate.Options{Base: base, MaxEvals: c.Int("max-evals"), Basis: basisFlag(c.String("timing"))})
	if err != nil {
		return err
	}
	if err := calibrate.WriteConfig(c.String("output"), res.Config); err != nil {
		return err
	}
	return printFit(c.App.Writer, c.String("format"), res)
}

func printFit(w io.Writer, format string, res *calibrate.Result) error {
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	return res.WriteText(w)
}

func basisFlag(v string) string {
	if v == "auto" {
		return ""
	}
	return v
}

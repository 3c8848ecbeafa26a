package main

import (
	"errors"
	"fmt"
	"net"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/simbench/simbench/internal/interrupt"
	"github.com/simbench/simbench/internal/warning"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/serve"
	"github.com/simbench/simbench/sim"
)

func serveCommand() *cli.Command {
	return &cli.Command{
		Name:        "serve",
		Usage:       "answer OpenAI-compatible requests with the simulator's timing, on the wall clock",
		UsageText:   "simbench serve [--config sim.yaml] [--addr 127.0.0.1:8000] [--model NAME] [--speedup X]",
		Description: help("serve"),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "config", Usage: "simulator configuration `YAML` (the defaults without it), with an optional faults: section"},
			&cli.StringFlag{Name: "addr", Value: "127.0.0.1:8000", Usage: "`HOST:PORT` to listen on (port 0: any free port)"},
			&cli.StringFlag{Name: "model", DefaultText: "the config's hardware.model", Usage: "model `NAME` served; requests naming another get 404"},
			&cli.Float64Flag{Name: "speedup", Value: 1, Usage: "virtual seconds a wall second: 10 answers ten times faster than the simulated engine"},
			&cli.StringFlag{Name: "truth", Usage: "write each finished request's true server-side times to `FILE` (AIPerf's per-request JSONL, a line as each ends)"},
		},
		Action: serveAction,
	}
}

func serveAction(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("serve takes no arguments, got %q", c.Args().First())
	}
	cfg := sim.DefaultConfig()
	var faults *serve.Faults
	if path := c.String("config"); path != "" {
		var err error
		if cfg, faults, err = serve.LoadConfig(path); err != nil {
			return usagef("--config %v", err)
		}
		for _, w := range cfg.KeyWarnings() {
			warning.Print(c.App.ErrWriter, []error{fmt.Errorf("%s: %w", path, w)})
		}
	}
	model := c.String("model")
	if model == "" {
		model = cfg.Hardware.Model
	}
	opts := serve.Options{Model: model, Speedup: c.Float64("speedup"), Faults: faults}
	var truth *os.File
	if path := c.String("truth"); path != "" {
		var err error
		if truth, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644); err != nil {
			return usagef("--truth: %v (it is never overwritten)", err)
		}
		defer truth.Close() // after the Close below: closes nothing, on early returns the file
		opts.Truth = truthWriter(results.NewJSONLWriter(truth))
	}
	s, err := serve.New(cfg, opts)
	if err != nil {
		return usagef("%v", err)
	}
	ln, err := net.Listen("tcp", c.String("addr"))
	if err != nil {
		return fmt.Errorf("--addr: %w", err)
	}
	ctx, stop := interrupt.Context(c.Context, c.App.ErrWriter, os.Exit)
	defer stop()
	fmt.Fprintf(c.App.ErrWriter, "serving %s on http://%s (speedup %g); SIGINT or SIGTERM stops it once the streams in flight end\n",
		model, ln.Addr(), c.Float64("speedup"))
	err = s.Serve(ctx, ln)
	if truth != nil {
		err = errors.Join(err, truth.Close())
	}
	return err
}

// truthWriter appends each truth record to w as a line of AIPerf's
// per-request export.
func truthWriter(w *results.JSONLWriter) func(*results.Record) error {
	return func(r *results.Record) error {
		m := results.ComputeMetrics(r)
		return w.Write(&m)
	}
}

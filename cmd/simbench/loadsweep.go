package main

import (
	"os"

	"github.com/simbench/simbench/internal/warning"
	"github.com/urfave/cli/v2"

	"github.com/simbench/simbench/capacity"
	"github.com/simbench/simbench/internal/interrupt"
	"github.com/simbench/simbench/loadsweep"
	"github.com/simbench/simbench/realrun"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/sim"
)

func goodputFlag() cli.Flag {
	return &cli.StringFlag{Name: "goodput", Usage: "SLOs as AIPerf's --goodput, e.g. \"time_to_first_token:200 inter_token_latency:10\" (ms): " +
		"good_request_count, goodput and slo_attainment (good / valid requests) in the aggregate"}
}

// loadSweepFlags are run's and sim's SLO and load-sweep flags.
func loadSweepFlags() []cli.Flag {
	return []cli.Flag{goodputFlag(),
		&cli.StringFlag{Name: "sweep-concurrency", Usage: "load sweep, closed loop: concurrencies as a `LIST` (1,2,4,8 or 1..64x2) into DIR/c1, DIR/c2, … and DIR/" + capacity.SummaryName},
		&cli.StringFlag{Name: "sweep-rate", Usage: "load sweep, open loop (--arrival-pattern): request rates as a `LIST` (0.5,1,2 or 0.5..8x2) into DIR/r0.5, …"},
		&cli.Float64Flag{Name: "attainment", Value: loadsweep.DefaultAttainment, Usage: "a sweep point meets the SLO when this share of its valid requests meets every --goodput SLO"},
		&cli.BoolFlag{Name: "stop-on-saturation", Usage: capacity.StopHelp},
	}
}

// goodputSLOs is --goodput (nil without).
func goodputSLOs(c *cli.Context) ([]results.SLO, error) {
	slos, err := results.ParseGoodput(c.String("goodput"))
	if err != nil {
		return nil, usagef("--goodput: %v", err)
	}
	return slos, nil
}

// sweepPlan is the load sweep the flags ask for, nil without one.
func sweepPlan(c *cli.Context) (*loadsweep.Plan, error) {
	maxErr, err := realrun.ParseErrorRate(c.String("max-error-rate"))
	if err != nil {
		return nil, err
	}
	p, err := loadsweep.NewPlan(loadsweep.Flags{Concurrency: c.String("sweep-concurrency"), Rate: c.String("sweep-rate"),
		Goodput: c.String("goodput"), Attainment: c.Float64("attainment"), MaxErrorRate: maxErr, StopOnSaturation: c.Bool("stop-on-saturation"),
		Quiet: c.Bool("quiet")})
	if name := firstSet(c, []string{"grid", "repeat", "shard", "shard-index", "shard-count"}); p != nil && name != "" {
		return nil, usagef("--%s and a load sweep exclude each other", name)
	}
	return p, err
}

// runLoadSweep is `simbench run --sweep-…`, every point on the server; it
// reports false (and does nothing) without a sweep flag.
func runLoadSweep(c *cli.Context) (bool, error) {
	plan, err := sweepPlan(c)
	if plan == nil || err != nil {
		return err != nil, err
	}
	cfg, _, err := runConfig(c)
	if err != nil {
		return true, err
	}
	sm, err := serverMetricsFromFlags(c)
	if err != nil {
		return true, err
	}
	ctx, stop := interrupt.Context(c.Context, c.App.ErrWriter, os.Exit)
	defer stop()
	opts := realrun.Options{Config: cfg, BenchmarkDuration: c.Float64("benchmark-duration"), ServerMetrics: sm,
		SLOs: plan.SLOs, Log: c.App.ErrWriter, Quiet: c.Bool("quiet"), Warn: warning.To(c.App.ErrWriter)}
	var sum *capacity.Summary
	err = writeOutputDir(c, c.String("output-dir"), results.KeepPartial, func(dir string) (err error) {
		sum, err = loadsweep.Run(ctx, dir, plan, workloadSpec(c), loadsweep.Real(opts, opts.BenchmarkDuration), c.App.ErrWriter)
		return err
	})
	return sweepDone(c, sum, err, false)
}

// simLoadSweep is `simbench sim --sweep-…`, every point on the
// simulator; it reports false (and does nothing) without a sweep flag.
func simLoadSweep(c *cli.Context, cfg sim.Config, dir string) (bool, error) {
	plan, err := sweepPlan(c)
	if plan == nil || err != nil {
		return err != nil, err
	}
	var sum *capacity.Summary
	err = writeOutputDir(c, dir, results.KeepPartial, func(stage string) (err error) {
		sum, err = loadsweep.Run(c.Context, stage, plan, workloadSpec(c), loadsweep.Sim(cfg, warning.To(c.App.ErrWriter), sim.WithSLOs(plan.SLOs)), c.App.ErrWriter)
		return err
	})
	return sweepDone(c, sum, err, c.Bool("quiet"))
}

// sweepDone prints the sweep's table, unless quiet or it failed.
func sweepDone(c *cli.Context, sum *capacity.Summary, err error, quiet bool) (bool, error) {
	if err != nil || quiet {
		return true, err
	}
	return true, sum.WriteText(c.App.Writer)
}

package main

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"

	"github.com/urfave/cli/v2"

	"github.com/simbench/simbench/internal/usage"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/sim"
	"github.com/simbench/simbench/sweep"
	"github.com/simbench/simbench/traces"
)

// sweepFlags are simbench sim's sweep flags.
func sweepFlags() []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: "sweep", Usage: "simulate a grid of configurations from `YAML` (parameters: [{key: workers, values: [1, 2]}, …]; " +
			"keys are configuration keys, dotted, or speedup) into DIR/point_NNNN, with DIR/" + sweep.SummaryName + " and DIR/" + sweep.ParetoName},
	}, shardSelectFlags("of the --sweep grid (0-based I): points I, I+N, …; `simbench merge` of the N shard directories writes the whole sweep")...)
}

// simSweep runs the --sweep grid (or the shard of it the flags name).
func simSweep(c *cli.Context, base sim.Config, wl *traces.Workload, input *results.InputConfig, dir string) error {
	if c.IsSet("repeat") {
		return usagef("--sweep and --repeat cannot be combined: sweep the seed instead (key: seed)")
	}
	sw, err := sim.LoadSweep(c.String("sweep"))
	if err != nil {
		return usage.Wrap(fmt.Errorf("--sweep %w", err))
	}
	spec, sharded, err := shardFromFlags(c)
	if err != nil {
		return err
	}
	slos, err := goodputSLOs(c)
	if err != nil {
		return err
	}
	o := sweep.Options{File: c.String("sweep"), Sweep: sw, Base: base, Workload: wl, Input: input, SLOs: slos}
	if sharded {
		o.Shard = &spec
	}
	if !c.Bool("quiet") {
		total := len(sw.Points())
		o.OnPoint = func(pt sim.SweepPoint, res sweep.Point) {
			fmt.Fprintf(c.App.Writer, "point %d/%d (%s): TTFT p99 %.2f ms, ITL p99 %.2f ms, %.1f output tokens/s per worker\n",
				pt.Index+1, total, sw.Describe(pt), res.Metrics[sweep.KeyTTFTP99], res.Metrics[sweep.KeyITLP99], res.Metrics[sweep.KeyOutputPerWorker])
		}
	}
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(400)) // as simRun
	}
	var written []string
	err = writeOutputDir(c, dir, results.DropPartial, func(stage string) (err error) {
		written, err = sweep.Run(context.Background(), stage, o)
		return err
	})
	printWritten(c, written)
	return err
}

package main

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"

	"github.com/urfave/cli/v2"

	"github.com/simbench/simbench/grid"
	"github.com/simbench/simbench/internal/usage"
	"github.com/simbench/simbench/internal/warning"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/sim"
	"github.com/simbench/simbench/traces"
)

// gridFlags are simbench sim's config-grid flags.
func gridFlags() []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: "grid", Usage: "simulate a grid of configurations from `YAML` (parameters: [{key: workers, values: [1, 2]}, …]; " +
			"keys are configuration keys, dotted, or speedup) into DIR/point_NNNN, with DIR/" + grid.SummaryName + " and DIR/" + grid.ParetoName},
	}, shardSelectFlags("of the --grid (0-based I): points I, I+N, …; `simbench merge` of the N shard directories writes the whole grid")...)
}

// simGrid runs the --grid (or the shard of it the flags name).
func simGrid(c *cli.Context, base sim.Config, wl *traces.Workload, input *results.InputConfig, dir string) error {
	if c.IsSet("repeat") {
		return usagef("--grid and --repeat cannot be combined: put the seed in the grid instead (key: seed)")
	}
	sw, err := sim.LoadGrid(c.String("grid"))
	if err != nil {
		return usage.Wrap(fmt.Errorf("--grid %w", err))
	}
	warning.Print(c.App.ErrWriter, sw.KeyWarnings())
	spec, sharded, err := shardFromFlags(c)
	if err != nil {
		return err
	}
	slos, err := goodputSLOs(c)
	if err != nil {
		return err
	}
	o := grid.Options{File: c.String("grid"), Grid: sw, Base: base, Workload: wl, Input: input, SLOs: slos}
	if sharded {
		o.Shard = &spec
	}
	if !c.Bool("quiet") {
		total := len(sw.Points())
		o.OnPoint = func(pt sim.GridPoint, res grid.Point) {
			fmt.Fprintf(c.App.Writer, "point %d/%d (%s): TTFT p99 %.2f ms, ITL p99 %.2f ms, %.1f output tokens/s per worker\n",
				pt.Index+1, total, sw.Describe(pt), res.Metrics[grid.KeyTTFTP99], res.Metrics[grid.KeyITLP99], res.Metrics[grid.KeyOutputPerWorker])
		}
	}
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(400)) // as simRun
	}
	var written []string
	err = writeOutputDir(c, dir, results.DropPartial, func(stage string) (err error) {
		written, err = grid.Run(context.Background(), stage, o)
		return err
	})
	printWritten(c, written)
	return err
}

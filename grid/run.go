package grid

import (
	"context"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/sim"
	"github.com/simbench/simbench/traces"
)

// Options describe a grid run.
type Options struct {
	File     string // the grid's YAML file (its base name goes into the summary)
	Grid     *sim.Grid
	Base     sim.Config // the configuration every point starts from
	Workload *traces.Workload
	Input    *results.InputConfig // input_config's workload sections (sim.WorkloadInput)
	// Shard, when set, runs only points Index, Index+Count, …
	Shard *traces.ShardSpec
	// SLOs are --goodput's, for every point's aggregate.
	SLOs []results.SLO
	// OnPoint, when set, is called after each point's run.
	OnPoint func(pt sim.GridPoint, res Point)
}

// Run simulates every point of the grid (or of the shard) into
// dir/point_NNNN and writes the summary (and, for a whole grid, the Pareto
// plot); it returns the files written beside the points. Every point's
// configuration is checked before the first one runs.
func Run(ctx context.Context, dir string, o Options) ([]string, error) {
	todo, err := plan(o.Grid, o.Base, o.Shard)
	if err != nil {
		return nil, err
	}
	sum, err := newSummary(o.File, o.Grid, o.Base, o.Workload, o.Input)
	if err != nil {
		return nil, err
	}
	if o.Shard != nil {
		sum.Shard = &Shard{Index: o.Shard.Index, Count: o.Shard.Count}
	}
	for _, pt := range todo {
		res, err := runPoint(ctx, o.Grid, pt, o.Workload, o.Input, o.SLOs, dir)
		if err != nil {
			return nil, err
		}
		if o.OnPoint != nil {
			o.OnPoint(pt.GridPoint, res)
		}
		sum.Results = append(sum.Results, res)
	}
	return writeOutputs(dir, sum)
}

package loadsweep

import (
	"context"

	"github.com/simbench/simbench/internal/warning"
	"github.com/simbench/simbench/realrun"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/sim"
	"github.com/simbench/simbench/traces"
)

// Real runs each point on a real server with realrun.WriteRun and opts
// (its Spec is the point's; SLOs should be the plan's); the workload's
// warnings go to opts.Warn with the run's. fillSeconds is
// --benchmark-duration, for rate workloads without --request-count.
func Real(opts realrun.Options, fillSeconds float64) Runner {
	return func(ctx context.Context, dir string, spec traces.Spec) (*results.Profile, error) {
		wl, err := build(spec, fillSeconds, opts.Warn)
		if err != nil {
			return nil, err
		}
		o := opts
		o.Spec = spec
		res, err := realrun.WriteRun(ctx, dir, wl, o)
		if err != nil {
			return nil, err
		}
		return res.Profile, nil
	}
}

// Sim runs each point on the simulator with configuration cfg; warn (nil
// drops them) gets the workload's warnings; opts should carry
// sim.WithSLOs(plan.SLOs).
func Sim(cfg sim.Config, warn func([]error), opts ...sim.Option) Runner {
	return func(ctx context.Context, dir string, spec traces.Spec) (*results.Profile, error) {
		wl, err := build(spec, 0, warn)
		if err != nil {
			return nil, err
		}
		input, err := sim.WorkloadInput(spec, wl)
		if err != nil {
			return nil, err
		}
		if err := traces.WriteWorkloadFile(dir, wl); err != nil {
			return nil, err
		}
		files, err := sim.WriteRun(ctx, dir, cfg, wl, input, opts...)
		if err != nil {
			return nil, err
		}
		return files.Profile, nil
	}
}

// build builds spec's workload and hands its warnings, if any, to warn.
func build(spec traces.Spec, fillSeconds float64, warn func([]error)) (*traces.Workload, error) {
	wl, warns, err := spec.Build(fillSeconds)
	if warn != nil && len(warns) > 0 {
		warn(warning.Of(warns))
	}
	return wl, err
}

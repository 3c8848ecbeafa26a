// Package loadsweep runs a load sweep: one full run directory per
// concurrency or request rate, on a real server (realrun) or on the
// simulator (sim), then DIR/sweep_summary.json with the SLO capacity
// (package capacity holds the record and the rules).
package loadsweep

import (
	"errors"
	"fmt"

	"github.com/simbench/simbench/capacity"
	"github.com/simbench/simbench/internal/usage"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/traces"
)

// DefaultAttainment is --attainment's default: a point meets the SLO when
// 90% of its valid requests meet every --goodput objective.
const DefaultAttainment = 0.9

// Flags are the sweep flags as given.
type Flags struct {
	// Concurrency and Rate are --sweep-concurrency and --sweep-rate:
	// load lists (capacity.ParseConcurrencies); at most one is set.
	Concurrency, Rate string
	// Goodput is --goodput (AIPerf's syntax), Attainment --attainment.
	Goodput    string
	Attainment float64
	// MaxErrorRate is --max-error-rate (< 0 off).
	MaxErrorRate     float64
	StopOnSaturation bool
	// Quiet drops the line per point.
	Quiet bool
}

// Plan is a load sweep to run.
type Plan struct {
	Load             capacity.Load
	Loads            []float64
	Goodput          string
	SLOs             []results.SLO
	Target           float64
	MaxErrorRate     float64
	StopOnSaturation bool
	Quiet            bool // no line per point
}

// NewPlan reads the flags; it returns nil (and no error) when neither
// list is given. Mistakes are usage errors.
func NewPlan(f Flags) (*Plan, error) {
	if f.Concurrency != "" && f.Rate != "" {
		return nil, usage.Errorf("--sweep-concurrency and --sweep-rate exclude each other: a sweep varies one load")
	}
	if f.Concurrency == "" && f.Rate == "" {
		return nil, nil
	}
	slos, err := results.ParseGoodput(f.Goodput)
	if err != nil {
		return nil, usage.Errorf("--goodput: %v", err)
	}
	if !(f.Attainment > 0 && f.Attainment <= 1) {
		return nil, usage.Errorf("--attainment %v: want a fraction in (0, 1]", f.Attainment)
	}
	p := &Plan{Goodput: f.Goodput, SLOs: slos, Target: f.Attainment, MaxErrorRate: f.MaxErrorRate,
		StopOnSaturation: f.StopOnSaturation, Quiet: f.Quiet}
	if f.Concurrency != "" {
		p.Load = capacity.Concurrency
		cs, err := capacity.ParseConcurrencies(f.Concurrency)
		if err != nil {
			return nil, usage.Errorf("--sweep-concurrency: %v", err)
		}
		for _, c := range cs {
			p.Loads = append(p.Loads, float64(c))
		}
		return p, nil
	}
	p.Load = capacity.RequestRate
	if p.Loads, err = capacity.ParseRates(f.Rate); err != nil {
		return nil, usage.Errorf("--sweep-rate: %v", err)
	}
	return p, nil
}

// PointSpec is the workload of one point: spec with its concurrency (the
// closed loop) or request rate (the open loop, spec's arrival pattern and
// any concurrency cap kept) set to load.
func (p *Plan) PointSpec(spec traces.Spec, load float64) traces.Spec {
	if p.Load == capacity.Concurrency {
		c := int(load)
		spec.Concurrency = &c
	} else {
		spec.RequestRate = &load
	}
	return spec
}

// CheckSpec refuses workload flags a sweep cannot vary: a trace (it
// replays its own schedule) and the load the sweep sets.
func (p *Plan) CheckSpec(spec traces.Spec) error {
	switch {
	case spec.IsTrace():
		return usage.Errorf("a load sweep needs a synthetic workload (--isl, --osl, --request-count): a --trace replays its own schedule")
	case p.Load == capacity.Concurrency && spec.Concurrency != nil:
		return usage.Errorf("--sweep-concurrency sets the concurrency of each point: drop --concurrency")
	case p.Load == capacity.Concurrency && spec.RequestRate != nil:
		return usage.Errorf("--sweep-concurrency is a closed loop: drop --request-rate (or sweep it with --sweep-rate)")
	case p.Load == capacity.RequestRate && spec.RequestRate != nil:
		return usage.Errorf("--sweep-rate sets the request rate of each point: drop --request-rate")
	}
	return nil
}

// errNoProfile is a runner's failure to produce a profile.
var errNoProfile = errors.New("the run wrote no profile")

func pointErr(load capacity.Load, v float64, err error) error {
	return fmt.Errorf("sweep point %s: %w", capacity.PointDir(load, v), err)
}

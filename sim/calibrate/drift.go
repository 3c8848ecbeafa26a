package calibrate

import (
	"context"
	"fmt"
	"math"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/sim"
)

// minDriftRequests is how many requests a run needs for its spread of
// per-request ITL to be measured.
const minDriftRequests = 16

// maxDriftCV caps the fitted drift: a spread beyond it is not a device
// drifting but a model that misses.
const maxDriftCV = 0.3

// driftStretch turns the spread of per-request means into the drift's:
// a request as long as a period straddles two of them at a uniform offset
// a, and its mean factor a·f₁ + (1−a)·f₂ has variance (a² + (1−a)²)σ²,
// 2σ²/3 on average.
const driftStretch = 1.5

// driftFit is the fitted drift and what decided it.
type driftFit struct {
	CV, PeriodMs, SD float64
	Runs             int     // runs measured
	RealCV, SimCV    float64 // their median per-request ITL cv, real and simulated without drift
}

// fitDrift measures the device's slow drift of speed (timing.drift_cv):
// the spread of per-request ITL in the real runs (driftRuns) beyond what
// the simulator makes of the same workloads on cfg without drift (its step
// jitter and stalls), as the median over the runs of the excess variance. The period is as long as the runs' median request,
// so that the drift moves whole requests. It returns the simulations it
// ran.
func fitDrift(ctx context.Context, cfg sim.Config, targets []Target, seeds int) (driftFit, int, error) {
	cfg.Timing.DriftCV, cfg.Timing.DriftPeriodMs = 0, 0
	terms := []Term{{results.TagITL, "avg", 1}, {results.TagITL, "std", 1}}
	var excess, realCV, simCV, periods, ns []float64
	evals := 0
	for _, t := range driftRuns(targets) {
		n, _ := t.Profile.Value(results.TagRequestCount, "avg")
		lat, _ := t.Profile.Value(results.TagRequestLatency, "p50")
		rows, _, err := evaluate(ctx, cfg, []Target{t}, terms, seeds)
		if err != nil {
			return driftFit{}, evals, err
		}
		evals += seeds
		rc, sc, ok := spreads(rows)
		if !ok {
			continue
		}
		excess, realCV, simCV = append(excess, rc*rc-sc*sc), append(realCV, rc), append(simCV, sc)
		periods, ns = append(periods, lat), append(ns, n)
	}
	if len(excess) == 0 {
		return driftFit{}, evals, nil
	}
	f := driftFit{Runs: len(excess), RealCV: median(realCV), SimCV: median(simCV), PeriodMs: median(periods)}
	v := driftStretch * median(excess)
	// The sd of a sample variance of n is about √(2/n) of it.
	se := driftStretch * f.RealCV * f.RealCV * math.Sqrt(2/median(ns)/float64(len(excess)))
	if v > 0 {
		f.CV = min(math.Sqrt(v), maxDriftCV)
		f.SD = se / (2 * f.CV)
	} else {
		f.SD = math.Sqrt(se)
	}
	if f.CV == 0 {
		f.PeriodMs = 0
	}
	return f, evals, nil
}

// driftRuns are the runs that measure the drift: of those with enough
// requests and a median latency, the ones at the lowest closed-loop
// concurrency, or all of them when none is a closed loop. Above one
// request at a time, per-request ITL also spreads with what the other
// requests did beside each (whose prompts interrupted it, how full its
// steps were); where the simulator misses that, the miss would be taken
// for drift.
func driftRuns(targets []Target) []Target {
	var ok []Target
	low := 0
	for _, t := range targets {
		n, _ := t.Profile.Value(results.TagRequestCount, "avg")
		lat, okLat := t.Profile.Value(results.TagRequestLatency, "p50")
		if n < minDriftRequests || !okLat || lat <= 0 {
			continue
		}
		ok = append(ok, t)
		if c := t.Workload.Concurrency; c > 0 && (low == 0 || c < low) {
			low = c
		}
	}
	if low == 0 {
		return ok
	}
	out := ok[:0]
	for _, t := range ok {
		if t.Workload.Concurrency == low {
			out = append(out, t)
		}
	}
	return out
}

// spreads reads the real and simulated per-request ITL cv off evaluate's
// rows of ITL avg and std.
func spreads(rows []Row) (realCV, simCV float64, ok bool) {
	var avg, std *Row
	for i := range rows {
		switch rows[i].Stat {
		case "avg":
			avg = &rows[i]
		case "std":
			std = &rows[i]
		}
	}
	if avg == nil || std == nil || avg.Real <= 0 || avg.Sim <= 0 {
		return 0, 0, false
	}
	return std.Real / avg.Real, std.Sim / avg.Sim, true
}

// driftParams reports the drift.
func driftParams(f driftFit) []sim.CalibratedParam {
	var src string
	switch {
	case f.Runs == 0:
		src = fmt.Sprintf("no run of %d requests or more with a per-request ITL spread: none", minDriftRequests)
	case f.CV == 0:
		src = fmt.Sprintf("per-request ITL spread (runs: %d): none beyond the simulator's (cv %.3g real, %.3g simulated)", f.Runs, f.RealCV, f.SimCV)
	default:
		src = fmt.Sprintf("per-request ITL spread beyond the simulator's (runs: %d; cv %.3g real, %.3g simulated)", f.Runs, f.RealCV, f.SimCV)
	}
	return []sim.CalibratedParam{
		{Name: "drift_cv", Value: f.CV, SD: f.SD, Pinned: f.Runs > 0, Source: src},
		{Name: "drift_period_ms", Value: f.PeriodMs, Pinned: f.CV > 0, Source: "the runs' median request latency: a drift moves whole requests"},
	}
}

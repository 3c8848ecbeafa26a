package calibrate

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat"

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
	var excess, realCV, simCV, periods, ns []float64
	evals := 0
	for _, t := range driftRuns(targets) {
		n, _ := t.Profile.Value(results.TagRequestCount, "avg")
		lat, _ := t.Profile.Value(results.TagRequestLatency, "p50")
		rc, robust, ok := realSpread(t)
		if !ok {
			continue
		}
		sc, err := simSpread(ctx, cfg, t, seeds, robust)
		if err != nil {
			return driftFit{}, evals, err
		}
		evals += seeds
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

// outlierZ is how many robust sds (1.4826 × the median absolute
// deviation) from the median a request's ITL may lie and still count in
// the drift's spread: Iglewicz and Hoaglin's cut for outliers.
const outlierZ = 3.5

// inliers splits v into the values within outlierZ robust sds of its
// median and those beyond (above or below), each in v's order. With fewer
// than three values, or no spread, all are in.
func inliers(v []float64) (in, out []float64) {
	if len(v) <= 2 {
		return v, nil
	}
	m := median(v)
	dev := make([]float64, len(v))
	for i, x := range v {
		dev[i] = math.Abs(x - m)
	}
	s := 1.4826 * median(dev)
	if s <= 0 {
		return v, nil
	}
	for _, x := range v {
		if math.Abs(x-m) <= outlierZ*s {
			in = append(in, x)
		} else {
			out = append(out, x)
		}
	}
	return in, out
}

// spreadCV is the coefficient of variation (population sd over mean) of
// per-request ITLs; robust leaves out the requests beyond outlierZ robust
// sds. One request of 24 that a host hiccup slowed 2.3-fold (the CPU
// engine's c1-short plan run) made the plain cv 0.29 where the rest give
// 0.12: a drift fitted on it put every simulated p99 30–40 % high. A drift
// moves requests a little and often; such a request is something else.
func spreadCV(itl []float64, robust bool) float64 {
	if robust {
		itl, _ = inliers(itl)
	}
	mean, sd := stat.PopMeanStdDev(itl, nil)
	if !(mean > 0) {
		return 0
	}
	return sd / mean
}

// realSpread is a run's per-request ITL cv: robust, from its records, when
// they are the whole run; else, from an excerpt or none, the profile's
// (AIPerf's std over every request).
func realSpread(t Target) (cv float64, robust, ok bool) {
	var itl []float64
	for i := range t.Records {
		if v, ok := counted(&t.Records[i]); ok {
			itl = append(itl, v)
		}
	}
	n, _ := t.Profile.Value(results.TagRequestCount, "avg")
	if len(itl) > 2 && float64(len(itl)) >= n {
		return spreadCV(itl, true), true, true
	}
	avg, ok1 := t.Profile.Value(results.TagITL, "avg")
	std, ok2 := t.Profile.Value(results.TagITL, "std")
	if !ok1 || !ok2 || avg <= 0 {
		return 0, false, false
	}
	return std / avg, false, true
}

// counted is a request's ITL where the profile counts it: a valid
// request outside the warmup.
func counted(m *results.RecordMetrics) (float64, bool) {
	if m.Error != nil || m.Meta.BenchmarkPhase == "warmup" {
		return 0, false
	}
	return m.Get(results.TagITL)
}

// simSpread is the median over seeds of the simulated per-request ITL cv
// of t's workload, measured as the real one was.
func simSpread(ctx context.Context, cfg sim.Config, t Target, seeds int, robust bool) (float64, error) {
	t.client(&cfg.Client)
	seed0 := cfg.Seed
	cvs := make([]float64, 0, seeds)
	for i := range seeds {
		cfg.Seed = seed0 + int64(i)
		var itl []float64
		_, err := sim.Run(ctx, cfg, t.Workload, func(r *results.Record) error {
			m := results.ComputeMetrics(r)
			if v, ok := counted(&m); ok {
				itl = append(itl, v)
			}
			return nil
		})
		if err != nil {
			return 0, fmt.Errorf("calibrate: simulating %s (seed %d): %w", t.Name, cfg.Seed, err)
		}
		cvs = append(cvs, spreadCV(itl, robust))
	}
	return median(cvs), nil
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

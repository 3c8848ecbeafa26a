package sim

import (
	"math"
	"math/rand/v2"
)

// drift is a worker's slow change of speed over a run (timing.drift_cv,
// drift_period_ms): every step's time is multiplied by a lognormal factor
// that holds for a whole period of the run's clock and is drawn anew for
// the next, from a stream seeded by the run's seed and the worker. A
// device shared with other work, or one that throttles, runs whole
// requests a few percent slower or faster than the rest; steps' own
// jitter averages out over a request's hundreds of tokens and cannot make
// that spread of per-request ITL and latency.
//
// The factor's harmonic mean is 1 (E[1/f] = 1), not its mean: a period of
// factor f runs 1/f as many steps, so over the steps (as token gaps and a
// calibration weigh them) the mean factor is 1/E[1/f]. With a mean of 1
// the mean step came out exp(−σ²) short of the model's: 1.7 % at a cv of
// 0.13, 8 % at 0.3.
type drift struct {
	rng       *rand.Rand
	mu, sigma float64
	periodNs  int64
	window    int64 // the period the factor is of; -1 before the first
	factor    float64
}

// newDrift returns nil when the worker's speed is constant.
func newDrift(t TimingConfig, seed int64, worker int) *drift {
	if t.DriftCV <= 0 || t.DriftPeriodMs <= 0 {
		return nil
	}
	s2 := math.Log1p(t.DriftCV * t.DriftCV)
	return &drift{rng: rand.New(rand.NewPCG(uint64(seed), 0xd71f_7000+uint64(worker))),
		mu: s2 / 2, sigma: math.Sqrt(s2), periodNs: max(1, msToNs(t.DriftPeriodMs)), window: -1}
}

// apply returns a step of ns that starts at now as the period's speed
// makes it (at least 1 ns); a nil drift returns ns unchanged. Steps start
// in time order, so the factors are drawn in the order of the periods the
// steps fall in, whatever the periods without a step.
func (d *drift) apply(now, ns int64) int64 {
	if d == nil {
		return ns
	}
	if w := now / d.periodNs; w != d.window {
		d.window = w
		d.factor = math.Exp(d.mu + d.sigma*d.rng.NormFloat64())
	}
	return max(1, int64(math.Round(float64(ns)*d.factor)))
}

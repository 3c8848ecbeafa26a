package sim

import (
	"math"
	"math/rand/v2"
)

// jitter multiplies step times by lognormal noise of mean 1 and a given
// coefficient of variation, from a stream seeded by the run's seed and the
// worker, so runs stay deterministic.
type jitter struct {
	rng       *rand.Rand
	mu, sigma float64
}

// newJitter returns nil when cv is 0.
func newJitter(cv float64, seed int64, worker int) *jitter {
	if cv <= 0 {
		return nil
	}
	s2 := math.Log1p(cv * cv)
	return &jitter{rng: rand.New(rand.NewPCG(uint64(seed), 0x6a17_7e40+uint64(worker))),
		mu: -s2 / 2, sigma: math.Sqrt(s2)}
}

// apply returns ns scaled by one draw (at least 1 ns); a nil jitter
// returns ns unchanged.
func (j *jitter) apply(ns int64) int64 {
	if j == nil {
		return ns
	}
	f := math.Exp(j.mu + j.sigma*j.rng.NormFloat64())
	return max(1, int64(math.Round(float64(ns)*f)))
}

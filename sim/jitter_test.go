package sim

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestJitterMeanAndSpread(t *testing.T) {
	assert.Nil(t, newJitter(TimingConfig{}, 1, 0))
	assert.Equal(t, int64(5), (*jitter)(nil).apply(5))
	j := newJitter(TimingConfig{Jitter: 0.1}, 7, 0)
	const n = 200_000
	var sum, sq float64
	for range n {
		x := float64(j.apply(1_000_000)) / 1e6
		sum += x
		sq += x * x
	}
	mean := sum / n
	cv := math.Sqrt(sq/n-mean*mean) / mean
	assert.InDelta(t, 1, mean, 0.002)
	assert.InDelta(t, 0.1, cv, 0.003)
	// Same seed and worker, same draws; another worker, another stream.
	a, b, c := newJitter(TimingConfig{Jitter: 0.1}, 7, 1), newJitter(TimingConfig{Jitter: 0.1}, 7, 1), newJitter(TimingConfig{Jitter: 0.1}, 7, 2)
	var same, other []int64
	for range 10 {
		x, y, z := a.apply(1e6), b.apply(1e6), c.apply(1e6)
		same, other = append(same, x), append(other, z)
		assert.Equal(t, x, y)
	}
	assert.NotEqual(t, same, other)
}

// TestJitterStalls: with stalls, a step's mean is its modelled mean; a
// share exp(−rate) of steps is clean (mean − rate·stall), the rest whole
// stalls longer; a step too short for the full rate stalls less often, so
// that its stalls' mean share is maxStallShare.
func TestJitterStalls(t *testing.T) {
	assert.Nil(t, newJitter(TimingConfig{StallMs: 20}, 1, 0), "a stall size without a rate is no stall")
	const n = 200_000
	cases := []struct {
		name      string
		stepMs    float64
		wantClean float64 // share of steps without a stall
		cleanMs   float64
	}{
		{"long step: the full rate", 40, math.Exp(-0.25), 40 - 0.25*20},
		{"short step: a fifth of it computes", 4, math.Exp(-0.16), 0.8},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := newJitter(TimingConfig{StallMs: 20, StallsPerStep: 0.25}, 3, 0)
			ns := int64(tc.stepMs * 1e6)
			var sum float64
			clean := 0
			for range n {
				d := float64(j.apply(ns)) / 1e6
				sum += d
				k := (d - tc.cleanMs) / 20
				require.InDelta(t, math.Round(k), k, 1e-6, "a whole number of stalls")
				if math.Round(k) == 0 {
					clean++
				}
			}
			assert.InDelta(t, tc.stepMs, sum/n, 0.01*tc.stepMs)
			assert.InDelta(t, tc.wantClean, float64(clean)/n, 0.005)
		})
	}
}

func TestPoissonMean(t *testing.T) {
	j := newJitter(TimingConfig{Jitter: 0.1}, 5, 0)
	for _, m := range []float64{0.05, 0.7, 3} {
		const n = 100_000
		var sum, sq float64
		for range n {
			k := float64(poisson(j.rng, m))
			sum += k
			sq += k * k
		}
		mean := sum / n
		assert.InDelta(t, m, mean, 0.02*m+0.002, "mean %g", m)
		assert.InDelta(t, m, sq/n-mean*mean, 0.04*m+0.002, "variance %g", m)
	}
}

package sim

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/traces"
)

// TestDriftFactorPerPeriod: one factor holds for a period and the next is
// drawn anew; over many periods the factors have harmonic mean 1 and the
// configured spread; the same seed and worker draw the same factors.
func TestDriftFactorPerPeriod(t *testing.T) {
	assert.Nil(t, newDrift(TimingConfig{}, 1, 0))
	assert.Nil(t, newDrift(TimingConfig{DriftCV: 0.05}, 1, 0), "a spread without a period is no drift")
	assert.Equal(t, int64(5), (*drift)(nil).apply(9, 5))
	tc := TimingConfig{DriftCV: 0.05, DriftPeriodMs: 100}
	d := newDrift(tc, 7, 0)
	first := d.apply(0, 1_000_000)
	assert.Equal(t, first, d.apply(99*ms, 1_000_000), "the same period, the same factor")
	assert.NotEqual(t, first, d.apply(100*ms, 1_000_000), "the next period draws anew")

	const n = 100_000
	var sum, sq, inv float64
	for i := range int64(n) {
		x := float64(d.apply((i+2)*100*ms, 1_000_000)) / 1e6
		sum += x
		sq += x * x
		inv += 1 / x
	}
	mean := sum / n
	assert.InDelta(t, 1, inv/n, 0.001)
	assert.InDelta(t, 0.05, math.Sqrt(sq/n-mean*mean)/mean, 0.002)

	a, b, c := newDrift(tc, 7, 1), newDrift(tc, 7, 1), newDrift(tc, 7, 2)
	var same, other []int64
	for i := range int64(10) {
		x, y, z := a.apply(i*100*ms, 1e6), b.apply(i*100*ms, 1e6), c.apply(i*100*ms, 1e6)
		assert.Equal(t, x, y)
		same, other = append(same, x), append(other, z)
	}
	assert.NotEqual(t, same, other)
}

// TestDriftSpreadsPerRequestITL: at concurrency 1, with a period as long
// as a request, the per-request ITL spreads by drift_cv·√(2/3) (a request
// straddles two periods at a uniform offset), while step jitter of the
// same size averages out over the request's tokens.
func TestDriftSpreadsPerRequestITL(t *testing.T) {
	wl, err := traces.Synthesize(traces.SynthSpec{Mode: traces.ModeConcurrency, Concurrency: 1,
		RequestCount: 400, ISL: 16, OSL: 101, BlockSize: 16, Seed: 1})
	require.NoError(t, err)
	cv := func(tc func(*TimingConfig)) float64 {
		cfg := constCfg("vllm", 10, 0)
		tc(&cfg.Timing)
		p := runProfile(t, cfg, wl)
		avg, _ := p.Value(results.TagITL, "avg")
		std, _ := p.Value(results.TagITL, "std")
		return std / avg
	}
	// 100 steps of 10 ms a request, plus its first.
	drifted := cv(func(tc *TimingConfig) { tc.DriftCV, tc.DriftPeriodMs = 0.06, 1010 })
	assert.InDelta(t, 0.06*math.Sqrt(2.0/3), drifted, 0.008)
	jittered := cv(func(tc *TimingConfig) { tc.Jitter = 0.06 })
	assert.Less(t, jittered, 0.012, "step jitter averages out over 100 gaps")
}

// TestDriftKeepsTheMeanStep: a large drift spreads requests but leaves the
// mean token gap the model's (within 1 %): a slow period runs fewer steps
// than a fast one, which a factor of mean 1 would have left short by
// exp(−σ²), 8 % at a cv of 0.3.
func TestDriftKeepsTheMeanStep(t *testing.T) {
	wl, err := traces.Synthesize(traces.SynthSpec{Mode: traces.ModeConcurrency, Concurrency: 1,
		RequestCount: 800, ISL: 16, OSL: 51, BlockSize: 16, Seed: 1})
	require.NoError(t, err)
	itl := func(cv float64) float64 {
		cfg := constCfg("vllm", 10, 0)
		if cv > 0 {
			cfg.Timing.DriftCV, cfg.Timing.DriftPeriodMs = cv, 510
		}
		v, ok := runProfile(t, cfg, wl).Value(results.TagITL, "avg")
		require.True(t, ok)
		return v
	}
	still := itl(0)
	assert.InDelta(t, 1, itl(0.3)/still, 0.01)
}

// runProfile simulates wl on cfg and returns the run's AIPerf profile.
func runProfile(t *testing.T, cfg Config, wl *traces.Workload) *results.Profile {
	t.Helper()
	agg := results.NewAggregator(nil)
	_, err := Run(context.Background(), cfg, wl, func(r *results.Record) error {
		m := results.ComputeMetrics(r)
		agg.Add(&m)
		return nil
	})
	require.NoError(t, err)
	return agg.Profile()
}

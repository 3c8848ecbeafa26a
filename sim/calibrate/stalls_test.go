package calibrate

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/stat/distuv"
)

// drawSteps draws decode steps from fitStalls' own model: three groups
// whose clean level is off the step model's mean by a factor of their own,
// a normal clean spread, Poisson stalls of lognormal durations, and a few
// delivery hiccups near 0.
func drawSteps(n int, stallMs, stallCV, rate float64) stallData {
	src := rand.NewPCG(11, 12)
	rng := rand.New(src)
	means := []float64{4, 8, 12}
	factor := []float64{0.8, 1, 1.2}
	s2 := math.Log1p(stallCV * stallCV)
	var d stallData
	for i := range n {
		g := i % 3
		y := means[g] * factor[g] * (1 + 0.3*rng.NormFloat64())
		if rng.Float64() < 0.02 {
			y = 0.3 + 0.5*rng.Float64()
		}
		for range stallCount(src, rate) {
			y += stallMs * math.Exp(-s2/2+math.Sqrt(s2)*rng.NormFloat64())
		}
		d.y, d.m, d.group = append(d.y, max(y, 0.05)), append(d.m, means[g]), append(d.group, g)
	}
	d.groups = 3
	return d
}

// stallCount is a Poisson draw from gonum's sampler, not sim's.
func stallCount(src rand.Source, rate float64) int {
	if rate == 0 {
		return 0
	}
	return int(distuv.Poisson{Lambda: rate, Src: src}.Rand())
}

func TestFitStalls(t *testing.T) {
	t.Run("recovers drawn stalls", func(t *testing.T) {
		f := fitStalls(drawSteps(3000, 15, 0.6, 0.25))
		require.True(t, f.ok(), "%+v", f)
		assert.InEpsilon(t, 15, f.Ms, 0.1, "%+v", f)
		assert.InEpsilon(t, 0.25, f.PerStep, 0.15, "%+v", f)
		assert.InEpsilon(t, 0.6, f.CV, 0.25, "%+v", f)
		assert.Greater(t, f.DeltaLogLik, f.Threshold)
		assert.Positive(t, f.SDMs)
		assert.Less(t, f.SDPerStep, 0.05)
	})
	t.Run("none in clean steps", func(t *testing.T) {
		f := fitStalls(drawSteps(3000, 15, 0.6, 0))
		assert.False(t, f.ok(), "%+v", f)
		assert.Zero(t, f.Ms)
		assert.Zero(t, f.PerStep)
	})
	t.Run("none from a handful of steps", func(t *testing.T) {
		f := fitStalls(drawSteps(minStallSteps-1, 15, 0.6, 0.25))
		assert.False(t, f.ok())
		assert.Contains(t, stallParams(f)[0].Source, "too few decode steps")
	})
}

// TestFitRecoversSimulatedStalls: a CPU engine simulated with host stalls
// is calibrated from its token gaps; the fitted stalls are the truth's, and
// an engine without them gets none. (At concurrency 1 every step is seen;
// at 2 the token stream shows 15 % fewer stalled steps than were drawn, and
// the rate comes out that much low.)
func TestFitRecoversSimulatedStalls(t *testing.T) {
	truth := cpuTruth()
	truth.Timing.Jitter = 0.05
	truth.Timing.StallMs, truth.Timing.StallCV, truth.Timing.StallsPerStep = 8, 0.5, 0.25
	wl := synth(t, 1, 48, 64, 16)
	res, err := Fit(context.Background(), []Target{simulateTarget(t, "c1", truth, wl)}, Options{Base: truth})
	require.NoError(t, err)
	for _, p := range res.Params {
		t.Logf("%-20s %.4g ± %.2g (%s)", p.Name, p.Value, p.SD, p.Source)
	}
	for name, want := range map[string]float64{"stall_ms": 8, "stall_cv": 0.5, "stalls_per_step": 0.25} {
		p := paramByName(res.Params, name)
		assert.True(t, p.Pinned, name)
		assert.InEpsilon(t, want, p.Value, 0.1, "%s: %+v", name, p)
	}
	assert.Equal(t, res.Config.Timing.StallMs, paramByName(res.Params, "stall_ms").Value)

	clean := truth
	clean.Timing.StallMs, clean.Timing.StallCV, clean.Timing.StallsPerStep = 0, 0, 0
	res, err = Fit(context.Background(), []Target{simulateTarget(t, "c1", clean, wl)}, Options{Base: clean})
	require.NoError(t, err)
	assert.False(t, paramByName(res.Params, "stall_ms").Pinned)
	assert.Zero(t, res.Config.Timing.StallsPerStep)

	res, err = Fit(context.Background(), []Target{simulateTarget(t, "c1", truth, wl)}, Options{Base: truth, Jitter: -1})
	require.NoError(t, err)
	assert.Zero(t, res.Config.Timing.StallsPerStep, "no step noise asked for, no stalls")
}

package silicon

import (
	"bytes"
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/sim"
)

// TestShrinkPenalty: one residual per free parameter it shrinks,
// √strength times its distance from the centre in units of its scale
// (efficiencies by their logarithms); none at strength 0, none for the
// compute efficiency and the prefill and request overheads.
func TestShrinkPenalty(t *testing.T) {
	centre := sim.GPUPrior{Physics: sim.PhysicsConfig{ComputeEfficiency: 0.5, MemoryEfficiency: 0.7, KVEfficiency: 0.7,
		StepOverheadMs: 1, SeqOverheadMs: 0.02, Combine: "sum"}}
	x := toVector(centre)
	x[pMemory] = math.Log(0.7) + 0.6 // two scales above
	x[pStep] = 0.5                   // half a scale below
	x[pRequest] = 30                 // not shrunk
	x[pCompute] = 0                  // not shrunk
	assert.Nil(t, Shrink{Centre: centre}.penalty(x, []int{pMemory, pStep}))
	got := Shrink{Strength: 4, Centre: centre}.penalty(x, []int{pMemory, pCompute, pStep, pSeq, pPrefill, pRequest})
	require.Len(t, got, 3)
	assert.InDelta(t, 2*2, got[0], 1e-12)
	assert.InDelta(t, 2*-0.5, got[1], 1e-12)
	assert.InDelta(t, 0, got[2], 1e-12)
}

// TestShrinkPullsTheFitTowardsItsCentre: a strong shrinkage holds the
// fit near a centre away from the prior the stages were measured under
// (TestFitRecoversKnownPrior finds that prior without it), at a worse data
// loss, and its Loss counts the penalty.
func TestShrinkPullsTheFitTowardsItsCentre(t *testing.T) {
	const maxReq = 60
	stages := knownPriorStages(t, knownPrior, maxReq)
	centre := knownPrior
	centre.Physics.MemoryEfficiency, centre.Physics.StepOverheadMs = 0.5, 0.2
	opt := FitOptions{MaxRequests: maxReq, Fixed: []int{pKV, pCompute, pSeq, pPrefill}, Shrink: Shrink{Strength: 1e4, Centre: centre}}
	held, err := FitPrior(context.Background(), stages, sim.DefaultConfig(), knownStart, opt)
	require.NoError(t, err)
	assert.InDelta(t, 0.2, held.Prior.Physics.StepOverheadMs, 0.05, describePrior(held.Prior))
	assert.InEpsilon(t, 0.5, held.Prior.Physics.MemoryEfficiency, 0.05, describePrior(held.Prior))
	assert.Greater(t, held.RMSLog, 0.1)
	assert.Greater(t, held.Loss, held.RMSLog*held.RMSLog*float64(len(stages)*len(FitTargets)))
}

// TestSelectShrinkPrefersTheCentreOnlyWhenItPredicts: on stages the
// simulator generated under a known prior, a strong shrinkage towards that
// prior predicts each held-out model best and is chosen; towards another
// prior it predicts worse than no shrinkage, which is chosen.
func TestSelectShrinkPrefersTheCentreOnlyWhenItPredicts(t *testing.T) {
	const maxReq = 40
	stages := knownPriorStages(t, knownPrior, maxReq)
	start := knownStart
	opt := FitOptions{MaxRequests: maxReq, MaxIter: 4, Fixed: []int{pKV, pCompute, pSeq, pPrefill}}
	grid := []float64{0, 1e4}
	ctx := context.Background()

	right, err := SelectShrink(ctx, stages, sim.DefaultConfig(), []sim.GPUPrior{start}, opt, knownPrior, grid, func(string) {})
	require.NoError(t, err)
	require.Len(t, right.Scores, 2)
	assert.Equal(t, 1e4, right.Strength, "%+v", right.Scores)
	require.Len(t, right.ModelFolds, 2)
	assert.InDelta(t, 1.5, right.ModelFolds[0].Prior.Physics.StepOverheadMs, 0.05)

	wrong := knownPrior
	wrong.Physics.MemoryEfficiency, wrong.Physics.StepOverheadMs = 0.4, 4
	got, err := SelectShrink(ctx, stages, sim.DefaultConfig(), []sim.GPUPrior{start}, opt, wrong, grid, func(string) {})
	require.NoError(t, err)
	assert.Equal(t, 0.0, got.Strength, "%+v", got.Scores)
	assert.Less(t, got.Scores[0].HeldOutRMS, got.Scores[1].HeldOutRMS)

	for _, bad := range [][]float64{nil, {0, -1}, {math.NaN()}, {math.Inf(1)}} {
		_, err = SelectShrink(ctx, stages, sim.DefaultConfig(), []sim.GPUPrior{start}, opt, wrong, bad, func(string) {})
		require.Error(t, err, "%v", bad)
	}
}

func TestShrinkTableMarksTheChoice(t *testing.T) {
	var b bytes.Buffer
	WriteShrinkMarkdown(&b, 0.3, []sim.ShrinkScore{{Strength: 0, HeldOutRMS: 0.2}, {Strength: 0.3, HeldOutRMS: 0.12345}})
	assert.Contains(t, b.String(), "| 0 | 0.2000 |  |\n")
	assert.Contains(t, b.String(), "| 0.3 | 0.1235 | yes |\n")
	b.Reset()
	WriteShrinkMarkdown(&b, 0, nil)
	assert.Contains(t, b.String(), "least squares alone")
}

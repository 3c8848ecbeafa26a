package silicon

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/sim"
)

func fp(v float64) *float64 { return &v }

func loadRuns(t *testing.T, ids ...string) []*Stage {
	t.Helper()
	var paths []string
	for _, id := range ids {
		paths = append(paths, filepath.Join(corpus, "runs", id+".json"))
	}
	stages, err := Load(paths...)
	require.NoError(t, err)
	return stages
}

// TestStageProfile: a stage's figures as the AIPerf profile calibrate
// reads; a stage that publishes no throughput is taken at its offered
// rate unless it is flagged saturated.
func TestStageProfile(t *testing.T) {
	stages := loadRuns(t, "train-llama-2-7b-tp1-general-s0", "tv-62-mistral-nemo-12b-tp2-general-lite-2-1-s0")
	saturated := *stages[1]
	saturated.Flags.Saturated = true
	for _, tc := range []struct {
		name    string
		s       *Stage
		thr     float64
		hasThr  bool
		ttftP90 float64
	}{
		{"published throughput", stages[0], *stages[0].Actual.RequestThroughput, true, *stages[0].Actual.TTFTP90},
		{"offered rate", stages[1], 2.5, true, *stages[1].Actual.TTFTP90},
		{"saturated, none published", &saturated, 0, false, *stages[1].Actual.TTFTP90},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.s.Profile()
			thr, ok := p.Value(results.TagRequestThroughput, "avg")
			assert.Equal(t, tc.hasThr, ok)
			assert.InDelta(t, tc.thr, thr, 1e-9)
			v, _ := p.Value(results.TagTTFT, "p90")
			assert.InDelta(t, tc.ttftP90, v, 1e-9)
			v, _ = p.Value(results.TagITL, "avg")
			assert.InDelta(t, *tc.s.Actual.ITLMean, v, 1e-9)
			v, _ = p.Value(results.TagRequestLatency, "avg")
			assert.InDelta(t, *tc.s.Actual.E2EMean, v, 1e-9)
			v, _ = p.Value(results.TagOSL, "avg")
			assert.InDelta(t, float64(tc.s.Workload.OSL), v, 1e-9)
			_, ok = p.Value(results.TagTTFT, "p50")
			assert.Equal(t, tc.s.Actual.TTFTP50 != nil, ok, "a figure not published is absent")
		})
	}
}

// TestCalibratedOnLightestStage: a two-stage deployment is calibrated on
// its lower rate (whatever its stage number) and predicts the other stage
// within the target of 5 % on ITL and E2E; a one-stage deployment has no
// calibrated prediction and says so.
func TestCalibratedOnLightestStage(t *testing.T) {
	stages := loadRuns(t, "tv-62-mistral-nemo-12b-tp2-general-lite-2-1-s0", "tv-62-mistral-nemo-12b-tp2-general-lite-2-1-s1",
		"tv-64-qwen2-5-7b-instruct-tp1-roleplay-1-1-s0")
	stages[0], stages[1] = stages[1], stages[0] // the heavier stage first, as a corpus may order them
	light, heavy := stages[1], stages[0]
	require.Equal(t, 2.5, light.Workload.Rate)
	pred, cals, err := Calibrated(context.Background(), stages, sim.DefaultConfig(), aPriori, Options{MaxRequests: 40, Seeds: 1})
	require.NoError(t, err)
	require.Len(t, cals, 2)
	assert.Equal(t, light.ID, cals[0].On)
	assert.Equal(t, []string{heavy.ID}, cals[0].Predicts)
	assert.NotEmpty(t, cals[0].Params)
	assert.Equal(t, Calibration{Deployment: stages[2].Deployment, Note: noCalibration}, cals[1])
	assert.Equal(t, Figures{}, pred.Figures[1], "the stage calibrated on is not a prediction")
	assert.Equal(t, Figures{}, pred.Figures[2])
	for _, m := range []Metric{ReportMetrics[3], ReportMetrics[4]} {
		e, ok := errPct(m.Get(pred.Figures[0]), m.Get(heavy.Actual))
		require.True(t, ok, m.Name)
		assert.Less(t, e*e, 25.0, "%s %+.1f %%", m.Name, e)
	}
}

// sweepStages are a deployment at 8 and 20 requests/s, the heavier
// publishing its throughput, and a one-stage deployment.
func sweepStages() []*Stage {
	mk := func(dep string, n int, rate float64, thr *float64) *Stage {
		return &Stage{ID: dep + "-s" + string(rune('0'+n)), Deployment: dep, Stage: n, Workload: Workload{Rate: rate},
			Actual: Figures{TTFTMean: fp(50), ITLMean: fp(10), RequestThroughput: thr}}
	}
	return []*Stage{mk("d", 0, 8, nil), mk("d", 1, 20, fp(19.9)), mk("e", 0, 5, nil)}
}

func TestSweepsSaturation(t *testing.T) {
	for _, tc := range []struct {
		name          string
		heavy         float64
		realSaturated bool
		saturates     bool
		whereHeld     bool
	}{
		{"held by both", 19.7, false, false, false},
		{"the simulator saturates where the real server held", 15, false, true, true},
		{"6 % short of the rate is saturated", 18.8, false, true, true},
		{"both saturate", 15, true, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stages := sweepStages()
			stages[1].Flags.Saturated = tc.realSaturated
			p := Prediction{Key: "p", Figures: []Figures{{CompletionRate: fp(8)}, {CompletionRate: &tc.heavy}, {CompletionRate: fp(5)}}}
			sw := Sweeps(stages, []Prediction{p})
			require.Len(t, sw, 1, "a one-stage deployment is no sweep")
			h := sw[0].Heaviest()
			assert.Equal(t, "d-s1", h.Stage)
			assert.Equal(t, !tc.realSaturated, h.RealHeld)
			got := h.Predicted[0]
			assert.InDelta(t, 100*(tc.heavy-19.9)/19.9, *got.ErrorPct, 1e-9)
			assert.Equal(t, tc.saturates, got.Saturates)
			assert.Equal(t, tc.whereHeld, got.SaturatesWhereRealHeld)
			assert.Nil(t, sw[0].Stages[0].Predicted[0].ErrorPct, "no published throughput: no error")
		})
	}
}

// TestReportMissingIsAbsent: a figure missing on one side has no value and
// no error in the JSON (never NaN), the medians count what they cover, and
// the calibrated prediction's stages get every prediction's medians.
func TestReportMissingIsAbsent(t *testing.T) {
	stages := sweepStages()
	stages[2].Actual.ITLMean = nil
	apriori := Prediction{Key: "a_priori", Name: "a priori", Figures: []Figures{
		{TTFTMean: fp(55), ITLMean: fp(11), E2EMean: fp(math.NaN())}, {TTFTMean: fp(40), ITLMean: fp(9), E2EP99: fp(math.Inf(1))},
		{TTFTMean: fp(60), ITLMean: fp(12)}}}
	cal := Prediction{Key: calibratedKey, Name: CalibratedName, Figures: []Figures{{}, {TTFTMean: fp(51), ITLMean: fp(10.2)}, {}}}
	r := NewReport(stages, []Prediction{apriori, cal}, nil, 40)
	var buf bytes.Buffer
	require.NoError(t, r.WriteJSON(&buf))
	assert.NotContains(t, buf.String(), "NaN")
	assert.Nil(t, r.StageErrors[0].Metrics[4].Predicted[0].Value, "a NaN is no value")
	assert.Nil(t, r.StageErrors[1].Metrics[6].Predicted[0].Value, "nor is an infinity")
	var back Report
	require.NoError(t, json.Unmarshal(buf.Bytes(), &back))
	itl := back.StageErrors[2].Metrics[3]
	assert.Equal(t, "itl_mean", itl.Metric)
	assert.Nil(t, itl.Measured)
	assert.Equal(t, 12.0, *itl.Predicted[0].Value)
	assert.Nil(t, itl.Predicted[0].ErrorPct)
	assert.Nil(t, itl.Predicted[1].Value)
	ttft := back.Predictions[0].Metrics[0]
	assert.Equal(t, Median{Metric: "ttft_mean", Value: fp(20), N: 3}, ttft, "|+10|, |−20|, |+20| %")
	assert.Equal(t, Median{Metric: "ttft_p90"}, back.Predictions[0].Metrics[1], "no stage publishes it: no median")
	assert.Equal(t, 1, back.Predictions[1].Stages)
	require.Len(t, back.Calibrated, 2)
	assert.Equal(t, Median{Metric: "ttft_mean", Value: fp(20), N: 1}, back.Calibrated[0].Metrics[0], "a priori on d-s1 alone")
	assert.Equal(t, "ttft", back.Calibrated[1].Families[0].Metric)
	assert.InDelta(t, 2, *back.Calibrated[1].Families[1].Value, 1e-9, "calibrated ITL on d-s1: +2 %")
}

// TestWriteTextAligned: the text tables' columns line up (numbers on the
// right), and markdown right-aligns only the numeric columns.
func TestWriteTextAligned(t *testing.T) {
	stages := sweepStages()
	p := Prediction{Key: "a_priori", Name: "a priori", Figures: []Figures{
		{TTFTMean: fp(55), CompletionRate: fp(8)}, {TTFTMean: fp(40), CompletionRate: fp(15)}, {TTFTMean: fp(60)}}}
	cals := []Calibration{{Deployment: "d", On: "d-s0", Predicts: []string{"d-s1"},
		Params: []sim.CalibratedParam{{Name: "step_overhead_ms", Pinned: true}, {Name: "seq_overhead_ms"}}},
		{Deployment: "e", Note: noCalibration}}
	r := NewReport(stages, []Prediction{p}, cals, 0)
	var text, md bytes.Buffer
	require.NoError(t, r.WriteText(&text))
	require.NoError(t, r.WriteMarkdown(&md))
	block := text.String()[strings.Index(text.String(), "stage  TTFT mean"):]
	lines := strings.Split(block[:strings.Index(block, "\n\n")], "\n")
	require.Len(t, lines, 4)
	for _, l := range lines[1:] {
		assert.Len(t, []rune(l), len([]rune(lines[0])), "%q", l)
	}
	assert.Equal(t, "d-s1       -20.0         –         –         –         –        –        –", lines[2])
	assert.Contains(t, md.String(), "| deployment | calibrated on | predicts | pinned by the data |\n|---|---|---|---|\n"+
		"| d | s0 at 8 req/s | s1 at 20 req/s | step_overhead_ms |\n")
	assert.Contains(t, md.String(), "| d-s1 | 20.00 | 19.90 | 15.00 (-24.6 %) SATURATES |")
	assert.Contains(t, text.String(), "one stage: no calibrated prediction")
}

// TestRobustResidualIsHuber: the fit's residual squared is twice Huber's
// loss, continuous at the threshold, odd, and grows as the square root of
// a large miss (a saturated stage pulls linearly, not quadratically).
func TestRobustResidualIsHuber(t *testing.T) {
	huber := func(r float64) float64 {
		if a := math.Abs(r); a > huberDelta {
			return huberDelta * (a - huberDelta/2)
		}
		return r * r / 2
	}
	for _, r := range []float64{0, 0.01, -0.04, huberDelta, -huberDelta, 0.3, -1, math.Log(591)} {
		got := robust(r)
		assert.InDelta(t, 2*huber(r), got*got, 1e-12, "r=%g", r)
		assert.Equal(t, math.Signbit(r), math.Signbit(got), "r=%g", r)
		assert.InDelta(t, -got, robust(-r), 1e-15, "r=%g", r)
	}
	assert.InDelta(t, robust(huberDelta), robust(math.Nextafter(huberDelta, 1)), 1e-9)
	assert.Less(t, robust(1), 0.6, "a 2.7-fold miss counts less than its log")
}

// TestFitKeepsTheKernelEfficiencies: the fit's parameter vector leaves
// out the long prompts' kernel efficiencies (the corpus cannot see them);
// a prior read back from it keeps its start's, and projects the fitted
// efficiencies onto their bounds.
func TestFitKeepsTheKernelEfficiencies(t *testing.T) {
	start := sim.GPUPrior{Physics: sim.PhysicsConfig{ComputeEfficiency: 0.9, MemoryEfficiency: 0.8, KVEfficiency: 0.85,
		PrefillEfficiency: 0.7, AttentionEfficiency: 0.5, StepOverheadMs: 1, SeqOverheadMs: 0.01, PrefillOverheadMs: 0.3,
		Combine: "sum"}, RequestOverheadMs: 6}
	x := toVector(start)
	require.Len(t, x, numParams)
	assert.Equal(t, start, fromVector(x, start))
	x[pCompute] = math.Log(1.4)
	got := fromVector(x, start)
	assert.Equal(t, 1.0, got.Physics.ComputeEfficiency, "bounded at 1")
	assert.Equal(t, 0.7, got.Physics.PrefillEfficiency)
	assert.Equal(t, 0.5, got.Physics.AttentionEfficiency)
}

// TestPriorsTableMarksBounds: the priors table gives each fitted
// parameter's whole-corpus value and fold range, counts the fits that left
// it on a bound, and names those on a bound in most fits.
func TestPriorsTableMarksBounds(t *testing.T) {
	prior := func(compute, mem, prefill float64) sim.GPUPrior {
		return sim.GPUPrior{Physics: sim.PhysicsConfig{ComputeEfficiency: compute, MemoryEfficiency: mem,
			StepOverheadMs: 1, SeqOverheadMs: 0.01, PrefillOverheadMs: prefill, Combine: "sum"}, RequestOverheadMs: 6}
	}
	folds := []sim.GPUFold{{HeldOut: "a", Prior: prior(1, 0.7, 0.5)}, {HeldOut: "b", Prior: prior(0.9, 0.8, 0)}}
	var b bytes.Buffer
	WritePriorsMarkdown(&b, prior(1, 0.75, 0), folds)
	md := b.String()
	assert.Contains(t, md, "| `timing.physics.compute_efficiency` | 1 | 0.9 | 1 | 2 of 3 |\n")
	assert.Contains(t, md, "| `timing.physics.memory_efficiency` | 0.75 | 0.7 | 0.8 | 0 of 3 |\n")
	assert.Contains(t, md, "| `timing.physics.kv_efficiency` | 0.75 | 0.7 | 0.8 | 0 of 3 |\n", "unset: memory_efficiency")
	assert.Contains(t, md, "| `timing.physics.prefill_overhead_ms` | 0 | 0 | 0.5 | 2 of 3 |\n")
	assert.Contains(t, md, "not pinned by the corpus: `timing.physics.compute_efficiency`, `timing.physics.prefill_overhead_ms`.\n")
}

// TestSpreadless: the reference scores 0 on every mean and, on a
// percentile, its distance from the mean: the codellama s0 stage's E2E
// p99 is 16.8 % above its mean (3694 → 4316 ms), so the reference misses
// it by 1 − 3694/4316.
func TestSpreadless(t *testing.T) {
	stages := loadRuns(t, "train-codellama-34b-tp2-general-s0")
	p := Spreadless(stages)
	a := stages[0].Actual
	for _, met := range ReportMetrics {
		e, ok := errPct(met.Get(p.Figures[0]), met.Get(a))
		require.True(t, ok, met.Name)
		switch met.Name {
		case "TTFT mean", "ITL mean", "E2E mean":
			assert.Zero(t, e, met.Name)
		case "E2E p99":
			assert.InDelta(t, 100*(*a.E2EMean / *a.E2EP99 - 1), e, 1e-9)
			assert.InDelta(t, -14.4, e, 0.1)
		default:
			assert.Less(t, e, 0.0, met.Name)
		}
	}
}

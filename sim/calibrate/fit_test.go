package calibrate

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/sim"
	"github.com/simbench/simbench/traces"
)

func synth(t *testing.T, conc, n int) *traces.Workload {
	t.Helper()
	wl, err := traces.Synthesize(traces.SynthSpec{Mode: traces.ModeConcurrency, Concurrency: conc, RequestCount: n,
		ISL: 800, ISLStddev: 400, OSL: 64, OSLStddev: 20, Seed: 3})
	require.NoError(t, err)
	return wl
}

// TestRecoverKnownParameters simulates with known timing parameters,
// calibrates on that output and recovers every parameter within 2 %.
func TestRecoverKnownParameters(t *testing.T) {
	truth := Params{BaseMs: 8, PrefillTokenMs: 0.02, DecodeSeqMs: 0.3, ContextTokenMs: 0.0004, OverheadMs: 5}
	base := sim.DefaultConfig()
	var targets []Target
	for _, conc := range []int{1, 8} {
		wl := synth(t, conc, 24)
		prof, err := Simulate(context.Background(), truth.Apply(base), wl)
		require.NoError(t, err)
		targets = append(targets, Target{Name: "c" + string(rune('0'+conc)), Profile: prof, Workload: wl})
	}
	res, err := Fit(context.Background(), targets, Options{Base: base, MaxEvals: 3000, Jitter: -1})
	require.NoError(t, err)
	t.Logf("start %+v\nfit   %+v\nloss %.3g after %d simulations", res.Start, res.Params, res.Loss, res.Evals)
	want, got := truth.vector(), res.Params.vector()
	for i := range want {
		assert.InEpsilon(t, want[i], got[i], 0.02, "parameter %d", i)
	}
	for _, r := range res.Rows {
		assert.InDelta(t, 0, r.ErrorPct, 1, "%s %s.%s", r.Target, r.Metric, r.Stat)
	}
}

func TestInitialFromAIPerfRun(t *testing.T) {
	p, err := results.LoadProfileJSON("../../testdata/aiperf/qwen_concurrency1/profile_export_aiperf.json")
	require.NoError(t, err)
	wl := synth(t, 1, 8)
	start := Initial(p, wl)
	itl, _ := p.Value(results.TagITL, "avg")
	// One decode step at the measured context reproduces the measured ITL,
	// and the first step plus the overhead the measured TTFT.
	step := start.BaseMs + start.DecodeSeqMs + start.ContextTokenMs*(100+200.0/2)
	assert.InEpsilon(t, itl, step, 0.01)
	ttft, _ := p.Value(results.TagTTFT, "avg")
	first := start.OverheadMs + start.BaseMs + start.DecodeSeqMs + 100*(start.PrefillTokenMs+start.ContextTokenMs)
	assert.InEpsilon(t, ttft, first, 0.01)
	// 64 requests back to back over 255.56 s at 3652 ms each: ~346 ms apart.
	assert.InDelta(t, 346.5, ClientGap(p, wl), 0.5)
	for _, v := range start.vector() {
		assert.Greater(t, v, 0.0)
	}
}

func TestFitDeterministic(t *testing.T) {
	wl := synth(t, 2, 16)
	truth := Params{BaseMs: 10, PrefillTokenMs: 0.01, DecodeSeqMs: 0.5, ContextTokenMs: 0.001, OverheadMs: 3}
	prof, err := Simulate(context.Background(), truth.Apply(sim.DefaultConfig()), wl)
	require.NoError(t, err)
	run := func() Params {
		res, err := Fit(context.Background(), []Target{{Name: "a", Profile: prof, Workload: wl}}, Options{Base: sim.DefaultConfig(), MaxEvals: 200, Jitter: 0.05})
		require.NoError(t, err)
		return res.Params
	}
	assert.Equal(t, run(), run())
}

func TestRunWorkloadFromAIPerfInputConfig(t *testing.T) {
	p, err := results.LoadProfileJSON("../../testdata/aiperf/qwen_concurrency1/profile_export_aiperf.json")
	require.NoError(t, err)
	wl, err := RunWorkload("../../testdata/aiperf/qwen_concurrency1", p)
	require.NoError(t, err)
	assert.Equal(t, 1, wl.Concurrency)
	require.Len(t, wl.Requests, 65)
	assert.True(t, wl.Requests[0].Warmup)
	for _, r := range wl.Requests {
		assert.Equal(t, 100, r.InputLength)
		assert.Equal(t, 200, r.OutputLength)
	}
	_, err = RunWorkload(t.TempDir(), &results.Profile{})
	assert.ErrorContains(t, err, "cannot rebuild the workload")
}

// TestClientGapDelaysNextSend: with frontend.client_gap_ms, a closed-loop
// slot sends its next request that long after the previous response ended.
func TestClientGapDelaysNextSend(t *testing.T) {
	wl := synth(t, 1, 3)
	cfg := Params{BaseMs: 10, PrefillTokenMs: 0.01, DecodeSeqMs: 0.1}.Apply(sim.DefaultConfig())
	cfg.Frontend.ClientGapMs = 250
	var recs []*results.Record
	_, err := sim.Run(context.Background(), cfg, wl, func(r *results.Record) error { recs = append(recs, r); return nil })
	require.NoError(t, err)
	require.Len(t, recs, 3)
	for i := 1; i < len(recs); i++ {
		assert.Equal(t, recs[i-1].EndNs+250_000_000, recs[i].StartNs)
	}
}

package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/simbench/simbench/internal/warning"
	"github.com/simbench/simbench/traces"
)

func TestRangeWarnings(t *testing.T) {
	cfg := DefaultConfig()
	wl := func(conc, isl, osl int) *traces.Workload {
		w := &traces.Workload{Concurrency: conc}
		for range 3 {
			w.Requests = append(w.Requests, traces.Request{InputLength: isl, OutputLength: osl})
		}
		w.Requests = append(w.Requests, traces.Request{InputLength: 9999, OutputLength: 1, Warmup: true})
		return w
	}
	assert.Nil(t, cfg.RangeWarnings(wl(1, 100, 200)), "no calibration record, no warning")

	cfg.Calibration = &Calibration{Range: CalibrationRange{ISL: [2]int{64, 1024}, OSL: [2]int{16, 64},
		Concurrency: [2]int{1, 4}, Batch: [2]int{1, 4}}}
	assert.Empty(t, cfg.RangeWarnings(wl(4, 1100, 60)), "inside (10 % margin; warmup ignored)")
	got := cfg.RangeWarnings(wl(8, 2048, 200))
	assert.Equal(t, []string{
		"ISL 2048–2048 leaves the calibrated range 64–1024: the fit extrapolates",
		"OSL 200–200 leaves the calibrated range 16–64: the fit extrapolates",
		"concurrency 8–8 leaves the calibrated range 1–4: the fit extrapolates",
	}, warning.Messages(got))
}

// TestClientGapSamples: measured gaps are dealt from a shuffled deck, so
// every one comes up once per round (the mean is kept) in a seeded order.
func TestClientGapSamples(t *testing.T) {
	f := ClientConfig{GapMs: 99, GapSamplesMs: []float64{1, 2, 3, 3000}}
	draw := func(seed int64) []int64 {
		g := newClientGap(f, seed)
		var out []int64
		for range 8 {
			out = append(out, g.next())
		}
		return out
	}
	a := draw(1)
	assert.Equal(t, a, draw(1))
	assert.ElementsMatch(t, []int64{1e6, 2e6, 3e6, 3000e6}, a[:4])
	assert.ElementsMatch(t, []int64{1e6, 2e6, 3e6, 3000e6}, a[4:])
	assert.Equal(t, int64(99e6), newClientGap(ClientConfig{GapMs: 99}, 1).next())
	bad := DefaultConfig()
	bad.Client.GapSamplesMs = []float64{1, -2}
	assert.ErrorContains(t, bad.Validate(), "client.gap_samples_ms[1]")
}

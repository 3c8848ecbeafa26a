package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"

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
	}, got)
}

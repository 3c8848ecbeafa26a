package realrun

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/simbench/simbench/traces"
)

// loadgenConfig names a run's arrivals as AIPerf's input_config does, a
// gamma pattern with its shape as arrival_smoothness (1 unless given), so
// that calibrate rebuilds the arrivals the run sent.
func TestLoadgenConfigArrivals(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	s := func(v string) *string { return &v }
	wl := &traces.Workload{Requests: make([]traces.Request, 3)}
	for _, tc := range []struct {
		spec       traces.Spec
		pattern    string
		smoothness *float64
	}{
		{traces.Spec{}, "concurrency_burst", nil},
		{traces.Spec{RequestRate: f(2)}, "poisson", nil},
		{traces.Spec{RequestRate: f(2), ArrivalPattern: s("Gamma ")}, "gamma", f(1)},
		{traces.Spec{RequestRate: f(2), ArrivalPattern: s("gamma"), GammaShape: f(0.3)}, "gamma", f(0.3)},
	} {
		lg := loadgenConfig(Options{Spec: tc.spec}, wl)
		assert.Equal(t, tc.pattern, lg.ArrivalPattern)
		assert.Equal(t, tc.smoothness, lg.ArrivalSmoothness, tc.pattern)
		assert.Equal(t, 3, lg.RequestCount)
	}
}

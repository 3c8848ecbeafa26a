package calibrate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/sim"
)

func specTarget(name string, s *results.SpecDecode) Target {
	p := &results.Profile{}
	if s != nil {
		p.AddSpecDecode(*s)
	}
	return Target{Name: name, Profile: p}
}

// The acceptance is fitted per position from the runs' counters, pooled,
// when some run has them; otherwise the config's stays, and the report's
// parameters say which.
func TestAcceptanceStage(t *testing.T) {
	spec := func(rates ...float64) sim.Config {
		c := sim.DefaultConfig()
		c.Engine.SpeculativeConfig = &sim.SpeculativeConfig{Method: sim.SpecEagle3, NumSpeculativeTokens: 4, AcceptanceRate: rates}
		return c
	}
	// Two runs, the fixture's counters split unevenly: the pooled
	// conditional rates are 0.80, 0.75, 0.733…, 0.727….
	a := results.SpecDecode{Drafts: 400, DraftTokens: 1600, AcceptedTokens: 864, AcceptedPerPos: []float64{320, 240, 176, 128}}
	b := results.SpecDecode{Drafts: 800, DraftTokens: 3200, AcceptedTokens: 1728, AcceptedPerPos: []float64{640, 480, 352, 256}}
	cases := []struct {
		name      string
		base      sim.Config
		targets   []Target
		want      []float64 // the config's acceptance_rate after the stage
		source    string
		warnCount int
	}{
		{"measured", spec(0.7), []Target{specTarget("a", &a), specTarget("b", &b), specTarget("c", nil)},
			[]float64{0.8, 0.75, 528.0 / 720, 384.0 / 528}, specFromRuns, 0},
		{"not measured: the config's", spec(0.9, 0.8, 0.7, 0.6), []Target{specTarget("c", nil)},
			[]float64{0.9, 0.8, 0.7, 0.6}, specFromConfig, 0},
		{"measured without a speculative_config", sim.DefaultConfig(), []Target{specTarget("a", &a)}, nil, "", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &fitter{targets: tc.targets, opts: Options{Base: tc.base}, res: &Result{}}
			require.NoError(t, f.acceptance(t.Context()))
			assert.Len(t, f.res.Warnings, tc.warnCount)
			sc := f.opts.Base.Engine.SpeculativeConfig
			if tc.want == nil {
				assert.Nil(t, sc)
				assert.Empty(t, f.res.Params)
				return
			}
			assert.InDeltaSlice(t, tc.want, sc.Rates(), 1e-12)
			require.Len(t, f.res.Params, 4)
			for i, p := range layered(f.res.Params) {
				assert.Equal(t, specParamName(i), p.Name)
				assert.Equal(t, tc.source, p.Source)
				assert.Equal(t, LayerModel, p.Layer)
				assert.InDelta(t, tc.want[i], p.Value, 1e-12)
			}
		})
	}
}

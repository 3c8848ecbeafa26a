package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGridPointsAndApply(t *testing.T) {
	s, err := ParseGrid([]byte("parameters:\n  - key: workers\n    values: [1, 2]\n  - key: router.policy\n    values: [round_robin, kv, least_loaded]\n  - key: speedup\n    values: [1.5]\n"))
	require.NoError(t, err)
	pts := s.Points()
	require.Len(t, pts, 6)
	assert.Equal(t, []any{1, "round_robin", 1.5}, pts[0].Values)
	assert.Equal(t, []any{1, "least_loaded", 1.5}, pts[2].Values)
	assert.Equal(t, []any{2, "kv", 1.5}, pts[4].Values)
	cfg, speed, err := s.Apply(DefaultConfig(), pts[4])
	require.NoError(t, err)
	assert.Equal(t, 2, cfg.Workers)
	assert.Equal(t, "kv", cfg.Router.Policy)
	assert.Equal(t, 1.5, speed)
	assert.Equal(t, "workers=2, router.policy=kv, speedup=1.5", s.Describe(pts[4]))
}

func TestGridErrors(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{"parameters: []", "no parameters"},
		{"parameter: []", "not found"},
		{"parameters:\n  - key: workers\n    values: []", "at least one value"},
		{"parameters:\n  - key: workers\n    values: [1]\n  - key: workers\n    values: [2]", "given twice"},
	} {
		_, err := ParseGrid([]byte(tc.doc))
		assert.ErrorContains(t, err, tc.want, tc.doc)
	}
	for _, tc := range []struct{ doc, want string }{
		{"parameters:\n  - key: router.polcy\n    values: [kv]", "polcy"},
		{"parameters:\n  - key: workers\n    values: [0]", "workers"},
		{"parameters:\n  - key: speedup\n    values: [-1]", "speedup"},
	} {
		s, err := ParseGrid([]byte(tc.doc))
		require.NoError(t, err)
		_, _, err = s.Apply(DefaultConfig(), s.Points()[0])
		assert.ErrorContains(t, err, tc.want, tc.doc)
	}
}

// A grid over a pool's size keeps workers equal to the pools' sum, from an
// aggregated base too.
func TestGridDisaggregatedPoolSize(t *testing.T) {
	s, err := ParseGrid([]byte("parameters:\n  - key: disaggregation.decode_workers\n    values: [1, 3]\n  - key: disaggregation.prefill_workers\n    values: [1, 2]\n"))
	require.NoError(t, err)
	pts := s.Points()
	require.Len(t, pts, 4)
	for _, pt := range pts {
		cfg, _, err := s.Apply(DefaultConfig(), pt)
		require.NoError(t, err, s.Describe(pt))
		d := cfg.Disaggregation
		assert.Equal(t, d.PrefillWorkers+d.DecodeWorkers, cfg.Workers, s.Describe(pt))
		assert.Equal(t, 25.0, d.KVTransfer.BandwidthGBs, "the section's defaults")
	}
}

// A grid may name a renamed key the old way: it sets the current key, and
// says so.
func TestGridRenamedKey(t *testing.T) {
	sw, err := ParseGrid([]byte("parameters:\n  - key: frontend.client_gap_ms\n    values: [0, 5]\n"))
	require.NoError(t, err)
	require.Len(t, sw.KeyWarnings(), 1)
	assert.EqualError(t, sw.KeyWarnings()[0], "parameters[0]: frontend.client_gap_ms is deprecated, read as client.gap_ms")
	cfg, _, err := sw.Apply(DefaultConfig(), sw.Points()[1])
	require.NoError(t, err)
	assert.Equal(t, 5.0, cfg.Client.GapMs)
	assert.Equal(t, "client.gap_ms=5", sw.Describe(sw.Points()[1]))
	_, err = ParseGrid([]byte("parameters:\n  - key: frontend.tie_order\n    values: [trace]\n  - key: client.tie_order\n    values: [random]\n"))
	assert.EqualError(t, err, `grid: parameter "client.tie_order" given twice`)
}

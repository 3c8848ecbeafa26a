package numpy

import (
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goldens is results/testdata/numpy_stats.json (scripts/gen_numpy_golden.py):
// np.percentile of each case's values at each of the percentiles.
const goldens = "../../results/testdata/numpy_stats.json"

// TestPercentileSortedMatchesNumpy checks every golden percentile bit for bit.
func TestPercentileSortedMatchesNumpy(t *testing.T) {
	b, err := os.ReadFile(goldens)
	require.NoError(t, err)
	var g struct {
		Percentiles []float64 `json:"percentiles"`
		Cases       []struct {
			Name        string    `json:"name"`
			Values      []float64 `json:"values"`
			Percentiles []float64 `json:"percentiles"`
		} `json:"cases"`
	}
	require.NoError(t, json.Unmarshal(b, &g))
	require.NotEmpty(t, g.Cases)
	for _, c := range g.Cases {
		t.Run(c.Name, func(t *testing.T) {
			sorted := slices.Sorted(slices.Values(c.Values))
			require.Len(t, c.Percentiles, len(g.Percentiles))
			for i, p := range g.Percentiles {
				assert.Equal(t, c.Percentiles[i], PercentileSorted(sorted, p), "p%v", p)
			}
		})
	}
}

func TestPercentileSorted(t *testing.T) {
	tests := []struct {
		name   string
		sorted []float64
		p      float64
		want   float64
	}{
		{"one value", []float64{7}, 99, 7},
		{"min", []float64{1, 2, 3, 4}, 0, 1},
		{"max", []float64{1, 2, 3, 4}, 100, 4},
		{"median between two", []float64{1, 2, 3, 4}, 50, 2.5},
		{"t below one half: a+(b−a)t", []float64{0, 0.3}, 10, 0.03},
		// t = 0.9: 3533−1864·0.1 = 3346.6 as numpy has it, where a+(b−a)t
		// gives 3346.6000000000004.
		{"t from one half: b−(b−a)(1−t)", []float64{1669, 3533}, 90, 3346.6},
		{"t from one half, p99", []float64{1669, 3533}, 99, 3514.36},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, PercentileSorted(tt.sorted, tt.p))
		})
	}
}

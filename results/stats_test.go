package results

import (
	"encoding/json"
	"math"
	"os"
	"strconv"
	"testing"

	"github.com/montanaflynn/stats"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type numpyCase struct {
	Name        string    `json:"name"`
	Values      []float64 `json:"values"`
	Avg         float64   `json:"avg"`
	Std         float64   `json:"std"`
	Min         float64   `json:"min"`
	Max         float64   `json:"max"`
	Sum         float64   `json:"sum"`
	Percentiles []float64 `json:"percentiles"`
}

func loadNumpyCases(t *testing.T) []numpyCase {
	t.Helper()
	b, err := os.ReadFile("testdata/numpy_stats.json")
	require.NoError(t, err)
	var g struct {
		Cases []numpyCase `json:"cases"`
	}
	require.NoError(t, json.Unmarshal(b, &g))
	require.NotEmpty(t, g.Cases)
	return g.Cases
}

// TestSummarizeMatchesNumpy checks percentiles, min and max bit for bit and
// mean, std and sum to 1e-12 relative against goldens computed by numpy.
func TestSummarizeMatchesNumpy(t *testing.T) {
	for _, c := range loadNumpyCases(t) {
		t.Run(c.Name, func(t *testing.T) {
			s, ok := Summarize(append([]float64(nil), c.Values...))
			require.True(t, ok)
			assert.Equal(t, len(c.Values), s.Count)
			assert.Equal(t, c.Min, s.Min)
			assert.Equal(t, c.Max, s.Max)
			for i := range Percentiles {
				assert.Equal(t, c.Percentiles[i], s.P[i], "p%v", Percentiles[i])
			}
			assertClose(t, c.Avg, s.Avg, "avg")
			assertClose(t, c.Sum, s.Sum, "sum")
			assertClose(t, c.Std, s.Std, "std")
		})
	}
}

func assertClose(t *testing.T, want, got float64, what string) {
	t.Helper()
	if want == 0 || math.Abs(want) < 1e-12 {
		assert.InDelta(t, want, got, 1e-12, what)
		return
	}
	assert.InEpsilon(t, want, got, 1e-12, what)
}

// TestMontanaflynnAgrees verifies the design card's claim that
// montanaflynn/stats ≥ v0.8 uses the same (type 7) percentiles, to 1 ULP.
func TestMontanaflynnAgrees(t *testing.T) {
	for _, c := range loadNumpyCases(t) {
		for i, p := range Percentiles {
			got, err := stats.Percentile(c.Values, p)
			require.NoError(t, err)
			assert.InDelta(t, c.Percentiles[i], got, 4e-16*math.Abs(c.Percentiles[i]), "%s p%v", c.Name, p)
		}
	}
}

func TestSummarizeEdges(t *testing.T) {
	_, ok := Summarize(nil)
	assert.False(t, ok, "empty input has no summary")
	_, ok = Summarize([]float64{math.NaN(), math.Inf(1)})
	assert.False(t, ok, "non-finite values are dropped")
	s, ok := Summarize([]float64{math.NaN(), 3, 1})
	require.True(t, ok)
	assert.Equal(t, 2, s.Count)
	assert.Equal(t, 2.0, s.Avg)
}

func TestPercentileSortedEnds(t *testing.T) {
	v := []float64{1, 2, 3, 4}
	assert.Equal(t, 1.0, PercentileSorted(v, 0))
	assert.Equal(t, 4.0, PercentileSorted(v, 100))
	assert.Equal(t, 2.5, PercentileSorted(v, 50))
}

// TestAppendFloatRoundTrips checks the Python-style formatter on many
// magnitudes: the text parses back to the same float.
func TestAppendFloatRoundTrips(t *testing.T) {
	for _, base := range []float64{1, 1.5, 3.14159265358979, 7.000000000000001, 123456.789} {
		for e := -20; e <= 20; e++ {
			for _, sign := range []float64{1, -1} {
				f := sign * base * math.Pow(10, float64(e))
				got, err := strconv.ParseFloat(string(appendFloat(nil, f)), 64)
				require.NoError(t, err)
				assert.Equal(t, f, got)
			}
		}
	}
}

func TestMedianValue(t *testing.T) {
	prof := func(v float64) *Profile {
		return &Profile{Metrics: []MetricResult{{Tag: TagITL, Stats: map[string]float64{"avg": v}}}}
	}
	v, n := MedianValue([]*Profile{prof(5), prof(1), prof(3)}, TagITL, "avg")
	assert.Equal(t, 3.0, v)
	assert.Equal(t, 3, n)
	v, _ = MedianValue([]*Profile{prof(5), prof(1)}, TagITL, "avg")
	assert.Equal(t, 3.0, v, "even count: numpy's linear p50")
	v, n = MedianValue([]*Profile{prof(5), {}, prof(math.NaN())}, TagITL, "avg")
	assert.Equal(t, 5.0, v)
	assert.Equal(t, 1, n, "a run without the metric, or with NaN, is not counted")
	_, n = MedianValue(nil, TagITL, "avg")
	assert.Zero(t, n)
}

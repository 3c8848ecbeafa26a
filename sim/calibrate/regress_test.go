package calibrate

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestVarianceWeights gives rows whose squared residuals are exactly
// a + b·μ²: the weights must be 1/(a + b·μ²) up to one scale (mean 1),
// and uniform when the spread does not grow with the row's size.
func TestVarianceWeights(t *testing.T) {
	mus := []float64{1, 1.5, 2, 5, 40, 120, 300}
	tests := []struct {
		name string
		a, b float64
		// variance is each row's squared residual.
		variance func(mu float64) float64
		// want is the variance the weights must be the inverse of, up to scale.
		want func(mu float64) float64
	}{
		{"relative: a lognormal factor on every step", 0, 0.01,
			func(mu float64) float64 { return 0.01 * mu * mu },
			func(mu float64) float64 { return 0.01 * mu * mu }},
		{"a floor and a relative part: stalls and jitter", 0.25, 0.0225,
			func(mu float64) float64 { return 0.25 + 0.0225*mu*mu },
			func(mu float64) float64 { return 0.25 + 0.0225*mu*mu }},
		{"one variance", 4, 0,
			func(float64) float64 { return 4 },
			func(float64) float64 { return 1 }},
		{"a spread that shrinks with the size is not weighted", 0, 0,
			func(mu float64) float64 { return 9 / mu },
			func(float64) float64 { return 1 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x, y := make([][]float64, len(mus)), make([]float64, len(mus))
			for i, mu := range mus {
				sign := float64(1 - 2*(i%2))
				x[i], y[i] = []float64{mu}, mu+sign*math.Sqrt(tt.variance(mu))
			}
			w := varianceWeights(x, y, []float64{1}, 1e-12)
			require.Len(t, w, len(mus))
			sum := 0.0
			for _, v := range w {
				sum += v
			}
			assert.InDelta(t, float64(len(w)), sum, 1e-9, "weights have mean 1")
			// w·want is one constant for every row.
			for i, mu := range mus {
				assert.InEpsilon(t, w[0]*tt.want(mus[0]), w[i]*tt.want(mu), 1e-6, "row %d (μ %g)", i, mu)
			}
		})
	}
}

// TestRegressWeightsTheShortRows fits cost = c·tokens + s on decode-like
// rows of 1–4 tokens (a few ms, spread 0.1 ms) and prompt-like rows of
// 200–1,000 tokens (hundreds of ms, spread 15 %): weighted by their
// spread, the per-step cost s comes from the short rows (0.98 ms for a
// true 1); unweighted, the long rows' noise moves it to 0.93 ms.
func TestRegressWeightsTheShortRows(t *testing.T) {
	const c, s = 0.3, 1.0
	var x [][]float64
	var y []float64
	for i := range 400 {
		tok := float64(1 + i%4)
		sign := float64(1 - 2*(i%2))
		x, y = append(x, []float64{tok, 1}), append(y, c*tok+s+sign*0.1)
	}
	// The long rows' noise is one-sided in the pairs below as a real
	// plan's few long steps can be: it pulls an unweighted fit's intercept.
	for i, tok := range []float64{200, 400, 600, 800, 1000, 300, 500, 700} {
		noise := 0.15 * (c*tok + s)
		if i%3 == 0 {
			noise = -noise
		}
		x, y = append(x, []float64{tok, 1}), append(y, c*tok+s+noise)
	}
	post, err := regress(x, y, []float64{0.5, 1}, []float64{10, 100})
	require.NoError(t, err)
	t.Logf("per-step %.4f ms, per-token %.5f ms", post.Beta[1], post.Beta[0])
	assert.InDelta(t, s, post.Beta[1], 0.03, "per-step cost")
	assert.InEpsilon(t, c, post.Beta[0], 0.1, "per-token cost")
}

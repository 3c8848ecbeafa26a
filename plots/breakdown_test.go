package plots

import (
	"image/png"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot/plotter"
)

var breakdownStages = []string{"tokenize/none", "route/aggregated", "backend/aggregated", "first_token/none"}

func breakdownBars() []BreakdownBar {
	return []BreakdownBar{
		{Name: "real", StageMs: []float64{6, 2, 75, 17}, TTFTMs: 100},
		// the simulator lacks tokenize (0) and is not additive: 90 ms of stages, 110 ms TTFT
		{Name: "sim", StageMs: []float64{0, 3, 70, 17}, TTFTMs: 110},
	}
}

func TestTTFTBreakdownPNG(t *testing.T) {
	t.Parallel()
	p, err := TTFTBreakdown("TTFT breakdown: sim vs real", breakdownStages, breakdownBars()...)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "ttft_breakdown.png")
	require.NoError(t, SavePNG(path, p))
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	assert.Equal(t, 800, img.Bounds().Dx())
	assert.Equal(t, 500, img.Bounds().Dy())
	checkImage(t, img, 800, 500)
	assert.Equal(t, 0.0, p.Y.Min)
	assert.InDelta(t, 1.08*110, p.Y.Max, 1e-9, "the y axis reaches the higher TTFT mark, above both bars")
}

func TestStackLayers(t *testing.T) {
	t.Parallel()
	layers, err := stackLayers(len(breakdownStages), breakdownBars())
	require.NoError(t, err)
	require.Len(t, layers, 4, "one layer per stage, bottom first")
	assert.Equal(t, plotter.Values{6, 0}, layers[0])
	assert.Equal(t, plotter.Values{75, 70}, layers[2])
	assert.Equal(t, []float64{100, 90}, stackTops(layers))
	assert.Equal(t, 110.0, maxHeight(layers, breakdownBars()))

	marks, err := ttftMarks(breakdownBars())
	require.NoError(t, err)
	assert.Equal(t, plotter.XYs{{X: 0, Y: 100}, {X: 1, Y: 110}}, marks.XYs, "a mark at each bar's TTFT mean")
	assert.Equal(t, []string{"real\nTTFT mean 100.00 ms", "sim\nTTFT mean 110.00 ms"}, barLabels(breakdownBars()))
}

func TestStackLayersRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		bars []BreakdownBar
	}{
		{"too few means", []BreakdownBar{{Name: "a", StageMs: []float64{1}, TTFTMs: 1}}},
		{"negative mean", []BreakdownBar{{Name: "a", StageMs: []float64{1, -1}, TTFTMs: 1}}},
		{"NaN mean", []BreakdownBar{{Name: "a", StageMs: []float64{1, math.NaN()}, TTFTMs: 1}}},
		{"infinite TTFT", []BreakdownBar{{Name: "a", StageMs: []float64{1, 1}, TTFTMs: math.Inf(1)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := TTFTBreakdown("x", []string{"a", "b"}, tt.bars...)
			assert.Error(t, err)
			assert.NotErrorIs(t, err, ErrNoData)
		})
	}
	_, err := TTFTBreakdown("x", nil, BreakdownBar{Name: "a"})
	assert.ErrorIs(t, err, ErrNoData)
	_, err = TTFTBreakdown("x", []string{"a"})
	assert.ErrorIs(t, err, ErrNoData)
}

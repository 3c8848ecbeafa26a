package plots

import (
	"image"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func predictedPanels() []PredictedPanel {
	return []PredictedPanel{
		{Title: "a priori", Series: []PredictedSeries{
			{Name: "TTFT mean", Color: 0, Shape: 0, Measured: []float64{20, 50, 0}, Predicted: []float64{25, 40, 30}},
			{Name: "E2E p99", Color: 2, Shape: 2, Measured: []float64{2000, 16000}, Predicted: []float64{2100, 15000}},
		}},
		{Title: "calibrated", Series: []PredictedSeries{
			{Name: "TTFT mean", Color: 0, Shape: 0, Measured: []float64{50}, Predicted: []float64{52}},
			{Name: "E2E p99", Color: 2, Shape: 2},
		}},
	}
}

// TestPredictedVsMeasured: the panels share one log-log range holding
// every positive point (a zero cannot be on a log axis and is left out),
// the legend names the y = x and ±10 % lines and each metric once, and the
// figure is one panel per prediction plus the legend's strip to the right.
func TestPredictedVsMeasured(t *testing.T) {
	t.Parallel()
	f, err := PredictedVsMeasured("ms", predictedPanels()...)
	require.NoError(t, err)
	require.Len(t, f.plots, 2)
	for _, p := range f.plots {
		assert.InDelta(t, 20/1.25, p.X.Min, 1e-9)
		assert.InDelta(t, 16000*1.25, p.X.Max, 1e-9)
		assert.Equal(t, p.X.Min, p.Y.Min)
		assert.Equal(t, p.X.Max, p.Y.Max)
		assert.Equal(t, "measured (ms)", p.X.Label.Text)
		assert.Equal(t, "predicted (ms)", p.Y.Label.Text)
	}
	assert.Equal(t, []string{"y = x", "±10 %", "TTFT mean", "E2E p99"}, f.entries)
	img := render(t, f)
	assert.Equal(t, 1250, img.Bounds().Dx(), "two panels of 5.2 in and a legend of 2.1 in at 100 dpi")
	assert.Equal(t, 550, img.Bounds().Dy())
	strip := img.(interface {
		SubImage(image.Rectangle) image.Image
	}).SubImage(image.Rect(1250-190, 0, 1250, 550))
	assert.Greater(t, colours(strip, 100), 5, "the legend is drawn in its strip, outside the panels")
}

func TestPredictedVsMeasuredNoData(t *testing.T) {
	t.Parallel()
	_, err := PredictedVsMeasured("ms", PredictedPanel{Title: "none", Series: []PredictedSeries{
		{Name: "TTFT mean", Measured: []float64{0, 10}, Predicted: []float64{5, -1}}}})
	assert.ErrorIs(t, err, ErrNoData)
}

func TestKiloTicks(t *testing.T) {
	var labels []string
	for _, tk := range (kiloTicks{}).Ticks(5, 20000) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	assert.Equal(t, []string{"5", "10", "20", "50", "100", "200", "500", "1k", "2k", "5k", "10k", "20k"}, labels)
}

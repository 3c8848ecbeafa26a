package plots

import (
	"bytes"
	"image"
	"image/png"
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot/vg"
)

func ramp(n int, f func(i int) float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = f(i)
	}
	return v
}

// render encodes f and decodes the PNG back.
func render(t *testing.T, f Figure) image.Image {
	t.Helper()
	var buf bytes.Buffer
	w, h := Size(f)
	require.NoError(t, WritePNG(&buf, f, w, h))
	img, err := png.Decode(&buf)
	require.NoError(t, err)
	return img
}

// colours counts the distinct colours of an image, up to limit.
func colours(img image.Image, limit int) int {
	seen := map[[4]uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y && len(seen) < limit; y++ {
		for x := b.Min.X; x < b.Max.X && len(seen) < limit; x++ {
			r, g, bl, a := img.At(x, y).RGBA()
			seen[[4]uint32{r, g, bl, a}] = true
		}
	}
	return len(seen)
}

func checkImage(t *testing.T, img image.Image, minW, minH int) {
	t.Helper()
	assert.GreaterOrEqual(t, img.Bounds().Dx(), minW)
	assert.GreaterOrEqual(t, img.Bounds().Dy(), minH)
	assert.Greater(t, colours(img, 100), 20, "an image with so few colours is blank")
}

func TestFiguresRender(t *testing.T) {
	t.Parallel()
	ref := ramp(500, func(i int) float64 { return 10 + float64(i%50) })
	cand := ramp(500, func(i int) float64 { return 11 + float64(i%50) + 150*float64(i%97/96) })
	secs := ramp(30, func(i int) float64 { return float64(i) })
	cdf, err := Distribution("CDF", "latency (ms)", Series{"real", ref}, Series{"sim", cand})
	require.NoError(t, err)
	errs, err := Errors("errors", []ErrorBar{{"ttft avg", 4, 10}, {"ttft p99", -30, 20}, {"itl avg", 800, 0}, {"itl p99", 2, 0}})
	require.NoError(t, err)
	sc, err := Scatter("scatter", "ttft (ms)", ref, cand, "real", "sim")
	require.NoError(t, err)
	tl, err := Timelines("gaps", GapTimeline{Name: "sim", Seconds: secs, MeanMs: ramp(30, func(int) float64 { return 10 }),
		MaxMs: ramp(30, func(i int) float64 { return 12 + 200*float64(i%7/6) }), StallAtS: []float64{6.2, 13.5},
		StallGapMs: []float64{212, 212}, ThresholdMs: 50})
	require.NoError(t, err)
	tp, err := ThroughputOverTime("throughput", Throughput{"real", secs, ramp(30, func(i int) float64 { return 100 + float64(i) }), 29.5})
	require.NoError(t, err)
	for name, f := range map[string]Figure{"cdf": cdf, "errors": errs, "scatter": sc, "timeline": tl, "throughput": tp} {
		t.Run(name, func(t *testing.T) {
			checkImage(t, render(t, f), 600, 400)
		})
	}
	w, h := Size(sc)
	assert.Equal(t, 800, int(math.Round(float64(w.Dots(DPI)))), "8 in at 100 DPI")
	assert.Equal(t, 500, int(math.Round(float64(h.Dots(DPI)))))
}

func TestErrorChartGrowsWithBars(t *testing.T) {
	t.Parallel()
	bars := make([]ErrorBar, 60)
	for i := range bars {
		bars[i] = ErrorBar{Label: "stat", ErrorPct: float64(i - 30)}
	}
	e, err := Errors("many", bars)
	require.NoError(t, err)
	_, h := e.Size()
	assert.Greater(t, h, Height)
	assert.Greater(t, int(h.Dots(DPI)), 1500, "60 bars and the legend rows at a quarter inch each")
}

func TestAxisLimitClipsOnlyOutliers(t *testing.T) {
	t.Parallel()
	bars := []ErrorBar{{ErrorPct: 1}, {ErrorPct: -2}, {ErrorPct: 3}, {ErrorPct: 45, BoundPct: 20}, {ErrorPct: 1900}}
	lim := axisLimit(bars)
	assert.InDelta(t, 45*1.1, lim, 1e-9, "1.1 × the 80th percentile: 45 % fits, 1900 % is clipped")
	assert.Equal(t, 10.0, axisLimit([]ErrorBar{{ErrorPct: 0}}))
}

func TestNoData(t *testing.T) {
	t.Parallel()
	_, err := CDF("empty", "x", Series{"a", nil}, Series{"b", []float64{0, 0, -1}})
	assert.ErrorIs(t, err, ErrNoData, "values ≤ 0 cannot go on a log axis")
	_, err = Errors("none", nil)
	assert.ErrorIs(t, err, ErrNoData)
	_, err = Scatter("none", "x", nil, nil, "a", "b")
	assert.ErrorIs(t, err, ErrNoData)
	_, err = Timelines("none", GapTimeline{Name: "a"})
	assert.ErrorIs(t, err, ErrNoData)
	_, err = ThroughputOverTime("none")
	assert.ErrorIs(t, err, ErrNoData)
}

func TestCDFPoints(t *testing.T) {
	t.Parallel()
	xys := cdfXYs([]float64{0, 0, 1, 2, 2, 3})
	require.NotEmpty(t, xys)
	assert.Equal(t, 1.0, xys[0].X)
	assert.InDelta(t, 2.0/6, xys[0].Y, 1e-12, "the curve starts at the share of values < 1")
	last := xys[len(xys)-1]
	assert.Equal(t, 3.0, last.X)
	assert.Equal(t, 1.0, last.Y)
	for _, xy := range xys {
		if xy.X == 2 {
			assert.InDelta(t, 5.0/6, xy.Y, 1e-12, "duplicates counted: F(2) = 5/6")
		}
	}
	tail := tailXYs(xys)
	assert.Equal(t, 3.0, tail[len(tail)-1].X, "the last shelf reaches the largest value")
	assert.InDelta(t, 1.0/6, tail[len(tail)-1].Y, 1e-12)
}

func TestSavePNGErrors(t *testing.T) {
	t.Parallel()
	p, err := CDF("c", "x", Series{"a", []float64{1, 2, 3}})
	require.NoError(t, err)
	assert.Error(t, WritePNG(&bytes.Buffer{}, p, 0, vg.Inch), "vgimg would panic on a zero size")
	assert.Error(t, SavePNG(filepath.Join(t.TempDir(), "missing", "x.png"), p))
	path := filepath.Join(t.TempDir(), "x.png")
	require.NoError(t, SavePNG(path, p))
}

package plots

import (
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// maxScatterPoints caps the points drawn; larger samples are thinned by a
// fixed stride, so the picture is deterministic.
const maxScatterPoints = 20000

// Scatter plots each request's candidate value against its reference value
// with the y = x line: points above it are requests the candidate made
// slower (for latencies). Both axes share one range. There is no legend,
// which could hide outliers: the title says what the line is.
func Scatter(title, label string, ref, cand []float64, refName, candName string) (*plot.Plot, error) {
	n := min(len(ref), len(cand))
	if n == 0 {
		return nil, ErrNoData
	}
	stride := (n + maxScatterPoints - 1) / maxScatterPoints
	xys := make(plotter.XYs, 0, n/stride+1)
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := 0; i < n; i += stride {
		xys = append(xys, plotter.XY{X: ref[i], Y: cand[i]})
		lo, hi = min(lo, ref[i], cand[i]), max(hi, ref[i], cand[i])
	}
	if lo == hi {
		lo, hi = lo-1, hi+1
	}
	title += fmt.Sprintf("\n%d requests; dashed line: y = x (candidate equals reference)", n)
	p := newPlot(title, fmt.Sprintf("%s (reference): %s", refName, label), fmt.Sprintf("%s (candidate): %s", candName, label))
	sc, err := plotter.NewScatter(xys)
	if err != nil {
		return nil, fmt.Errorf("plots: scatter: %w", err)
	}
	sc.GlyphStyle = draw.GlyphStyle{Color: withAlpha(candColor, 160), Radius: vg.Points(2), Shape: draw.CircleGlyph{}}
	diag, err := plotter.NewLine(plotter.XYs{{X: lo, Y: lo}, {X: hi, Y: hi}})
	if err != nil {
		return nil, fmt.Errorf("plots: scatter: %w", err)
	}
	diag.Color = greyColor
	diag.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
	p.Add(plotter.NewGrid(), diag, sc)
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = lo, hi, lo, hi
	return p, nil
}

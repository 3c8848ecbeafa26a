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

// scatterPad widens the shared axis range on each side, as a share of the
// values' range.
const scatterPad = 0.04

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
	// a margin round the points: none sits on the frame, half cut by it
	pad := scatterPad * (hi - lo)
	lo, hi = lo-pad, hi+pad
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

// padAxes widens a plot's data range by share of it on each side (the x
// axis by right more on its right, for point labels), so no point sits on
// the frame. A range of one value is widened by 1 on each side.
func padAxes(p *plot.Plot, share, right float64) {
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		span := ax.Max - ax.Min
		if span <= 0 {
			ax.Min, ax.Max = ax.Min-1, ax.Max+1
			continue
		}
		ax.Min -= share * span
		ax.Max += share * span
	}
	p.X.Max += right * (p.X.Max - p.X.Min)
}

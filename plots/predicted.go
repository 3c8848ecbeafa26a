package plots

import (
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// PredictedSeries is one metric's points in a predicted-against-measured
// figure: one point per case, its measured value (x) and its predicted
// one (y). Series of a family share Color (an index); Shape (an index)
// tells its statistics apart.
type PredictedSeries struct {
	Name                string
	Color, Shape        int
	Measured, Predicted []float64
}

// PredictedPanel is one panel: one way of predicting, every metric.
type PredictedPanel struct {
	Title  string
	Series []PredictedSeries
}

// PredictedFigure is panels side by side with one legend to their right,
// outside the data.
type PredictedFigure struct {
	plots   []*plot.Plot
	legend  plot.Legend
	entries []string // the legend's names, in order
}

// addLegend adds an entry to the legend.
func (f *PredictedFigure) addLegend(name string, thumb plot.Thumbnailer) {
	f.legend.Add(name, thumb)
	f.entries = append(f.entries, name)
}

// predictedLegendWidth is the legend's strip.
const predictedLegendWidth = 2.1 * vg.Inch

// predictedPalette are the metric families' colours.
var predictedPalette = []color.RGBA{refColor, candColor, passColor, stallColor}

// predictedShapes are the statistics' markers: mean, then percentiles.
var predictedShapes = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.TriangleGlyph{}, draw.SquareGlyph{}, draw.CrossGlyph{}}

// Size is one square-ish panel per way of predicting and the legend.
func (f PredictedFigure) Size() (w, h vg.Length) {
	return vg.Length(len(f.plots))*5.2*vg.Inch + predictedLegendWidth, 5.5 * vg.Inch
}

// Draw draws the panels left to right, then the legend in its strip.
func (f PredictedFigure) Draw(c draw.Canvas) {
	main := draw.Crop(c, 0, -predictedLegendWidth, 0, 0)
	tiles := draw.Tiles{Rows: 1, Cols: len(f.plots), PadX: vg.Millimeter * 4, PadTop: vg.Millimeter, PadBottom: vg.Millimeter}
	canvases := plot.Align([][]*plot.Plot{f.plots}, tiles, main)
	for i, p := range f.plots {
		p.Draw(canvases[0][i])
	}
	strip := draw.Crop(c, c.Max.X-c.Min.X-predictedLegendWidth+vg.Millimeter*3, 0, 0, -vg.Inch/2)
	f.legend.Draw(strip)
}

// PredictedVsMeasured draws each panel's predicted values against the
// measured ones on log-log axes that every panel shares, with the y = x
// line (prediction equals measurement) and dotted ±10 % lines: a point
// above the line is over-predicted. unit labels the axes.
func PredictedVsMeasured(unit string, panels ...PredictedPanel) (PredictedFigure, error) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, pn := range panels {
		for _, s := range pn.Series {
			for i := range min(len(s.Measured), len(s.Predicted)) {
				if x, y := s.Measured[i], s.Predicted[i]; x > 0 && y > 0 {
					lo, hi = min(lo, x, y), max(hi, x, y)
				}
			}
		}
	}
	if math.IsInf(lo, 0) {
		return PredictedFigure{}, ErrNoData
	}
	lo, hi = lo/1.25, hi*1.25
	f := PredictedFigure{legend: plot.NewLegend()}
	f.legend.Top, f.legend.Left = true, true
	for k, pn := range panels {
		p := newPlot(pn.Title, fmt.Sprintf("measured (%s)", unit), fmt.Sprintf("predicted (%s)", unit))
		p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
		p.X.Tick.Marker, p.Y.Tick.Marker = kiloTicks{}, kiloTicks{}
		p.Add(plotter.NewGrid())
		if err := f.addDiagonals(p, lo, hi, k == 0); err != nil {
			return PredictedFigure{}, err
		}
		for _, s := range pn.Series {
			sc, err := predictedScatter(s)
			if err != nil {
				return PredictedFigure{}, err
			}
			if sc == nil {
				continue
			}
			p.Add(sc)
			if k == 0 {
				f.addLegend(s.Name, sc)
			}
		}
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = lo, hi, lo, hi // after Add, which widens them to the ±10 % lines
		f.plots = append(f.plots, p)
	}
	return f, nil
}

// addDiagonals draws y = x dashed and y = x ± 10 % dotted; the first panel
// names them in the legend.
func (f *PredictedFigure) addDiagonals(p *plot.Plot, lo, hi float64, name bool) error {
	for _, d := range []struct {
		k      float64
		dashes []vg.Length
		label  string
	}{
		{1, []vg.Length{vg.Points(5), vg.Points(3)}, "y = x"},
		{1.1, []vg.Length{vg.Points(1), vg.Points(3)}, "±10 %"},
		{1 / 1.1, []vg.Length{vg.Points(1), vg.Points(3)}, ""},
	} {
		l, err := plotter.NewLine(plotter.XYs{{X: lo, Y: lo * d.k}, {X: hi, Y: hi * d.k}})
		if err != nil {
			return fmt.Errorf("plots: predicted against measured: %w", err)
		}
		l.Color, l.Dashes = greyColor, d.dashes
		p.Add(l)
		if name && d.label != "" {
			f.addLegend(d.label, l)
		}
	}
	return nil
}

// predictedScatter is s's points with a positive value on both axes; nil
// when there is none.
func predictedScatter(s PredictedSeries) (*plotter.Scatter, error) {
	var xys plotter.XYs
	for i := range min(len(s.Measured), len(s.Predicted)) {
		if x, y := s.Measured[i], s.Predicted[i]; x > 0 && y > 0 {
			xys = append(xys, plotter.XY{X: x, Y: y})
		}
	}
	if len(xys) == 0 {
		return nil, nil
	}
	sc, err := plotter.NewScatter(xys)
	if err != nil {
		return nil, fmt.Errorf("plots: predicted against measured: %s: %w", s.Name, err)
	}
	sc.GlyphStyle = draw.GlyphStyle{Color: withAlpha(predictedPalette[s.Color%len(predictedPalette)], 220), Radius: vg.Points(3.5),
		Shape: predictedShapes[s.Shape%len(predictedShapes)]}
	return sc, nil
}

// kiloTicks are logTicks with thousands written as k (5k, 10k, 20k), so
// that four decades' labels do not run into each other.
type kiloTicks struct{}

func (kiloTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := logTicks{}.Ticks(lo, hi)
	for i, t := range ticks {
		if t.Label != "" && t.Value >= 1000 {
			ticks[i].Label = strconv.FormatFloat(t.Value/1000, 'g', -1, 64) + "k"
		}
	}
	return ticks
}

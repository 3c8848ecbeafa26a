package plots

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// HistoryLine is one statistic's signed error % across validation runs:
// X holds the run numbers where it was measured (1 = oldest), Y the error
// at each. Runs without a value are simply absent.
type HistoryLine struct {
	Name string
	X, Y []float64
}

// ErrorHistory draws the error % of several statistics across validation
// runs: one line with markers per statistic, a zero line and, when
// boundPct > 0, dashed lines at ± the bound.
func ErrorHistory(title string, boundPct float64, lines ...HistoryLine) (*plot.Plot, error) {
	p := newPlot(title, "validation run (oldest → newest)", "signed error % (simulated vs real)")
	lo, hi, drawn := math.Inf(1), math.Inf(-1), 0
	for i, l := range lines {
		n := min(len(l.X), len(l.Y))
		if n == 0 {
			continue
		}
		xys := make(plotter.XYs, n)
		for j := range n {
			xys[j] = plotter.XY{X: l.X[j], Y: l.Y[j]}
			lo, hi = min(lo, l.X[j]), max(hi, l.X[j])
		}
		if err := addHistoryLine(p, l.Name, xys, i); err != nil {
			return nil, err
		}
		drawn++
	}
	if drawn == 0 {
		return nil, ErrNoData
	}
	if lo == hi { // one run: give the axis some width
		lo, hi = lo-0.5, hi+0.5
	}
	if err := addLevel(p, lo, hi, 0, color.Gray{Y: 80}, nil); err != nil {
		return nil, err
	}
	for _, b := range []float64{-boundPct, boundPct} {
		if boundPct > 0 {
			if err := addLevel(p, lo, hi, b, stallColor, []vg.Length{vg.Points(4), vg.Points(3)}); err != nil {
				return nil, err
			}
		}
	}
	p.X.Tick.Marker = integerTicks{}
	p.Add(plotter.NewGrid())
	padAxes(p, scatterPad, 0) // the first and last runs' markers off the frame
	return p, nil
}

func addHistoryLine(p *plot.Plot, name string, xys plotter.XYs, i int) error {
	l, s, err := plotter.NewLinePoints(xys)
	if err != nil {
		return fmt.Errorf("plots: history of %s: %w", name, err)
	}
	l.Color, s.Color = plotutil.Color(i), plotutil.Color(i)
	l.Width = vg.Points(1.5)
	l.Dashes = plotutil.Dashes(i / len(plotutil.DefaultColors))
	s.Shape = plotutil.Shape(i)
	p.Add(l, s)
	p.Legend.Add(name, l, s)
	return nil
}

// addLevel draws a horizontal line at y from x = lo to hi.
func addLevel(p *plot.Plot, lo, hi, y float64, c color.Color, dashes []vg.Length) error {
	l, err := plotter.NewLine(plotter.XYs{{X: lo, Y: y}, {X: hi, Y: y}})
	if err != nil {
		return fmt.Errorf("plots: level line: %w", err)
	}
	l.Color, l.Dashes = c, dashes
	p.Add(l)
	return nil
}

// integerTicks labels whole run numbers only, at most about ten of them.
type integerTicks struct{}

func (integerTicks) Ticks(lo, hi float64) []plot.Tick {
	first, last := math.Ceil(lo), math.Floor(hi)
	step := math.Max(1, math.Ceil((last-first+1)/10))
	var ticks []plot.Tick
	for v := first; v <= last; v += step {
		ticks = append(ticks, plot.Tick{Value: v, Label: fmt.Sprint(v)})
	}
	return ticks
}

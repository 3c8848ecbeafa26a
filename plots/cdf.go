package plots

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// cdfPoints is how many points draw one CDF: enough for a smooth step line
// at 960 pixels, however many values there are.
const cdfPoints = 2000

// Series is one named sample of values.
type Series struct {
	Name   string
	Values []float64
}

// CDF overlays the empirical CDFs of the series on a log x axis. Values ≤ 0
// cannot be placed on a log axis: they are left out of the line but not of
// the fractions, so a curve starts at the share of such values. Each series
// is sorted in place.
func CDF(title, xLabel string, series ...Series) (*plot.Plot, error) {
	p := newPlot(title, xLabel+", log scale", "fraction of values ≤ x")
	p.Legend.Top, p.Legend.Left = false, false // bottom right: where a CDF is empty
	p.Y.Min, p.Y.Max = 0, 1
	drawn := 0
	for i, s := range series {
		xys := cdfXYs(s.Values)
		if len(xys) == 0 {
			continue
		}
		l, err := stepLine(xys, SeriesColor(i), vg.Points(1.5))
		if err != nil {
			return nil, fmt.Errorf("plots: CDF of %s: %w", s.Name, err)
		}
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("%s (n=%d)", s.Name, len(s.Values)), l)
		drawn++
	}
	if drawn == 0 {
		return nil, ErrNoData
	}
	p.Add(plotter.NewGrid())
	setLogX(p)
	return p, nil
}

// Tail overlays the series' tail distributions, the fraction of values
// greater than x, on log-log axes: where a CDF's last per mille is a
// flat line at 1, the tail shows rare long values, such as token-gap
// stalls, as a visible shelf. Each series is sorted in place.
func Tail(title, xLabel string, series ...Series) (*plot.Plot, error) {
	// Short y label: gonum places a rotated axis label at the arithmetic
	// middle of the range, which sits near the top of a log axis and pads
	// the plot by the label's length.
	p := newPlot(title, xLabel+", log scale", "fraction > x")
	p.Legend.Top, p.Legend.Left = false, true // bottom left: where a tail is empty
	drawn := 0
	for i, s := range series {
		xys := tailXYs(cdfXYs(s.Values))
		if len(xys) == 0 {
			continue
		}
		l, err := stepLine(xys, SeriesColor(i), vg.Points(1.5))
		if err != nil {
			return nil, fmt.Errorf("plots: tail of %s: %w", s.Name, err)
		}
		p.Add(l)
		p.Legend.Add(s.Name, l)
		drawn++
	}
	if drawn == 0 {
		return nil, ErrNoData
	}
	p.Add(plotter.NewGrid())
	setLogX(p)
	setLogY(p)
	p.Y.Min, p.Y.Max = p.Y.Min/5, 1 // lift the last shelf off the axis, above the legend
	return p, nil
}

// tailXYs turns CDF points into 1 − F. A log axis cannot show the final
// 0, so the last step is drawn to the largest value at its own height.
func tailXYs(cdf plotter.XYs) plotter.XYs {
	out := make(plotter.XYs, 0, len(cdf))
	for _, xy := range cdf {
		y := 1 - xy.Y
		if y > 1e-12 {
			out = append(out, plotter.XY{X: xy.X, Y: y})
			continue
		}
		if len(out) > 0 && xy.X > out[len(out)-1].X {
			out = append(out, plotter.XY{X: xy.X, Y: out[len(out)-1].Y})
		}
		break
	}
	return out
}

// Distribution stacks a series' CDF (top) and its tail (bottom) in one
// figure.
func Distribution(title, xLabel string, series ...Series) (Panels, error) {
	cdf, err := CDF(title, xLabel, series...)
	if err != nil {
		return Panels{}, err
	}
	tail, err := Tail("Its tail, log–log: rare long values show as shelves", xLabel, series...)
	if errors.Is(err, ErrNoData) { // every value equal: no tail to show
		return Panels{Plots: []*plot.Plot{cdf}, PanelHeight: Height}, nil
	}
	if err != nil {
		return Panels{}, err
	}
	return Panels{Plots: []*plot.Plot{cdf, tail}, PanelHeight: 3.5 * vg.Inch}, nil
}

// cdfXYs samples the empirical CDF at up to cdfPoints ranks: x is a value,
// y the fraction of values ≤ x.
func cdfXYs(values []float64) plotter.XYs {
	slices.Sort(values)
	n := len(values)
	if n == 0 {
		return nil
	}
	m := min(n, cdfPoints)
	xys := make(plotter.XYs, 0, m+1)
	for k := 0; k < m; k++ {
		idx := n - 1
		if m > 1 {
			idx = int(math.Round(float64(k) * float64(n-1) / float64(m-1)))
		}
		x := values[idx]
		// y counts every value ≤ x, duplicates included
		idx = sort.SearchFloat64s(values, math.Nextafter(x, math.Inf(1))) - 1
		if x <= 0 || math.IsNaN(x) || math.IsInf(x, 0) {
			continue
		}
		if len(xys) > 0 && xys[len(xys)-1].X == x {
			continue
		}
		if len(xys) == 0 { // rise from the share of smaller values
			below := sort.SearchFloat64s(values, x)
			xys = append(xys, plotter.XY{X: x, Y: float64(below) / float64(n)})
		}
		xys = append(xys, plotter.XY{X: x, Y: float64(idx+1) / float64(n)})
	}
	return xys
}

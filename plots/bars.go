package plots

import (
	"fmt"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// ErrorBar is one bar of the error chart: a signed error % and, when the
// statistic is gated, its bound.
type ErrorBar struct {
	Label    string
	ErrorPct float64
	BoundPct float64 // 0 when not gated
}

// barPitch is the height one bar takes; the figure grows with the bars.
const barPitch = vg.Inch / 4

// ErrorChart is a horizontal bar chart of signed error % per statistic,
// with dashed lines at every distinct ± bound. Bars within their bound are
// green, breaches red, ungated bars grey. It is taller than the default
// figure when there are many bars (see Size).
type ErrorChart struct {
	*plot.Plot
	bars int
}

// Size makes room for every bar.
func (e ErrorChart) Size() (w, h vg.Length) {
	return Width, max(Height, vg.Length(e.bars)*barPitch+2*vg.Inch)
}

// Draw draws the chart.
func (e ErrorChart) Draw(c draw.Canvas) { e.Plot.Draw(c) }

// Errors draws the error chart; bars are listed top to bottom.
func Errors(title string, bars []ErrorBar) (ErrorChart, error) {
	if len(bars) == 0 {
		return ErrorChart{}, ErrNoData
	}
	p := newPlot(title, "signed error % = (candidate − reference) / reference × 100", "")
	p.Legend.Left = false
	rev := slices.Clone(bars) // the first bar at the top
	slices.Reverse(rev)
	lim := axisLimit(bars)
	groups := []struct {
		name string
		col  color.Color
		keep func(ErrorBar) bool
	}{
		{"within bound", passColor, func(b ErrorBar) bool { return b.BoundPct > 0 && math.Abs(b.ErrorPct) <= b.BoundPct }},
		{"bound breached", stallColor, func(b ErrorBar) bool { return b.BoundPct > 0 && math.Abs(b.ErrorPct) > b.BoundPct }},
		{"not gated", greyColor, func(b ErrorBar) bool { return b.BoundPct == 0 }},
	}
	for _, g := range groups {
		if err := addBarGroup(p, rev, lim, g.name, g.col, g.keep); err != nil {
			return ErrorChart{}, err
		}
	}
	if err := addBounds(p, rev); err != nil {
		return ErrorChart{}, err
	}
	p.X.Min, p.X.Max = -lim, lim
	if err := addValueLabels(p, rev, lim); err != nil {
		return ErrorChart{}, err
	}
	labels := make([]string, len(rev))
	for i, b := range rev {
		labels[i] = b.Label
	}
	p.NominalY(labels...)
	p.Add(plotter.NewGrid())
	return ErrorChart{Plot: p, bars: len(rev)}, nil
}

// axisLimit is the half-width of the symmetric error axis. It starts wide
// enough for 1.5 × the largest bound and for 80 % of the bars (at least
// ±10 %), then widens to fit every bar up to 3 × that. Bars beyond are
// clipped and labelled with their value, so one wild statistic does not
// flatten all the others.
func axisLimit(bars []ErrorBar) float64 {
	abs := make([]float64, 0, len(bars))
	bound := 0.0
	for _, b := range bars {
		abs = append(abs, math.Abs(b.ErrorPct))
		bound = max(bound, b.BoundPct)
	}
	slices.Sort(abs)
	p80 := abs[int(0.8*float64(len(abs)-1))]
	base := max(1.5*bound, 1.1*p80, 10)
	lim := base
	for _, a := range abs {
		if a <= 3*base {
			lim = max(lim, 1.05*a)
		}
	}
	return lim
}

// minBarShare is the shortest bar drawn, as a share of the axis'
// half-width: a non-zero error never vanishes into the zero line (its
// label gives the value).
const minBarShare = 0.008

// barLength is the drawn length of an error: at least minBarShare of the
// axis when it is not zero.
func barLength(e, lim float64) float64 {
	if e == 0 || math.Abs(e) >= minBarShare*lim {
		return e
	}
	return math.Copysign(minBarShare*lim, e)
}

// insideShare is how long a bar must be, as a share of the axis'
// half-width, for its value label to go inside it (in white): shorter
// bars have it outside their end.
const insideShare = 0.55

// valueLabel is an error % as its bar's label: two decimals, two
// significant digits below 0.01 % ("+0.004 %", never "+0.00 %" for a
// non-zero error).
func valueLabel(e float64) string {
	switch {
	case e == 0:
		return "0.00 %"
	case math.Abs(e) < 0.01:
		return fmt.Sprintf("%+.2g %%", e)
	}
	return fmt.Sprintf("%+.2f %%", e)
}

// addValueLabels writes every bar's value at its end: outside a short bar,
// inside a long one, at the axis edge for a bar clipped there.
func addValueLabels(p *plot.Plot, bars []ErrorBar, lim float64) error {
	var l plotter.XYLabels
	var styles []text.Style
	pad := 0.01 * lim
	for i, b := range bars {
		x, right := barLength(b.ErrorPct, lim), b.ErrorPct < 0
		sty := text.Style{Color: color.Black, YAlign: text.YCenter}
		label := valueLabel(b.ErrorPct)
		switch {
		case math.Abs(b.ErrorPct) > lim: // clipped
			x, right, label = math.Copysign(0.98*lim, b.ErrorPct), b.ErrorPct > 0, fmt.Sprintf("%+.0f %%", b.ErrorPct)
			sty.Color = color.White
		case math.Abs(x) > insideShare*lim:
			x, right = x-math.Copysign(pad, x), !right
			sty.Color = color.White
		default:
			x += math.Copysign(pad, b.ErrorPct)
		}
		if right {
			sty.XAlign = text.XRight
		}
		l.XYs = append(l.XYs, plotter.XY{X: x, Y: float64(i)})
		l.Labels = append(l.Labels, label)
		styles = append(styles, sty)
	}
	labels, err := plotter.NewLabels(l)
	if err != nil {
		return fmt.Errorf("plots: value labels: %w", err)
	}
	for i := range labels.TextStyle {
		font := labels.TextStyle[i].Font
		labels.TextStyle[i] = styles[i]
		labels.TextStyle[i].Font, labels.TextStyle[i].Handler = font, plot.DefaultTextHandler
		labels.TextStyle[i].Font.Size = vg.Points(8)
	}
	p.Add(labels)
	return nil
}

// addBarGroup adds the bars that keep selects, zero elsewhere: a chart per
// colour, drawn without outlines so the zero bars are invisible.
func addBarGroup(p *plot.Plot, bars []ErrorBar, lim float64, name string, col color.Color, keep func(ErrorBar) bool) error {
	vals := make(plotter.Values, len(bars))
	n := 0
	for i, b := range bars {
		if keep(b) {
			vals[i] = barLength(b.ErrorPct, lim)
			n++
		}
	}
	if n == 0 {
		return nil
	}
	bc, err := plotter.NewBarChart(vals, barPitch*0.7)
	if err != nil {
		return fmt.Errorf("plots: error bars: %w", err)
	}
	bc.Horizontal = true
	bc.Color = col
	bc.LineStyle.Width = 0
	p.Add(bc)
	p.Legend.Add(name, bc)
	return nil
}

// addBounds draws a dashed vertical line pair at ± every distinct bound.
func addBounds(p *plot.Plot, bars []ErrorBar) error {
	var bounds []float64
	for _, b := range bars {
		if b.BoundPct > 0 && !slices.Contains(bounds, b.BoundPct) {
			bounds = append(bounds, b.BoundPct)
		}
	}
	slices.Sort(bounds)
	bottom, top := -0.5, float64(len(bars))-0.5
	for i, b := range bounds {
		for _, x := range []float64{-b, b} {
			l, err := plotter.NewLine(plotter.XYs{{X: x, Y: bottom}, {X: x, Y: top}})
			if err != nil {
				return fmt.Errorf("plots: bound line: %w", err)
			}
			l.Color = color.Black
			l.Dashes = []vg.Length{vg.Points(4 + 3*float64(i)), vg.Points(3)}
			p.Add(l)
			if x > 0 {
				p.Legend.Add(fmt.Sprintf("±%g %% bound", b), l)
			}
		}
	}
	return nil
}

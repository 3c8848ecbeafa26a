package plots

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// SweepPoint is one load of a load sweep in a trade-off panel: a latency
// (X, lower is better) and a throughput (Y, higher is better) at Load.
type SweepPoint struct {
	Load, X, Y float64
}

// SweepSide is one side of a load-sweep comparison in one panel: its
// points in load order.
type SweepSide struct {
	Name   string
	Points []SweepPoint
}

// SweepPanel is one trade-off of both sides.
type SweepPanel struct {
	Title, XLabel, YLabel string
	Sides                 []SweepSide
}

// SweepTradeoffs draws one panel per trade-off, stacked: each side's
// points joined in load order in its colour (reference blue, candidate
// orange), each point labelled with its load; the points on the side's
// Pareto front (no other point of the side has both a lower latency and
// a higher throughput) are filled, the dominated ones hollow.
func SweepTradeoffs(panels ...SweepPanel) (Panels, error) {
	out := Panels{PanelHeight: Height}
	for _, sp := range panels {
		p, err := sweepPanel(sp)
		if err != nil {
			return out, err
		}
		if p != nil {
			out.Plots = append(out.Plots, p)
		}
	}
	if len(out.Plots) == 0 {
		return out, ErrNoData
	}
	return out, nil
}

func sweepPanel(sp SweepPanel) (*plot.Plot, error) {
	p := newPlot(sp.Title+"\nlabels: load; filled: on the side's Pareto front, hollow: dominated", sp.XLabel, sp.YLabel)
	p.Add(plotter.NewGrid())
	drawn := 0
	for i, side := range sp.Sides {
		if len(side.Points) == 0 {
			continue
		}
		if err := addSweepSide(p, side, SeriesColor(i)); err != nil {
			return nil, fmt.Errorf("plots: sweep %s: %w", side.Name, err)
		}
		drawn++
	}
	if drawn == 0 {
		return nil, nil
	}
	padAxes(p, scatterPad, 0.04) // off the frame, room for the rightmost load labels
	p.Legend.Left, p.Legend.Top = true, true
	return p, nil
}

func addSweepSide(p *plot.Plot, side SweepSide, c color.Color) error {
	xys := make(plotter.XYs, len(side.Points))
	labels := make([]string, len(side.Points))
	var front, dominated plotter.XYs
	for i, pt := range side.Points {
		xys[i] = plotter.XY{X: pt.X, Y: pt.Y}
		labels[i] = strconv.FormatFloat(pt.Load, 'g', 4, 64)
		if onFront(side.Points, i) {
			front = append(front, xys[i])
		} else {
			dominated = append(dominated, xys[i])
		}
	}
	line, err := plotter.NewLine(xys)
	if err != nil {
		return err
	}
	line.Color, line.Width = c, vg.Points(1.5)
	p.Add(line)
	p.Legend.Add(side.Name, line)
	for _, g := range []struct {
		xys   plotter.XYs
		shape draw.GlyphDrawer
	}{{front, draw.CircleGlyph{}}, {dominated, draw.RingGlyph{}}} {
		if len(g.xys) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(g.xys)
		if err != nil {
			return err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: c, Radius: vg.Points(4), Shape: g.shape}
		p.Add(sc)
	}
	lb, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels})
	if err != nil {
		return err
	}
	for i := range lb.TextStyle {
		lb.TextStyle[i].Color = c
	}
	lb.Offset = vg.Point{X: vg.Points(6), Y: vg.Points(-3)}
	p.Add(lb)
	return nil
}

// onFront reports whether no other point has X ≤ and Y ≥ point i's with
// one of them strict.
func onFront(pts []SweepPoint, i int) bool {
	a := pts[i]
	for j, b := range pts {
		if j != i && b.X <= a.X && b.Y >= a.Y && (b.X < a.X || b.Y > a.Y) {
			return false
		}
	}
	return true
}

// AttainmentSide is one side's SLO attainment (good requests / valid
// requests, 0–1) per load, in load order, and its capacity estimate (nil
// when it has none).
type AttainmentSide struct {
	Name       string
	Loads      []float64
	Attainment []float64
	Capacity   *float64
}

// Attainment draws each side's SLO attainment against the load, the
// required attainment as a dashed red line and each side's capacity
// estimate as a dotted vertical line in its colour. The load axis is
// logarithmic (base 2 ticks at the loads) when the loads span 4× or more.
func Attainment(title, loadLabel string, required float64, sides ...AttainmentSide) (*plot.Plot, error) {
	p := newPlot(title+"\nbetween loads, attainment linear in the load (as the capacity estimate interpolates it)", loadLabel,
		"SLO attainment (good / valid requests)")
	var loads []float64
	for i, s := range sides {
		n := min(len(s.Loads), len(s.Attainment))
		if n == 0 {
			continue
		}
		xys := make(plotter.XYs, n)
		for j := range n {
			xys[j] = plotter.XY{X: s.Loads[j], Y: s.Attainment[j]}
		}
		loads = append(loads, s.Loads[:n]...)
		l, err := plotter.NewLine(linearInLoad(xys))
		if err != nil {
			return nil, fmt.Errorf("plots: attainment of %s: %w", s.Name, err)
		}
		pts, err := plotter.NewScatter(xys)
		if err != nil {
			return nil, fmt.Errorf("plots: attainment of %s: %w", s.Name, err)
		}
		// The first side is drawn wider and first, so that where the sides
		// agree its colour still shows around the second's.
		l.Color, l.Width = SeriesColor(i), vg.Points(1.5+2*float64(1-min(i, 1)))
		pts.GlyphStyle = draw.GlyphStyle{Color: SeriesColor(i), Radius: vg.Points(3.5 + 1.5*float64(1-min(i, 1))), Shape: draw.CircleGlyph{}}
		p.Add(l, pts)
		p.Legend.Add(s.Name, l, pts)
	}
	if len(loads) == 0 {
		return nil, ErrNoData
	}
	slices.Sort(loads)
	loads = slices.Compact(loads)
	lo, hi := loads[0], loads[len(loads)-1]
	if lo == hi {
		lo, hi = lo*0.9, hi*1.1+0.1
	}
	if loads[0] > 0 && hi/lo >= 4 {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = loadTicks(loads)
	}
	if err := addLevel(p, lo, hi, required, stallColor, []vg.Length{vg.Points(6), vg.Points(3)}); err != nil {
		return nil, err
	}
	p.Legend.Add(fmt.Sprintf("required attainment %g", required), dashedLegend(stallColor))
	for i, s := range sides {
		if s.Capacity == nil || !(*s.Capacity > 0) || math.IsInf(*s.Capacity, 0) {
			continue
		}
		l, err := plotter.NewLine(plotter.XYs{{X: *s.Capacity, Y: 0}, {X: *s.Capacity, Y: 1.05}})
		if err != nil {
			return nil, fmt.Errorf("plots: capacity of %s: %w", s.Name, err)
		}
		l.Color, l.Dashes, l.Width = SeriesColor(i), []vg.Length{vg.Points(2), vg.Points(2)}, vg.Points(1+1.5*float64(1-min(i, 1)))
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("%s capacity ≈ %.3g", s.Name, *s.Capacity), l)
	}
	// off the frame: the first and last loads, attainment 0 and 1
	p.Y.Min, p.Y.Max = -0.05, 1.05
	if _, log := p.X.Scale.(plot.LogScale); log {
		f := math.Pow(p.X.Max/p.X.Min, scatterPad)
		p.X.Min, p.X.Max = p.X.Min/f, p.X.Max*f
	} else {
		pad := scatterPad * (p.X.Max - p.X.Min)
		p.X.Min, p.X.Max = p.X.Min-pad, p.X.Max+pad
	}
	p.Y.Tick.Marker = plot.ConstantTicks{{Value: 0, Label: "0"}, {Value: 0.25, Label: "0.25"}, {Value: 0.5, Label: "0.5"},
		{Value: 0.75, Label: "0.75"}, {Value: 1, Label: "1"}}
	p.Legend.Left = true
	p.Add(plotter.NewGrid())
	return p, nil
}

// linearInLoad samples the straight segments between the points finely,
// so that on a logarithmic load axis the line still shows attainment
// interpolated linearly in the load, as the capacity estimate is, and the
// estimate's line crosses it where it meets the required attainment.
func linearInLoad(xys plotter.XYs) plotter.XYs {
	const steps = 32
	out := plotter.XYs{xys[0]}
	for i := 1; i < len(xys); i++ {
		a, b := xys[i-1], xys[i]
		for k := 1; k <= steps; k++ {
			f := float64(k) / steps
			out = append(out, plotter.XY{X: a.X + f*(b.X-a.X), Y: a.Y + f*(b.Y-a.Y)})
		}
	}
	return out
}

// dashedLegend is a legend thumbnail of a dashed line.
func dashedLegend(c color.Color) plot.Thumbnailer {
	return &plotter.Line{LineStyle: draw.LineStyle{Color: c, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(6), vg.Points(3)}}}
}

// loadTicks labels a logarithmic load axis at the loads themselves.
type loadTicks []float64

func (t loadTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for _, v := range t {
		if v >= lo && v <= hi {
			ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', 4, 64)})
		}
	}
	return ticks
}

package plots

import (
	"cmp"
	"fmt"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// ParetoPoint is one configuration of a sweep in one panel; Front marks it
// as on the panel's Pareto front (computed by the caller).
type ParetoPoint struct {
	X, Y  float64
	Front bool
}

// ParetoPanel is one trade-off: a latency (X, lower is better) against a
// throughput (Y, higher is better).
type ParetoPanel struct {
	Title, XLabel, YLabel string
	Points                []ParetoPoint
}

// Pareto draws one panel per trade-off, stacked: every configuration as a
// grey dot, the front's configurations in orange joined by a line.
func Pareto(panels ...ParetoPanel) (Panels, error) {
	out := Panels{PanelHeight: Height}
	for _, pp := range panels {
		p, err := paretoPanel(pp)
		if err != nil {
			return out, err
		}
		out.Plots = append(out.Plots, p)
	}
	if len(out.Plots) == 0 {
		return out, ErrNoData
	}
	return out, nil
}

func paretoPanel(pp ParetoPanel) (*plot.Plot, error) {
	if len(pp.Points) == 0 {
		return nil, ErrNoData
	}
	var all, front plotter.XYs
	for _, pt := range pp.Points {
		all = append(all, plotter.XY{X: pt.X, Y: pt.Y})
		if pt.Front {
			front = append(front, plotter.XY{X: pt.X, Y: pt.Y})
		}
	}
	slices.SortFunc(front, func(a, b plotter.XY) int { return cmp.Or(cmp.Compare(a.X, b.X), cmp.Compare(a.Y, b.Y)) })
	title := fmt.Sprintf("%s\n%d configurations, %d on the Pareto front (orange)", pp.Title, len(all), len(front))
	p := newPlot(title, pp.XLabel, pp.YLabel)
	sc, err := plotter.NewScatter(all)
	if err != nil {
		return nil, fmt.Errorf("plots: pareto: %w", err)
	}
	sc.GlyphStyle = draw.GlyphStyle{Color: greyColor, Radius: vg.Points(2.5), Shape: draw.CircleGlyph{}}
	p.Add(plotter.NewGrid(), sc)
	if len(front) > 0 {
		line, points, err := plotter.NewLinePoints(front)
		if err != nil {
			return nil, fmt.Errorf("plots: pareto: %w", err)
		}
		line.Color = candColor
		points.GlyphStyle = draw.GlyphStyle{Color: candColor, Radius: vg.Points(3.5), Shape: draw.CircleGlyph{}}
		p.Add(line, points)
	}
	padAxes(p, scatterPad, 0)
	return p, nil
}

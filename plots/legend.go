package plots

import (
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// legendGap separates a legend from the data area below it and the title
// above it.
const legendGap = vg.Inch / 18 // 4 pt

// legendsOutside is f with every panel's legend out of its data area: in a
// band between the title and the data, so no legend hides a line or a
// point. The plots are shallow copies: f itself is unchanged.
func legendsOutside(f Figure) Figure {
	switch v := f.(type) {
	case *plot.Plot:
		return legendAbove(v)
	case Panels:
		out := Panels{PanelHeight: v.PanelHeight, Plots: make([]*plot.Plot, len(v.Plots))}
		for i, p := range v.Plots {
			out.Plots[i] = legendAbove(p)
		}
		return out
	case ErrorChart:
		v.Plot = legendAbove(v.Plot)
		return v
	}
	return f
}

// legendAbove moves p's legend above its data area, into room the title's
// padding makes; a plot without a legend or a title is returned as it is.
func legendAbove(p *plot.Plot) *plot.Plot {
	h := p.Legend.Rectangle(draw.Canvas{}).Size().Y
	if h == 0 || p.Title.Text == "" {
		return p
	}
	cp := *p
	cp.Legend.Top = true
	cp.Legend.YOffs = h + legendGap
	cp.Title.Padding += h + 2*legendGap
	return &cp
}

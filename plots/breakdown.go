package plots

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// BreakdownBar is one run of the stacked TTFT breakdown chart.
type BreakdownBar struct {
	Name string
	// StageMs is the run's mean per stage in ms, one per stage name, 0 for
	// a stage the run does not have.
	StageMs []float64
	// TTFTMs is the run's TTFT mean, marked across its bar: where the
	// stages do not add up to it, the mark and the top of the bar part.
	TTFTMs float64
}

// breakdownBarWidth is the width of each stacked bar.
const breakdownBarWidth = vg.Inch * 1.1

// stagePalette colours the stages: matplotlib's tab20, the ten dark
// colours first so that neighbouring stages differ in hue, cycled beyond
// 20 stages.
var stagePalette = []color.RGBA{
	{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255},
	{148, 103, 189, 255}, {140, 86, 75, 255}, {227, 119, 194, 255}, {127, 127, 127, 255},
	{188, 189, 34, 255}, {23, 190, 207, 255},
	{174, 199, 232, 255}, {255, 187, 120, 255}, {152, 223, 138, 255}, {255, 152, 150, 255},
	{197, 176, 213, 255}, {196, 156, 148, 255}, {247, 182, 210, 255}, {199, 199, 199, 255},
	{219, 219, 141, 255}, {158, 218, 229, 255},
}

// stageColor is the colour of the i-th stage.
func stageColor(i int) color.Color { return stagePalette[i%len(stagePalette)] }

// TTFTBreakdown draws one bar per run, stacked by stage mean (the first
// stage at the bottom), one colour per stage with a legend, and each run's
// TTFT mean marked by a black line across its bar.
func TTFTBreakdown(title string, stages []string, bars ...BreakdownBar) (*plot.Plot, error) {
	layers, err := stackLayers(len(stages), bars)
	if err != nil {
		return nil, err
	}
	p := newPlot(title, "", "stage mean (ms)")
	p.Legend.Left = false
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	grid := plotter.NewGrid()
	grid.Vertical.Width = 0 // no lines through the bars
	p.Add(grid)
	var below *plotter.BarChart
	charts := make([]*plotter.BarChart, len(stages))
	for i, vals := range layers {
		bc, err := plotter.NewBarChart(vals, breakdownBarWidth)
		if err != nil {
			return nil, fmt.Errorf("plots: stage %s: %w", stages[i], err)
		}
		bc.Color = stageColor(i)
		bc.LineStyle.Width = vg.Points(0.5)
		bc.LineStyle.Color = color.White
		if below != nil {
			bc.StackOn(below)
		}
		below, charts[i] = bc, bc
		p.Add(bc)
	}
	marks, err := ttftMarks(bars)
	if err != nil {
		return nil, err
	}
	p.Add(marks)
	// the legend shows a short line, not the bar-wide glyph
	p.Legend.Add("TTFT mean", &plotter.Line{LineStyle: ttftMarkStyle})
	for i := len(charts) - 1; i >= 0; i-- { // top stage first, as stacked
		p.Legend.Add(stages[i], charts[i])
	}
	p.NominalX(barLabels(bars)...)
	p.X.Min, p.X.Max = -0.6, float64(len(bars))-0.4 // the legend is above the data
	p.Y.Min, p.Y.Max = 0, 1.08*maxHeight(layers, bars)
	return p, nil
}

// stackLayers turns the bars into one layer per stage, holding that
// stage's mean in every bar, bottom layer first. Values must be finite and
// not negative: stage durations cannot be.
func stackLayers(stages int, bars []BreakdownBar) ([]plotter.Values, error) {
	if stages == 0 || len(bars) == 0 {
		return nil, ErrNoData
	}
	layers := make([]plotter.Values, stages)
	for s := range layers {
		layers[s] = make(plotter.Values, len(bars))
	}
	for b, bar := range bars {
		if len(bar.StageMs) != stages {
			return nil, fmt.Errorf("plots: %s: %d stage means for %d stages", bar.Name, len(bar.StageMs), stages)
		}
		if !finiteNonNeg(bar.TTFTMs) {
			return nil, fmt.Errorf("plots: %s: TTFT mean %v", bar.Name, bar.TTFTMs)
		}
		for s, v := range bar.StageMs {
			if !finiteNonNeg(v) {
				return nil, fmt.Errorf("plots: %s: stage %d mean %v", bar.Name, s, v)
			}
			layers[s][b] = v
		}
	}
	return layers, nil
}

func finiteNonNeg(v float64) bool { return v >= 0 && !math.IsInf(v, 1) }

// stackTops is the top of every bar: its stage means added up.
func stackTops(layers []plotter.Values) []float64 {
	if len(layers) == 0 {
		return nil
	}
	tops := make([]float64, len(layers[0]))
	for _, l := range layers {
		for b, v := range l {
			tops[b] += v
		}
	}
	return tops
}

// maxHeight is the highest bar top or TTFT mark (at least 1 ms, so an
// all-zero chart still has a y range).
func maxHeight(layers []plotter.Values, bars []BreakdownBar) float64 {
	top := 1.0
	for b, t := range stackTops(layers) {
		top = max(top, t, bars[b].TTFTMs)
	}
	return top
}

func barLabels(bars []BreakdownBar) []string {
	out := make([]string, len(bars))
	for i, b := range bars {
		out[i] = fmt.Sprintf("%s\nTTFT mean %.2f ms", b.Name, b.TTFTMs)
	}
	return out
}

// ttftMarks is a horizontal black line across each bar at its TTFT mean.
func ttftMarks(bars []BreakdownBar) (*plotter.Scatter, error) {
	xys := make(plotter.XYs, len(bars))
	for i, b := range bars {
		xys[i] = plotter.XY{X: float64(i), Y: b.TTFTMs}
	}
	s, err := plotter.NewScatter(xys)
	if err != nil {
		return nil, fmt.Errorf("plots: TTFT marks: %w", err)
	}
	s.GlyphStyle = draw.GlyphStyle{Color: color.Black, Radius: breakdownBarWidth/2 + vg.Points(6), Shape: hLineGlyph{}}
	return s, nil
}

// ttftMarkStyle draws the TTFT marks.
var ttftMarkStyle = draw.LineStyle{Color: color.Black, Width: vg.Points(2.5)}

// hLineGlyph is a thick horizontal line as wide as twice the glyph radius.
type hLineGlyph struct{}

// DrawGlyph implements draw.GlyphDrawer.
func (hLineGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	ls := ttftMarkStyle
	ls.Color = sty.Color
	c.StrokeLine2(ls, pt.X-sty.Radius, pt.Y, pt.X+sty.Radius, pt.Y)
}

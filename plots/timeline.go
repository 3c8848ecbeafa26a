package plots

import (
	"errors"
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// GapTimeline is one run's token gaps over time, in 1 s bins, and its
// stalls.
type GapTimeline struct {
	Name        string
	Seconds     []float64 // bin starts, seconds from the run's start
	MeanMs      []float64 // mean gap ending in each bin; 0 = no gap
	MaxMs       []float64 // largest gap ending in each bin
	StallAtS    []float64 // when each stall ended
	StallGapMs  []float64
	ThresholdMs float64
}

// Panels stacks plots vertically into one figure.
type Panels struct {
	Plots       []*plot.Plot
	PanelHeight vg.Length
}

// Size is the default width and one PanelHeight per panel.
func (ps Panels) Size() (w, h vg.Length) { return Width, vg.Length(len(ps.Plots)) * ps.PanelHeight }

// Draw draws the panels top to bottom.
func (ps Panels) Draw(c draw.Canvas) {
	rows := make([][]*plot.Plot, len(ps.Plots))
	for i, p := range ps.Plots {
		rows[i] = []*plot.Plot{p}
	}
	tiles := draw.Tiles{Rows: len(rows), Cols: 1, PadY: vg.Millimeter * 2, PadX: vg.Millimeter, PadTop: vg.Millimeter, PadBottom: vg.Millimeter}
	canvases := plot.Align(rows, tiles, c)
	for i := range rows {
		rows[i][0].Draw(canvases[i][0])
	}
}

// Timelines draws one panel per run: the largest and the mean token gap of
// every second (log y), the stall threshold, and each stall as a red mark.
// The panels share their axis ranges so the runs compare at a glance.
func Timelines(title string, runs ...GapTimeline) (Panels, error) {
	ps := Panels{PanelHeight: 4 * vg.Inch}
	for _, r := range runs {
		p, err := timeline(fmt.Sprintf("%s — %s", title, r.Name), r)
		if errors.Is(err, ErrNoData) {
			continue // a run without token gaps gets no panel
		}
		if err != nil {
			return Panels{}, err
		}
		ps.Plots = append(ps.Plots, p)
	}
	if len(ps.Plots) == 0 {
		return Panels{}, ErrNoData
	}
	shareRanges(ps.Plots)
	for _, p := range ps.Plots {
		logHeadroom(p, 0.65)
	}
	return ps, nil
}

func timeline(title string, r GapTimeline) (*plot.Plot, error) {
	p := newPlot(title+" (log y)", "time from the run's start (s)", "token gap (ms)")
	p.Legend.Left = true
	maxL, err := positiveLine(r.Seconds, r.MaxMs, greyColor)
	if err != nil {
		return nil, err
	}
	meanL, err := positiveLine(r.Seconds, r.MeanMs, refColor)
	if err != nil {
		return nil, err
	}
	if maxL == nil || meanL == nil {
		return nil, ErrNoData
	}
	p.Add(plotter.NewGrid(), maxL, meanL)
	p.Legend.Add("largest gap per second", maxL)
	p.Legend.Add("mean gap per second", meanL)
	if err := addThreshold(p, r); err != nil {
		return nil, err
	}
	if err := addStallMarks(p, r); err != nil {
		return nil, err
	}
	setLogY(p)
	return p, nil
}

// positiveLine draws the points with y > 0 (a log axis cannot show the
// others); nil when there is none.
func positiveLine(xs, ys []float64, col color.Color) (*plotter.Line, error) {
	var xys plotter.XYs
	for i := range min(len(xs), len(ys)) {
		if ys[i] > 0 {
			xys = append(xys, plotter.XY{X: xs[i], Y: ys[i]})
		}
	}
	if len(xys) == 0 {
		return nil, nil
	}
	return stepLine(xys, col, vg.Points(1.2)) // a value holds for its whole second
}

func addThreshold(p *plot.Plot, r GapTimeline) error {
	if r.ThresholdMs <= 0 || len(r.Seconds) == 0 {
		return nil
	}
	end := r.Seconds[len(r.Seconds)-1] + 1
	l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: r.ThresholdMs}, {X: end, Y: r.ThresholdMs}})
	if err != nil {
		return err
	}
	l.Color = stallColor
	l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
	p.Add(l)
	p.Legend.Add(fmt.Sprintf("stall threshold %.1f ms", r.ThresholdMs), l)
	return nil
}

func addStallMarks(p *plot.Plot, r GapTimeline) error {
	xys := make(plotter.XYs, 0, len(r.StallAtS))
	for i := range min(len(r.StallAtS), len(r.StallGapMs)) {
		xys = append(xys, plotter.XY{X: r.StallAtS[i], Y: r.StallGapMs[i]})
	}
	if len(xys) == 0 {
		return nil
	}
	sc, err := plotter.NewScatter(xys)
	if err != nil {
		return err
	}
	sc.GlyphStyle = draw.GlyphStyle{Color: stallColor, Radius: vg.Points(3.5), Shape: draw.TriangleGlyph{}}
	p.Add(sc)
	p.Legend.Add(fmt.Sprintf("stalls (%d)", len(xys)), sc)
	return nil
}

// logHeadroom raises the top of a log y axis so the data fill only the
// bottom share of it, leaving the top for the legend.
func logHeadroom(p *plot.Plot, share float64) {
	if p.Y.Min > 0 && p.Y.Max > p.Y.Min {
		p.Y.Max = p.Y.Min * math.Pow(p.Y.Max/p.Y.Min, 1/share)
	}
}

// shareRanges gives every plot the union of their axis ranges.
func shareRanges(ps []*plot.Plot) {
	x0, x1, y0, y1 := ps[0].X.Min, ps[0].X.Max, ps[0].Y.Min, ps[0].Y.Max
	for _, p := range ps[1:] {
		x0, x1 = min(x0, p.X.Min), max(x1, p.X.Max)
		y0, y1 = min(y0, p.Y.Min), max(y1, p.Y.Max)
	}
	for _, p := range ps {
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = x0, x1, y0, y1
	}
}

func withAlpha(c color.RGBA, a uint8) color.NRGBA {
	return color.NRGBA{R: c.R, G: c.G, B: c.B, A: a}
}

package plots

import (
	"cmp"
	"fmt"
	"image/color"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// GanttTurn is one request of a session: its turn number and its time in
// flight, seconds from the run's start.
type GanttTurn struct {
	Turn         int
	StartS, EndS float64
}

// GanttSession is one session's requests.
type GanttSession struct {
	Name  string
	Turns []GanttTurn
}

// GanttRun is the sessions of one run drawn in one panel.
type GanttRun struct {
	Name     string
	Sessions []GanttSession
}

// Gantt draws one panel per run: a band per session, each request a bar
// labelled with its turn number, concurrent requests (sub-agent branches)
// on lanes of their own within the band, and the time the session has
// nothing in flight (its tool waits) as a grey hatch along the band's foot.
// The panels share their time axis.
func Gantt(title string, runs ...GanttRun) (Panels, error) {
	ps := Panels{}
	var height vg.Length
	for _, r := range runs {
		lanes := 0
		for _, s := range r.Sessions {
			lanes += len(assignLanes(s.Turns)) + 1
		}
		if lanes == 0 {
			continue
		}
		p := newPlot(fmt.Sprintf("%s — %s", title, r.Name), "time from the run's start (s)", "")
		g := &gantt{sessions: r.Sessions, rows: lanes}
		p.Add(g)
		p.Y.Tick.Marker = plot.ConstantTicks(g.ticks())
		p.Y.Min, p.Y.Max = 0, float64(g.rows)
		p.Legend.Add("request (label: turn)", solid{refColor})
		p.Legend.Add("nothing in flight: tool wait", solid{greyColor})
		ps.Plots = append(ps.Plots, p)
		height = max(height, vg.Length(lanes)*vg.Points(22)+2*vg.Inch)
	}
	if len(ps.Plots) == 0 {
		return Panels{}, ErrNoData
	}
	shareX(ps.Plots)
	ps.PanelHeight = height
	return ps, nil
}

// solid is a legend thumbnail filled with its colour.
type solid struct{ col color.Color }

func (s solid) Thumbnail(c *draw.Canvas) {
	c.FillPolygon(s.col, c.ClipPolygonY([]vg.Point{
		{X: c.Min.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Min.X, Y: c.Max.Y}}))
}

func shareX(ps []*plot.Plot) {
	lo, hi := ps[0].X.Min, ps[0].X.Max
	for _, p := range ps[1:] {
		lo, hi = min(lo, p.X.Min), max(hi, p.X.Max)
	}
	for _, p := range ps {
		p.X.Min, p.X.Max = lo, hi
	}
}

// assignLanes puts each turn (in start order) on the first lane free at
// its start; it returns the lanes' turn indices.
func assignLanes(turns []GanttTurn) [][]int {
	order := make([]int, len(turns))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(turns[a].StartS, turns[b].StartS) })
	var lanes [][]int
	var freeAt []float64
	for _, i := range order {
		k := slices.IndexFunc(freeAt, func(f float64) bool { return f <= turns[i].StartS })
		if k < 0 {
			k = len(lanes)
			lanes, freeAt = append(lanes, nil), append(freeAt, 0)
		}
		lanes[k], freeAt[k] = append(lanes[k], i), turns[i].EndS
	}
	return lanes
}

// gantt is the plotter: sessions stacked from the top, one row per lane
// plus a spacer row (rows in all).
type gantt struct {
	sessions []GanttSession
	rows     int
}

type ganttBar struct {
	y0, y1, x0, x1 float64
	label          string
	tool           bool
}

// bars lays the sessions out: request bars and tool-wait hatches.
func (g *gantt) bars() []ganttBar {
	var out []ganttBar
	top := float64(g.rows)
	for _, s := range g.sessions {
		lanes := assignLanes(s.Turns)
		base := top - float64(len(lanes)+1)
		top = base
		for k, lane := range lanes {
			y := base + float64(len(lanes)-k)
			for _, i := range lane {
				t := s.Turns[i]
				out = append(out, ganttBar{y0: y - 0.8, y1: y - 0.1, x0: t.StartS, x1: t.EndS, label: fmt.Sprint(t.Turn)})
			}
		}
		for _, gap := range idle(s.Turns) {
			out = append(out, ganttBar{y0: base + 0.1, y1: base + 0.3, x0: gap[0], x1: gap[1], tool: true})
		}
	}
	return out
}

// idle returns the spans between a session's first start and last end
// during which none of its requests is in flight.
func idle(turns []GanttTurn) [][2]float64 {
	s := slices.Clone(turns)
	slices.SortFunc(s, func(a, b GanttTurn) int { return cmp.Compare(a.StartS, b.StartS) })
	var out [][2]float64
	end := 0.0
	for i, t := range s {
		if i > 0 && t.StartS > end {
			out = append(out, [2]float64{end, t.StartS})
		}
		if i == 0 || t.EndS > end {
			end = t.EndS
		}
	}
	return out
}

// ticks names each session at its band.
func (g *gantt) ticks() []plot.Tick {
	var ticks []plot.Tick
	row := g.rows
	for _, s := range g.sessions {
		n := len(assignLanes(s.Turns))
		ticks = append(ticks, plot.Tick{Value: float64(row) - float64(n+1)/2, Label: s.Name})
		row -= n + 1
	}
	return ticks
}

// Plot draws the bars.
func (g *gantt) Plot(c draw.Canvas, p *plot.Plot) {
	tx, ty := p.Transforms(&c)
	font := plot.DefaultFont
	font.Size = vg.Points(7)
	sty := draw.TextStyle{Color: color.White, Font: font, Handler: plot.DefaultTextHandler,
		XAlign: draw.XCenter, YAlign: draw.YCenter}
	for _, b := range g.bars() {
		x0, x1, y0, y1 := tx(b.x0), tx(b.x1), ty(b.y0), ty(b.y1)
		if x1-x0 < vg.Points(1) {
			x1 = x0 + vg.Points(1)
		}
		col := color.Color(refColor)
		if b.tool {
			col = greyColor
		}
		c.FillPolygon(col, c.ClipPolygonXY([]vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}))
		if b.label != "" && x1-x0 > sty.Width(b.label)+vg.Points(2) {
			c.FillText(sty, vg.Point{X: (x0 + x1) / 2, Y: (y0 + y1) / 2}, b.label)
		}
	}
}

// DataRange is the time span of every request.
func (g *gantt) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax = 0, 0
	first := true
	for _, s := range g.sessions {
		for _, t := range s.Turns {
			if first || t.StartS < xmin {
				xmin = t.StartS
			}
			if first || t.EndS > xmax {
				xmax = t.EndS
			}
			first = false
		}
	}
	return xmin, xmax, 0, float64(g.rows)
}

var _ plot.DataRanger = (*gantt)(nil)

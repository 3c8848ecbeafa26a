package plots

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"
)

// texts draws f as WritePNG does onto a recording canvas and returns
// every string drawn with its position.
func texts(t *testing.T, f Figure) []*recorder.FillString {
	t.Helper()
	rec := &recorder.Canvas{}
	w, h := Size(f)
	legendsOutside(f).Draw(draw.NewCanvas(rec, w, h))
	var out []*recorder.FillString
	for _, a := range rec.Actions {
		if fs, ok := a.(*recorder.FillString); ok {
			out = append(out, fs)
		}
	}
	return out
}

func labels(ticks []plot.Tick) []string {
	var out []string
	for _, tk := range ticks {
		if tk.Label != "" {
			out = append(out, tk.Label)
		}
	}
	return out
}

// TestTidyTicks: integers as integers, no padding zeros (DefaultTicks
// labels 0–7600 "0.00 2500.00 5000.00 7500.00"), fine steps with their
// digits.
func TestTidyTicks(t *testing.T) {
	for _, tt := range []struct {
		lo, hi float64
		want   []string
	}{
		{0, 7600, []string{"0", "2500", "5000", "7500"}},
		{0, 1, []string{"0", "0.5", "1"}},
		{29.4, 32.9, []string{"29.5", "31", "32.5"}},
		{0.1, 0.9, []string{"0.1", "0.3", "0.5", "0.7", "0.9"}},
		{18.3, 18.46, []string{"18.3", "18.35", "18.4", "18.45"}}, // DefaultTicks: 18 18 18 18
		{0, 0.001, []string{"0", "0.0005", "0.001"}},
		{1e9, 4e9, []string{"1e+09", "2e+09", "3e+09", "4e+09"}}, // exponents kept
	} {
		assert.Equal(t, tt.want, labels(tidyTicks{}.Ticks(tt.lo, tt.hi)), "%g–%g", tt.lo, tt.hi)
	}
	p := newPlot("t", "x", "y")
	assert.Equal(t, tidyTicks{}, p.X.Tick.Marker, "every plot's linear axes")
	assert.Equal(t, tidyTicks{}, p.Y.Tick.Marker)
}

// TestLegendsOutsideData: drawn as saved, a CDF's legend entries sit
// above its data area, not on its lines.
func TestLegendsOutsideData(t *testing.T) {
	p, err := CDF("CDF", "TTFT (ms)", Series{Name: "reference run", Values: []float64{1, 2, 3, 50}},
		Series{Name: "candidate run", Values: []float64{2, 3, 4, 60}})
	require.NoError(t, err)
	w, h := Size(p)
	data := legendAbove(p).DataCanvas(draw.NewCanvas(&recorder.Canvas{}, w, h))
	found := 0
	for _, fs := range texts(t, p) {
		if fs.String == "reference run (n=4)" || fs.String == "candidate run (n=4)" {
			found++
			assert.Greater(t, fs.Point.Y, data.Max.Y, "%q above the data area", fs.String)
		}
	}
	assert.Equal(t, 2, found)
	assert.Equal(t, p.Title.Padding, newPlot("", "", "").Title.Padding, "the plot itself is unchanged")
}

// TestErrorBarsReadable: a near-zero error gets a visible bar and every
// bar its value; a clipped one its value at the edge.
func TestErrorBarsReadable(t *testing.T) {
	bars := []ErrorBar{{Label: "Time to First Token avg", ErrorPct: 0.004, BoundPct: 10},
		{Label: "Inter Token Latency p99", ErrorPct: -6.81, BoundPct: 20},
		{Label: "Request Latency avg", ErrorPct: 0}, {Label: "Token Gap max", ErrorPct: 900}}
	chart, err := Errors("errors", bars)
	require.NoError(t, err)
	lim := axisLimit(bars)
	assert.InDelta(t, minBarShare*lim, barLength(0.004, lim), 1e-12, "a near-zero bar is drawn")
	assert.Equal(t, -6.81, barLength(-6.81, lim))
	assert.Zero(t, barLength(0, lim))
	var strs []string
	for _, fs := range texts(t, chart) {
		strs = append(strs, fs.String)
	}
	for _, want := range []string{"+0.004 %", "-6.81 %", "0.00 %", "+900 %", "Time to First Token avg"} {
		assert.Contains(t, strs, want)
	}
}

// TestScatterPadded: no point sits on the frame.
func TestScatterPadded(t *testing.T) {
	ref, cand := []float64{10, 20, 30}, []float64{12, 18, 40}
	p, err := Scatter("s", "TTFT (ms)", ref, cand, "a", "b")
	require.NoError(t, err)
	for _, ax := range []plot.Axis{p.X, p.Y} {
		assert.Less(t, ax.Min, 10.0)
		assert.Greater(t, ax.Max, 40.0)
		assert.InDelta(t, scatterPad*30, 10-ax.Min, 1e-9)
	}
}

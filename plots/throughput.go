package plots

import (
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Throughput is one run's output tokens per second, in 1 s bins from its
// start.
type Throughput struct {
	Name       string
	Seconds    []float64 // bin starts
	TokensPerS []float64
	EndS       float64 // the run's end, where the last bin stops
}

// ThroughputOverTime overlays the runs' output token throughput.
func ThroughputOverTime(title string, runs ...Throughput) (*plot.Plot, error) {
	p := newPlot(title, "time from the run's start (s)", "output tokens/s (1 s bins)")
	drawn := 0
	for i, r := range runs {
		n := min(len(r.Seconds), len(r.TokensPerS))
		if n == 0 {
			continue
		}
		xys := make(plotter.XYs, n, n+1)
		for j := range n {
			xys[j] = plotter.XY{X: r.Seconds[j], Y: r.TokensPerS[j]}
		}
		if end := r.EndS; end > r.Seconds[n-1] { // draw the last step to the run's end
			xys = append(xys, plotter.XY{X: end, Y: r.TokensPerS[n-1]})
		}
		l, err := stepLine(xys, SeriesColor(i), vg.Points(1.2))
		if err != nil {
			return nil, fmt.Errorf("plots: throughput of %s: %w", r.Name, err)
		}
		p.Add(l)
		p.Legend.Add(r.Name, l)
		drawn++
	}
	if drawn == 0 {
		return nil, ErrNoData
	}
	p.Add(plotter.NewGrid())
	p.Y.Min = 0
	p.Y.Max *= 1.3 // room for the legend above the lines
	return p, nil
}

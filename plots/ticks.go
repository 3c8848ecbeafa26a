package plots

import (
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
)

// logTicks labels a log axis at 1, 2 and 5 × 10^k with unlabelled minor
// ticks between. A range narrower than a decade gets plot.DefaultTicks'
// linear labels instead, which still read correctly on a log axis; gonum's
// LogTicks would label nothing there.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if lo <= 0 || hi <= 0 || hi/lo < 10 {
		return tidyTicks{}.Ticks(lo, hi)
	}
	var ticks []plot.Tick
	for e := math.Floor(math.Log10(lo)); math.Pow(10, e) <= hi; e++ {
		base := math.Pow(10, e)
		for m := 1.0; m < 10; m++ {
			v := m * base
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || m == 2 || m == 5 {
				t.Label = strconv.FormatFloat(v, 'g', -1, 64)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// tidyTicks are plot.DefaultTicks labelled without padding zeros: a
// whole number as an integer ("2500", not DefaultTicks' "2500.00" when
// the step is 2.5 × 10^k), others without trailing zeros ("0.25", "0.5").
type tidyTicks struct{}

func (tidyTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i, t := range ticks {
		if t.Label != "" {
			ticks[i].Label = tickLabel(t.Value, t.Label)
		}
	}
	return ticks
}

// tickLabel is DefaultTicks' label of v without padding zeros.
func tickLabel(v float64, label string) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	if strings.ContainsAny(label, "eE") || !strings.Contains(label, ".") {
		return label
	}
	return strings.TrimRight(strings.TrimRight(label, "0"), ".")
}

func setLogX(p *plot.Plot) {
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = logTicks{}
}

func setLogY(p *plot.Plot) {
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = logTicks{}
}

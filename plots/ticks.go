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

// tidyTicks are plot.DefaultTicks relabelled: each label with as many
// decimals as the labelled ticks need to tell apart and to show exactly,
// then without trailing zeros. A whole number reads as an integer
// ("2500", where DefaultTicks prints "2500.00" when the step is 2.5 ×
// 10^k), and a fine step keeps its digits (18.35, where DefaultTicks
// prints "18").
type tidyTicks struct{}

func (tidyTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	d := tickDecimals(ticks)
	for i, t := range ticks {
		if t.Label != "" && !strings.ContainsAny(t.Label, "eE") {
			ticks[i].Label = trimZeros(strconv.FormatFloat(t.Value, 'f', d, 64))
		}
	}
	return ticks
}

// maxTickDecimals bounds the decimals of a tick label.
const maxTickDecimals = 6

// tickDecimals is the fewest decimals (up to maxTickDecimals) at which
// every labelled tick value is exact to a thousandth of their spacing.
func tickDecimals(ticks []plot.Tick) int {
	var vs []float64
	for _, t := range ticks {
		if t.Label != "" {
			vs = append(vs, t.Value)
		}
	}
	step := math.Inf(1)
	for i := 1; i < len(vs); i++ {
		step = min(step, math.Abs(vs[i]-vs[i-1]))
	}
	for d := 0; d < maxTickDecimals; d++ {
		scale, exact := math.Pow10(d), true
		for _, v := range vs {
			if math.Abs(math.Round(v*scale)/scale-v) > step/1000 {
				exact = false
				break
			}
		}
		if exact {
			return d
		}
	}
	return maxTickDecimals
}

// trimZeros drops a decimal label's trailing zeros and a bare point.
func trimZeros(label string) string {
	if !strings.Contains(label, ".") {
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

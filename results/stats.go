package results

import (
	"math"
	"slices"

	"github.com/simbench/simbench/internal/numpy"
)

// Percentiles are the percentiles AIPerf reports, in its order.
var Percentiles = [...]float64{1, 5, 10, 25, 50, 75, 90, 95, 99}

// StatNames lists every statistic of a record metric in AIPerf's JSON order.
var StatNames = []string{"avg", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "min", "max", "std", "count", "sum"}

// Summary is the statistics AIPerf reports for a distribution.
type Summary struct {
	Count int
	Sum   float64
	Avg   float64
	Min   float64
	Max   float64
	Std   float64 // population standard deviation (numpy's np.std, ddof=0)
	P     [len(Percentiles)]float64
}

// Summarize computes the statistics of values with numpy's semantics:
// np.mean, np.std (ddof=0) and np.percentile's default "linear" method. It
// sorts values in place. Non-finite values are dropped first; ok is false
// when nothing is left.
func Summarize(values []float64) (s Summary, ok bool) {
	values = dropNonFinite(values)
	if len(values) == 0 {
		return Summary{}, false
	}
	slices.Sort(values)
	s.Count = len(values)
	s.Min, s.Max = values[0], values[len(values)-1]
	s.Sum = sum(values)
	s.Avg = s.Sum / float64(len(values))
	s.Std = popStd(values, s.Avg)
	for i, p := range Percentiles {
		s.P[i] = PercentileSorted(values, p)
	}
	return s, true
}

// PercentileSorted is numpy.percentile(sorted, p) with method="linear",
// bit for bit (numpy.PercentileSorted). sorted must be ascending and
// non-empty; p is in [0, 100].
func PercentileSorted(sorted []float64, p float64) float64 {
	return numpy.PercentileSorted(sorted, p)
}

// Stats returns the summary as a stat-name → value map in display units.
func (s Summary) Stats() map[string]float64 {
	m := map[string]float64{"avg": s.Avg, "min": s.Min, "max": s.Max, "std": s.Std,
		"count": float64(s.Count), "sum": s.Sum}
	for i, p := range Percentiles {
		m[PercentileName(p)] = s.P[i]
	}
	return m
}

// PercentileName is the statistic name of percentile p of Percentiles:
// "p1" … "p99".
func PercentileName(p float64) string {
	switch p {
	case 1:
		return "p1"
	case 5:
		return "p5"
	case 10:
		return "p10"
	case 25:
		return "p25"
	case 50:
		return "p50"
	case 75:
		return "p75"
	case 90:
		return "p90"
	case 95:
		return "p95"
	default:
		return "p99"
	}
}

// sum adds values pairwise in blocks, as numpy does, so long sums keep
// their precision.
func sum(values []float64) float64 {
	const block = 128
	if len(values) <= block {
		var s float64
		for _, v := range values {
			s += v
		}
		return s
	}
	mid := len(values) / 2
	return sum(values[:mid]) + sum(values[mid:])
}

func popStd(values []float64, mean float64) float64 {
	sq := make([]float64, len(values))
	for i, v := range values {
		d := v - mean
		sq[i] = d * d
	}
	return math.Sqrt(sum(sq) / float64(len(values)))
}

func dropNonFinite(values []float64) []float64 {
	for _, v := range values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return slices.DeleteFunc(values, func(x float64) bool {
				return math.IsNaN(x) || math.IsInf(x, 0)
			})
		}
	}
	return values
}

// Package numpy holds the numpy semantics that more than one package of
// ours reproduces bit for bit. It imports nothing of ours, so the leaf
// packages (results, traces) can use it.
package numpy

import "math"

// PercentileSorted is numpy.percentile(sorted, p) with method="linear"
// (Hyndman–Fan type 7), bit for bit: numpy's lerp computes b−(b−a)(1−t) when
// t ≥ 0.5. sorted must be ascending and non-empty; p is in [0, 100].
func PercentileSorted(sorted []float64, p float64) float64 {
	idx := float64(len(sorted)-1) * (p / 100)
	lo := math.Floor(idx)
	k := int(lo)
	if k+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	a, b, t := sorted[k], sorted[k+1], idx-lo
	if t >= 0.5 {
		return b - (b-a)*(1-t)
	}
	return a + (b-a)*t
}

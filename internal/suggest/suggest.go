// Package suggest finds the name a mistyped one was most likely meant to
// be: the nearest by edit distance (Levenshtein, unit costs).
package suggest

import (
	"math"

	"github.com/xrash/smetrics"
)

// Nearest returns the name of names closest to s by edit distance (the
// first of equals) and that distance; "" and -1 when names is empty.
func Nearest(s string, names []string) (string, int) {
	best, bestD := "", math.MaxInt
	for _, n := range names {
		if d := smetrics.WagnerFischer(s, n, 1, 1, 1); d < bestD {
			best, bestD = n, d
		}
	}
	if best == "" && bestD == math.MaxInt {
		return "", -1
	}
	return best, bestD
}

// Close returns the name of names nearest to s when it is near enough to
// be a typo of it (at most one edit per three characters of s, and at least
// one edit allowed), else "".
func Close(s string, names []string) string {
	n, d := Nearest(s, names)
	if d < 0 || d > max(1, (len(s)+2)/3) {
		return ""
	}
	return n
}

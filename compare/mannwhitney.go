package compare

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/aclements/go-moremath/stats"
)

// UTest is a two-sided Mann–Whitney U (Wilcoxon rank-sum) test of two
// independent samples: do their values tend to differ?
type UTest struct {
	N1, N2 int
	// U is the statistic of the first sample: its rank sum − n1(n1+1)/2,
	// ties getting the mean of the ranks they span (scipy's U1).
	U float64
	// P is the two-sided p-value: twice the smaller tail, at most 1.
	P float64
	// Exact tells the p-value came from the exact distribution of U (given
	// the ties), not the normal approximation.
	Exact bool
}

// MannWhitney tests x against y with go-moremath's stats.MannWhitneyUTest.
// While each sample has at most stats.MannWhitneyExactLimit values (50),
// or stats.MannWhitneyTiesExactLimit (25) when values tie, the p-value is
// exact, ties included (Klotz's algorithm); beyond that it is the normal
// approximation with the tie correction of the variance and a continuity
// correction of ½. Samples whose values are all equal have P = 1.
// Non-finite values are an error.
func MannWhitney(x, y []float64) (UTest, error) {
	if len(x) == 0 || len(y) == 0 {
		return UTest{}, errors.New("mann-whitney: both samples need at least one value")
	}
	pooled := append(slices.Clone(x), y...)
	if slices.ContainsFunc(pooled, func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }) {
		return UTest{}, errors.New("mann-whitney: samples must be finite")
	}
	t := UTest{N1: len(x), N2: len(y), Exact: exact(len(x), len(y), hasTies(pooled))}
	res, err := stats.MannWhitneyUTest(x, y, stats.LocationDiffers)
	switch {
	case errors.Is(err, stats.ErrSamplesEqual): // every rank tied: U at its mean
		t.U, t.P = float64(t.N1*t.N2)/2, 1
		return t, nil
	case err != nil:
		return UTest{}, fmt.Errorf("mann-whitney: %w", err)
	}
	t.U, t.P = res.U, min(1, res.P)
	return t, nil
}

// exact is stats.MannWhitneyUTest's choice of the exact distribution.
func exact(n1, n2 int, ties bool) bool {
	limit := stats.MannWhitneyExactLimit
	if ties {
		limit = stats.MannWhitneyTiesExactLimit
	}
	return n1 <= limit && n2 <= limit
}

// hasTies reports whether two values are equal; it sorts values.
func hasTies(values []float64) bool {
	slices.Sort(values)
	for i := 1; i < len(values); i++ {
		if values[i] == values[i-1] {
			return true
		}
	}
	return false
}

// MinUTestP is the smallest two-sided p-value a Mann–Whitney test of n1
// against n2 values can reach (the samples entirely apart, no ties):
// 2 / C(n1+n2, n1). Below 4 runs per side it is above 0.05.
func MinUTestP(n1, n2 int) float64 {
	if n1 <= 0 || n2 <= 0 {
		return 1
	}
	c := 1.0 // C(n1+n2, n1), built as a product of ratios
	for i := 1; i <= n1; i++ {
		c = c * float64(n2+i) / float64(i)
	}
	return min(1, 2/c)
}

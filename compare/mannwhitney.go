package compare

import (
	"errors"
	"math"
	"slices"
)

// exactLimit is the largest pooled sample size whose p-value comes from the
// exact permutation distribution; larger samples use the normal
// approximation, which is then accurate to a few parts in a thousand.
const exactLimit = 50

// UTest is a two-sided Mann–Whitney U (Wilcoxon rank-sum) test of two
// independent samples: do their values tend to differ?
type UTest struct {
	N1, N2 int
	// U is the statistic of the first sample: its rank sum − n1(n1+1)/2,
	// ties getting the mean of the ranks they span (scipy's U1).
	U float64
	// P is the two-sided p-value: twice the smaller tail, at most 1.
	P float64
	// Exact tells the p-value came from the exact permutation distribution
	// of the rank sums (given the ties), not the normal approximation.
	Exact bool
}

// MannWhitney tests x against y. Up to exactLimit values in all, the
// p-value is exact: the share of the C(n1+n2, n1) ways of splitting the
// pooled mid-ranks whose rank sum is at least as far in the tail, so ties
// are handled exactly too. Beyond that it is the normal approximation with
// the tie correction of the variance and a continuity correction of ½.
// Samples whose values are all equal have P = 1. Non-finite values are an
// error.
func MannWhitney(x, y []float64) (UTest, error) {
	if len(x) == 0 || len(y) == 0 {
		return UTest{}, errors.New("mann-whitney: both samples need at least one value")
	}
	ranks, ties, err := midRanks(x, y)
	if err != nil {
		return UTest{}, err
	}
	n1, n2 := len(x), len(y)
	r1 := 0.0
	for _, r := range ranks[:n1] {
		r1 += r
	}
	t := UTest{N1: n1, N2: n2, U: r1 - float64(n1*(n1+1))/2}
	if n1+n2 <= exactLimit {
		t.P, t.Exact = exactP(ranks, n1), true
	} else {
		t.P = normalP(t.U, n1, n2, ties)
	}
	return t, nil
}

// midRanks ranks the pooled samples (x first, then y, in input order),
// giving tied values the mean of their ranks, and returns Σ(t³ − t) over
// the groups of t tied values.
func midRanks(x, y []float64) ([]float64, float64, error) {
	pooled := append(slices.Clone(x), y...)
	idx := make([]int, len(pooled))
	for i, v := range pooled {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, 0, errors.New("mann-whitney: samples must be finite")
		}
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmpFloat(pooled[a], pooled[b]) })
	ranks := make([]float64, len(pooled))
	ties := 0.0
	for i := 0; i < len(idx); {
		j := i + 1
		for j < len(idx) && pooled[idx[j]] == pooled[idx[i]] {
			j++
		}
		mid := float64(i+j+1) / 2 // ranks i+1 … j
		for _, k := range idx[i:j] {
			ranks[k] = mid
		}
		t := float64(j - i)
		ties += t*t*t - t
		i = j
	}
	return ranks, ties, nil
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// exactP is the two-sided p-value of the rank sum of the first n1 ranks
// under every equally likely assignment of the pooled ranks. Mid-ranks are
// multiples of ½, so doubled they are integers and the distribution of the
// sum is counted exactly by dynamic programming.
func exactP(ranks []float64, n1 int) float64 {
	doubled := make([]int, len(ranks))
	obs, total := 0, 0
	for i, r := range ranks {
		doubled[i] = int(math.Round(2 * r))
		total += doubled[i]
		if i < n1 {
			obs += doubled[i]
		}
	}
	if k := len(ranks) - n1; k < n1 { // count the smaller side: sum_y = total − sum_x
		n1, obs = k, total-obs
	}
	counts := sumCounts(doubled, n1, total)
	var below, above, all float64
	for s, c := range counts {
		all += c
		if s <= obs {
			below += c
		}
		if s >= obs {
			above += c
		}
	}
	return min(1, 2*min(below, above)/all)
}

// sumCounts returns, for every s in [0, total], the number of subsets of
// size k of values whose sum is s.
func sumCounts(values []int, k, total int) []float64 {
	dp := make([][]float64, k+1) // dp[j][s]: subsets of size j with sum s
	for j := range dp {
		dp[j] = make([]float64, total+1)
	}
	dp[0][0] = 1
	hi := 0 // no subset of the values seen so far sums above hi
	for _, v := range values {
		hi = min(hi+v, total)
		for j := k; j >= 1; j-- {
			prev, cur := dp[j-1], dp[j]
			for s := hi; s >= v; s-- {
				cur[s] += prev[s-v]
			}
		}
	}
	return dp[k]
}

// normalP is the two-sided p-value of U from the normal approximation with
// tie-corrected variance n1·n2/12 · ((n+1) − Σ(t³−t)/(n(n−1))) and a
// continuity correction of ½.
func normalP(u float64, n1, n2 int, ties float64) float64 {
	n := float64(n1 + n2)
	mu := float64(n1*n2) / 2
	v := float64(n1*n2) / 12 * ((n + 1) - ties/(n*(n-1)))
	if v <= 0 {
		return 1 // every value tied
	}
	z := max(math.Abs(u-mu)-0.5, 0) / math.Sqrt(v)
	return min(1, math.Erfc(z/math.Sqrt2))
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

package compare

import (
	"math"
	"slices"
	"testing"

	"github.com/aclements/go-moremath/stats"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Textbook values. The first pair is Conover's example used in scipy's
// mannwhitneyu documentation (ages of males and females); the second is
// Hollander & Wolfe's example in R's ?wilcox.test (W = 35, one-sided
// p = 0.1272). Expected p-values agree with scipy 1.10
// (mannwhitneyu(method="exact" / "asymptotic")).
var (
	males   = []float64{19, 22, 16, 29, 24}
	females = []float64{20, 11, 17, 12}
	hwX     = []float64{0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46}
	hwY     = []float64{1.15, 0.88, 0.90, 0.74, 1.21}
)

func TestMannWhitneyTextbookExact(t *testing.T) {
	for _, tc := range []struct {
		name string
		x, y []float64
		u, p float64
	}{
		{"conover", males, females, 17, 0.1111111111111111}, // 14/126
		{"conover swapped", females, males, 3, 0.1111111111111111},
		{"hollander-wolfe", hwX, hwY, 35, 0.2544122544122544},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := MannWhitney(tc.x, tc.y)
			require.NoError(t, err)
			assert.True(t, got.Exact)
			assert.Equal(t, tc.u, got.U)
			assert.InDelta(t, tc.p, got.P, 1e-12)
		})
	}
}

// normalApproximation makes MannWhitney use the normal approximation for
// the rest of the test (it must not run in parallel).
func normalApproximation(t *testing.T) {
	exact, ties := stats.MannWhitneyExactLimit, stats.MannWhitneyTiesExactLimit
	stats.MannWhitneyExactLimit, stats.MannWhitneyTiesExactLimit = 0, 0
	t.Cleanup(func() { stats.MannWhitneyExactLimit, stats.MannWhitneyTiesExactLimit = exact, ties })
}

func TestMannWhitneyNormalApproximation(t *testing.T) {
	normalApproximation(t)
	for _, tc := range []struct {
		name string
		x, y []float64
		p    float64
	}{
		{"conover", males, females, 0.11134688653314041},
		{"hollander-wolfe", hwX, hwY, 0.24462360512698333},
		{"ties", []float64{1, 2, 2, 3, 4, 4, 4, 5}, []float64{2, 3, 3, 5, 6, 6, 7}, 0.15959894244264883},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := MannWhitney(tc.x, tc.y)
			require.NoError(t, err)
			assert.False(t, got.Exact)
			assert.InDelta(t, tc.p, got.P, 1e-12)
		})
	}
}

// Above 25 values a side with ties the test switches to the normal approximation;
// this sample has many ties (scipy: U = 388, p = 0.06663679541681919).
func TestMannWhitneyLargeSampleWithTies(t *testing.T) {
	a := []float64{11, 12, 11, 7, 12, 11, 9, 11, 11, 11, 10, 11, 9, 10, 9, 11, 10, 9, 8, 9, 10, 9, 13, 12, 5, 6, 10, 9, 10, 10}
	b := []float64{15, 9, 10, 15, 12, 12, 10, 8, 11, 11, 9, 10, 11, 9, 11, 11, 11, 10, 12, 13, 12, 9, 12, 10, 13, 9, 13, 11, 9, 10, 11, 12, 9, 9, 11}
	got, err := MannWhitney(a, b)
	require.NoError(t, err)
	assert.False(t, got.Exact)
	assert.Equal(t, 388.0, got.U)
	assert.InDelta(t, 0.06663679541681919, got.P, 1e-12)
}

// bruteP enumerates every split of the pooled mid-ranks: an independent
// check of the exact distribution with ties.
func bruteP(x, y []float64) float64 {
	ranks := midRanks(append(slices.Clone(x), y...))
	n, n1 := len(ranks), len(x)
	obs := 0.0
	for _, r := range ranks[:n1] {
		obs += r
	}
	var below, above, all float64
	for mask := 0; mask < 1<<n; mask++ {
		if popcount(mask) != n1 {
			continue
		}
		s := 0.0
		for i := range n {
			if mask&(1<<i) != 0 {
				s += ranks[i]
			}
		}
		all++
		if s <= obs+1e-9 {
			below++
		}
		if s >= obs-1e-9 {
			above++
		}
	}
	return math.Min(1, 2*math.Min(below, above)/all)
}

// midRanks ranks values, tied ones getting the mean of their ranks.
func midRanks(values []float64) []float64 {
	ranks := make([]float64, len(values))
	for i, v := range values {
		below, equal := 0, 0
		for _, w := range values {
			switch {
			case w < v:
				below++
			case w == v:
				equal++
			}
		}
		ranks[i] = float64(below) + float64(equal+1)/2
	}
	return ranks
}

func popcount(m int) int {
	n := 0
	for ; m > 0; m &= m - 1 {
		n++
	}
	return n
}

func TestMannWhitneyExactWithTiesMatchesEnumeration(t *testing.T) {
	for _, tc := range []struct{ x, y []float64 }{
		{[]float64{1, 2, 2, 3, 4, 4, 4, 5}, []float64{2, 3, 3, 5, 6, 6, 7}},
		{[]float64{10, 10, 10}, []float64{12, 12, 12}},
		{[]float64{5, 5, 6}, []float64{5, 6, 6, 7}},
		{[]float64{1.5, 2.5, 2.5, 2.5}, []float64{2.5, 3, 1.5, 9, 9}},
	} {
		got, err := MannWhitney(tc.x, tc.y)
		require.NoError(t, err)
		assert.True(t, got.Exact)
		assert.InDelta(t, bruteP(tc.x, tc.y), got.P, 1e-12, "%v vs %v", tc.x, tc.y)
	}
}

func TestMannWhitneyEdgeCases(t *testing.T) {
	same, err := MannWhitney([]float64{3, 3, 3}, []float64{3, 3})
	require.NoError(t, err)
	assert.Equal(t, 1.0, same.P)
	apart, err := MannWhitney([]float64{1, 2, 3}, []float64{4, 5, 6})
	require.NoError(t, err)
	assert.InDelta(t, 0.1, apart.P, 1e-12) // 2 / C(6,3): three runs a side never reach 0.05
	assert.Equal(t, 0.0, apart.U)
	_, err = MannWhitney(nil, []float64{1})
	assert.Error(t, err)
	_, err = MannWhitney([]float64{math.NaN()}, []float64{1})
	assert.Error(t, err)
}

func TestMinUTestP(t *testing.T) {
	assert.InDelta(t, 0.1, MinUTestP(3, 3), 1e-15)
	assert.InDelta(t, 2.0/70, MinUTestP(4, 4), 1e-15)
	assert.InDelta(t, 1.0, MinUTestP(1, 1), 1e-15)
	assert.Equal(t, 1.0, MinUTestP(0, 3))
}

func BenchmarkMannWhitneyExact25(b *testing.B) {
	x := make([]float64, 25)
	y := make([]float64, 25)
	for i := range x {
		x[i], y[i] = float64(i%7), float64(i%5)+0.5
	}
	for b.Loop() {
		if _, err := MannWhitney(x, y); err != nil {
			b.Fatal(err)
		}
	}
}

package sim

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestJitterMeanAndSpread(t *testing.T) {
	assert.Nil(t, newJitter(0, 1, 0))
	assert.Equal(t, int64(5), (*jitter)(nil).apply(5))
	j := newJitter(0.1, 7, 0)
	const n = 200_000
	var sum, sq float64
	for range n {
		x := float64(j.apply(1_000_000)) / 1e6
		sum += x
		sq += x * x
	}
	mean := sum / n
	cv := math.Sqrt(sq/n-mean*mean) / mean
	assert.InDelta(t, 1, mean, 0.002)
	assert.InDelta(t, 0.1, cv, 0.003)
	// Same seed and worker, same draws; another worker, another stream.
	a, b, c := newJitter(0.1, 7, 1), newJitter(0.1, 7, 1), newJitter(0.1, 7, 2)
	var same, other []int64
	for range 10 {
		x, y, z := a.apply(1e6), b.apply(1e6), c.apply(1e6)
		same, other = append(same, x), append(other, z)
		assert.Equal(t, x, y)
	}
	assert.NotEqual(t, same, other)
}

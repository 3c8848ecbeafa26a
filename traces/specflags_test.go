package traces

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSpecFromFlags(t *testing.T) {
	given := map[string]any{"request-count": 40, "isl": 50, "request-rate": 2.5, "arrival-pattern": "gamma",
		"auto-offset": true, "random-seed": int64(7)}
	s, err := SpecFromFlags(func(f string) bool { _, ok := given[f]; return ok }, func(f string) any { return given[f] })
	require.NoError(t, err)
	assert.Equal(t, 40, *s.RequestCount)
	assert.Equal(t, 50, *s.ISL)
	assert.Equal(t, 2.5, *s.RequestRate)
	assert.Equal(t, "gamma", *s.ArrivalPattern)
	assert.True(t, *s.AutoOffset)
	assert.Equal(t, int64(7), *s.RandomSeed)
	assert.Nil(t, s.OSL, "not given: unset")

	given = map[string]any{"isl": 2.5}
	_, err = SpecFromFlags(func(f string) bool { _, ok := given[f]; return ok }, func(f string) any { return given[f] })
	assert.EqualError(t, err, "--isl: want a int, got float64")
}

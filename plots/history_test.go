package plots

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestErrorHistoryRenders(t *testing.T) {
	t.Parallel()
	p, err := ErrorHistory("time_to_first_token", 10,
		HistoryLine{Name: "avg", X: []float64{1, 2, 3, 5}, Y: []float64{4, -2, 12, 3}},
		HistoryLine{Name: "p99", X: []float64{1, 2, 5}, Y: []float64{15, 18, -25}},
		HistoryLine{Name: "empty"})
	require.NoError(t, err)
	checkImage(t, render(t, p), 800, 500)
	assert.InDelta(t, 1-scatterPad*4, p.X.Min, 1e-12, "the first run's markers off the frame")
	assert.InDelta(t, 5+scatterPad*4, p.X.Max, 1e-12)
	assert.LessOrEqual(t, p.Y.Min, -25.0)
	assert.GreaterOrEqual(t, p.Y.Max, 18.0)
}

func TestErrorHistoryOneRunAndNoData(t *testing.T) {
	t.Parallel()
	p, err := ErrorHistory("one", 0, HistoryLine{Name: "avg", X: []float64{7}, Y: []float64{1.5}})
	require.NoError(t, err)
	assert.Less(t, p.X.Min, 7.0)
	assert.Greater(t, p.X.Max, 7.0)
	checkImage(t, render(t, p), 800, 500)
	_, err = ErrorHistory("none", 10)
	assert.ErrorIs(t, err, ErrNoData)
}

func TestIntegerTicks(t *testing.T) {
	t.Parallel()
	ticks := integerTicks{}.Ticks(0.5, 4.5)
	var labels []string
	for _, tk := range ticks {
		labels = append(labels, tk.Label)
	}
	assert.Equal(t, []string{"1", "2", "3", "4"}, labels)
	assert.Len(t, integerTicks{}.Ticks(1, 100), 10)
}

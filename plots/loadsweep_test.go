package plots

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOnFront(t *testing.T) {
	t.Parallel()
	pts := []SweepPoint{{1, 50, 200}, {2, 90, 280}, {4, 170, 430}, {8, 700, 420}, {16, 700, 430}}
	var front []bool
	for i := range pts {
		front = append(front, onFront(pts, i))
	}
	assert.Equal(t, []bool{true, true, true, false, false}, front, "8 and 16: slower and no more throughput than 4")
}

func TestSweepFiguresRender(t *testing.T) {
	t.Parallel()
	cap4, cap6 := 4.6, 6.2
	ref := SweepSide{"reference: real", []SweepPoint{{1, 65, 214}, {2, 133, 284}, {4, 248, 433}, {8, 1004, 436}}}
	cand := SweepSide{"candidate: sim", []SweepPoint{{1, 101, 182}, {2, 168, 294}, {4, 284, 445}, {8, 814, 474}}}
	tr, err := SweepTradeoffs(SweepPanel{"Output token throughput vs TTFT p99", "TTFT p99 (ms)", "tokens/s", []SweepSide{ref, cand}},
		SweepPanel{"vs ITL p99", "ITL p99 (ms)", "tokens/s", []SweepSide{ref, cand}})
	require.NoError(t, err)
	assert.Len(t, tr.Plots, 2)
	checkImage(t, render(t, tr), 600, 800)
	at, err := Attainment("SLO attainment", "concurrency", 0.9,
		AttainmentSide{"reference: real", []float64{1, 2, 4, 8}, []float64{1, 1, 0.96, 0.1}, &cap4},
		AttainmentSide{"candidate: sim", []float64{1, 2, 4, 8}, []float64{1, 1, 1, 0.3}, &cap6})
	require.NoError(t, err)
	checkImage(t, render(t, at), 600, 400)

	_, err = SweepTradeoffs(SweepPanel{Title: "empty", Sides: []SweepSide{{Name: "a"}}})
	assert.ErrorIs(t, err, ErrNoData)
	_, err = Attainment("empty", "concurrency", 0.9, AttainmentSide{Name: "a"})
	assert.ErrorIs(t, err, ErrNoData)
}

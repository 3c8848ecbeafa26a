package grid

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMarkPareto(t *testing.T) {
	pt := func(ttft, itl, perWorker float64) Point {
		return Point{Metrics: map[string]float64{KeyTTFTP99: ttft, KeyITLP99: itl, KeyOutputPerWorker: perWorker}}
	}
	pts := []Point{
		pt(100, 10, 50), // on both fronts: fastest TTFT and ITL
		pt(200, 20, 80), // on both: most throughput
		pt(300, 15, 60), // beaten on TTFT by 1 (lower TTFT, more throughput); on the ITL front
		pt(150, 30, 40), // beaten on both
		{Metrics: map[string]float64{KeyTTFTP99: 50}}, // no throughput: on no front
	}
	MarkPareto(pts)
	var ttft, itl []bool
	for _, p := range pts {
		ttft, itl = append(ttft, p.ParetoTTFT), append(itl, p.ParetoITL)
	}
	assert.Equal(t, []bool{true, true, false, false, false}, ttft)
	assert.Equal(t, []bool{true, true, true, false, false}, itl)
}

package capacity

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteText(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, sampleSummary().WriteText(&b))
	want := `  concurrency  req/s  output tok/s  TTFT p50  TTFT p99  ITL p50  ITL p99  error rate  goodput  attainment    SLO
            1      1             0         -         -        -        -           0        -           1  meets
            2      2             0         -         -        -        -           0        -        0.95  meets
            4   2.02             0         -         -        -        -           0        -         0.5  fails

SLO time_to_first_token:60 at attainment >= 0.9: capacity concurrency 2 (4 fails); estimate 2.22, interpolated: attainment interpolated linearly between concurrency 2 (0.95) and concurrency 4 (0.5) to the target 0.9
stopped after concurrency 4 (saturation): request_throughput 2.02 req/s at concurrency 4 is less than 5% above 2 at concurrency 2 (load ×2); not run: 8
`
	assert.Equal(t, want, b.String())
}

func TestCapacityText(t *testing.T) {
	below := FindCapacity(RequestRate, []Point{{RequestRate: 0.5, Attainment: ptr(0.1), MeetsSLO: ptr(false)}}, 0.9)
	assert.Equal(t, "capacity below request_rate 0.5 (the lowest load fails)", below.Text(RequestRate))
	above := FindCapacity(Concurrency, []Point{cpt(8, 1, 1)}, 0.9)
	assert.Equal(t, "capacity at least concurrency 8 (every load met it)", above.Text(Concurrency))
}

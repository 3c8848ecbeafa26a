package traces

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDescribeHandComputed(t *testing.T) {
	wl := &Workload{BlockSize: 512, Source: "hand", Requests: []Request{
		{TimestampMs: 0, HasTimestamp: true, InputLength: 1000, OutputLength: 10, HashIDs: []int64{1, 2}},
		// blocks 1,2 seen as a prefix: 2 hits = 1024 cached tokens
		{TimestampMs: 1000, HasTimestamp: true, InputLength: 1500, OutputLength: 20, HashIDs: []int64{1, 2, 3}},
		// block 1 hits, 4 misses: 512
		{TimestampMs: 2000, HasTimestamp: true, InputLength: 600, OutputLength: 30, HashIDs: []int64{1, 4}},
		// 2 was only seen after 1, not as a first block: 0
		{SessionID: "s", TimestampMs: 4000, HasTimestamp: true, InputLength: 300, OutputLength: 40, HashIDs: []int64{2}},
		// 1 hits: 512 capped at ISL 400
		{SessionID: "s", Turn: 1, InputLength: 400, OutputLength: 50, HashIDs: []int64{1}, Warmup: true},
	}}
	info := Describe(wl)
	assert.Equal(t, 5, info.Requests)
	assert.Equal(t, 1, info.WarmupRequests)
	assert.Equal(t, 4, info.Sessions)
	assert.Equal(t, 4, info.TimedRequests)
	assert.Equal(t, 4000.0, info.SpanMs)
	assert.InDelta(t, 0.75, info.RatePerSec, 1e-12) // 3 gaps in 4 s
	assert.Equal(t, int64(3800), info.TotalInputTokens)
	assert.Equal(t, int64(150), info.TotalOutputTokens)
	assert.InDelta(t, (1024.0+512+0+400)/3800, info.PrefixReuseRatio, 1e-12)
	assert.Equal(t, Dist{Min: 300, Max: 1500, Avg: 760, P50: 600, P90: 1300, P99: 1480, Std: math.Sqrt(194400)}, roundDist(info.ISL))
	assert.Equal(t, Dist{Min: 10, Max: 50, Avg: 30, P50: 30, P90: 46, P99: 49.6, Std: math.Sqrt(200)}, roundDist(info.OSL))
	assert.Equal(t, 512, info.BlockSize)
}

// roundDist rounds to 1e-9 so exact expectations survive float error.
func roundDist(d Dist) Dist {
	r := func(v float64) float64 {
		if math.Abs(v-math.Round(v*10)/10) < 1e-9 {
			return math.Round(v*10) / 10
		}
		return v
	}
	return Dist{r(d.Min), r(d.Max), r(d.Avg), r(d.P50), r(d.P90), r(d.P99), d.Std}
}

func TestDescribeJSONTags(t *testing.T) {
	b, err := json.Marshal(Describe(timed(0, 1000)))
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	for _, k := range []string{"requests", "sessions", "span_ms", "rate_per_sec", "isl", "osl",
		"total_input_tokens", "total_output_tokens", "prefix_reuse_ratio", "block_size"} {
		assert.Contains(t, m, k)
	}
	assert.Contains(t, m["isl"], "p99")
}

func TestDescribeNoTimestamps(t *testing.T) {
	info := Describe(&Workload{Requests: []Request{{InputLength: 3}}})
	assert.Equal(t, 0.0, info.SpanMs)
	assert.Equal(t, 0.0, info.RatePerSec)
	assert.Equal(t, MooncakeBlockSize, info.BlockSize)
}

func TestPercentile(t *testing.T) {
	tests := []struct {
		xs   []float64
		q    float64
		want float64
	}{
		{nil, 50, 0},
		{[]float64{7}, 99, 7},
		{[]float64{1, 2, 3, 4}, 50, 2.5},
		{[]float64{1, 2, 3, 4}, 90, 3.7},
		{[]float64{1, 2, 3, 4}, 0, 1},
		{[]float64{1, 2, 3, 4}, 100, 4},
	}
	for _, tt := range tests {
		assert.InDelta(t, tt.want, Percentile(tt.xs, tt.q), 1e-12, "%v q=%v", tt.xs, tt.q)
	}
}

// TestPercentileIsNumpys pins numpy's lerp, b−(b−a)(1−t) for t ≥ 0.5: the
// a+(b−a)t form traces used before gave 3346.6000000000004 and
// 3514.3599999999997 here.
func TestPercentileIsNumpys(t *testing.T) {
	info := Describe(&Workload{Requests: []Request{{InputLength: 1669}, {InputLength: 3533}}})
	assert.Equal(t, 3346.6, info.ISL.P90)
	assert.Equal(t, 3514.36, info.ISL.P99)
}

func TestDescribeSliceTrace(t *testing.T) {
	wl, _, err := LoadMooncake(sliceTrace)
	require.NoError(t, err)
	info := Describe(wl)
	assert.Equal(t, 200, info.Requests)
	assert.Equal(t, 200, info.Sessions)
	assert.Greater(t, info.PrefixReuseRatio, 0.0)
	assert.Less(t, info.PrefixReuseRatio, 1.0)
}

// TestDescribeShowsALateStart: trace info of an epoch-millisecond trace
// said "span 0.1 s" and nothing of the 56 years before the first request.
func TestDescribeShowsALateStart(t *testing.T) {
	wl := &Workload{Requests: []Request{{HasTimestamp: true, TimestampMs: 1_764_921_600_000, InputLength: 1},
		{HasTimestamp: true, TimestampMs: 1_764_921_600_100, InputLength: 1}}}
	info := Describe(wl)
	assert.Equal(t, 1_764_921_600_000.0, info.FirstMs)
	assert.Equal(t, "span 0.1 s, mean rate 10.000 req/s; the first request is due 1764921600 s after time zero (--auto-offset starts there)",
		scheduleText(info))
	wl.Requests[0].TimestampMs, wl.Requests[1].TimestampMs = 0, 100
	assert.Equal(t, "span 0.1 s, mean rate 10.000 req/s", scheduleText(Describe(wl)))
}

// TestDescribeGapCV: the gaps' coefficient of variation tells evenly
// spaced arrivals (0) from a Poisson process (1) and burstier gamma gaps
// (1/√k for shape k), whatever order the requests are listed in; fewer
// than two gaps have none.
func TestDescribeGapCV(t *testing.T) {
	synth := func(mode string, k float64) *Workload {
		wl, err := Synthesize(SynthSpec{Mode: mode, Rate: 10, GammaShape: k, RequestCount: 4000, ISL: 8, OSL: 8, Seed: 7})
		require.NoError(t, err)
		return wl
	}
	for _, tc := range []struct {
		name string
		wl   *Workload
		want float64
		tol  float64
	}{
		{"constant", synth(ModeConstant, 0), 0, 1e-9},
		{"poisson", synth(ModePoisson, 0), 1, 0.05},
		{"gamma k=0.25", synth(ModeGamma, 0.25), 2, 0.15},
	} {
		assert.InDelta(t, tc.want, Describe(tc.wl).GapCV, tc.tol, tc.name)
	}
	wl := synth(ModePoisson, 0)
	cv := Describe(wl).GapCV
	slices.Reverse(wl.Requests)
	assert.InDelta(t, cv, Describe(wl).GapCV, 1e-9, "in time order, not list order")
	two := &Workload{Requests: []Request{{HasTimestamp: true, TimestampMs: 0}, {HasTimestamp: true, TimestampMs: 100}}}
	assert.Zero(t, Describe(two).GapCV)
	assert.Contains(t, scheduleText(Describe(wl)), fmt.Sprintf("gaps' CV %.2f (Poisson 1, even 0)", cv))
}

package peerruns

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/results"
)

// lambdaSubset is a tiny real subset of
// testdata/vllm-bench/vllm-0.5.4img-lambdalabs-detailed.json: its requests
// 4 (no error, but no content: ttft 0, no itls), 6, 7, 8 and 9, copied
// from the file.
func lambdaSubset() *requestLists {
	return &requestLists{
		InputLens:  []float64{375, 487, 369, 5, 236},
		OutputLens: []float64{0, 10, 26, 8, 18},
		TTFTs:      []float64{0.0, 0.15295032411813736, 0.15335429087281227, 0.15244568139314651, 0.15305475518107414},
		ITLs: [][]float64{{}, {0.10726868733763695},
			{0.11202509328722954, 0.11072143539786339, 0.10672267898917198},
			{0.10728254541754723}, {0.11201338469982147, 0.10583596304059029}},
		Errors: []string{"", "", "", "", ""},
	}
}

// TestPerRequestStatistics checks the statistics computed from
// per-request lists against values computed by hand (Python, plain float
// arithmetic): request latency = ttft + Σ itls, ITL = (latency − ttft) /
// (OSL − 1), ICL the pooled itls, TTST the first gap; numpy-linear
// percentiles and the population std.
func TestPerRequestStatistics(t *testing.T) {
	withError := lambdaSubset()
	withError.Errors[4] = "edited: a failed request" // request 9 marked failed (an edit)
	for _, tc := range []struct {
		name      string
		lists     *requestLists
		chunkGaps bool
		want      map[string]map[string]float64
		absent    []string
	}{
		{
			name: "requests 6-9, request 4 without content", lists: lambdaSubset(), chunkGaps: true,
			want: map[string]map[string]float64{
				// latencies 260.2190114557743, 482.8234985470772, 259.72822681069374, 370.9041029214859
				results.TagRequestLatency: {"avg": 343.4187099337578, "p50": 315.5615571886301, "p99": 479.46591667830944,
					"std": 92.35181198576095, "count": 4},
				results.TagTTFT: {"min": 152.44568139314651, "max": 153.35429087281227},
				// (260.2190114557743 − 152.95032411813736) / 9 = 11.918743037515217, …
				results.TagITL:               {"avg": 13.309564193855035, "p50": 12.996717910556232, "max": 15.32607791679246},
				results.TagICL:               {"avg": 108.83854116712298, "p90": 112.0180681347847, "count": 7},
				results.TagTTST:              {"avg": 109.6474276855588},
				results.TagISL:               {"sum": 1097},
				results.TagOSL:               {"sum": 62, "min": 8},
				results.TagErrorISL:          {"avg": 375, "count": 1},
				results.TagRequestCount:      {"avg": 4},
				results.TagErrorRequestCount: {"avg": 1},
				results.TagTotalErrorISL:     {"avg": 375},
				results.TagTotalISL:          {"avg": 1097},
				results.TagTotalOSL:          {"avg": 62},
			},
		},
		{
			name: "request 9 failed", lists: withError, chunkGaps: true,
			want: map[string]map[string]float64{
				results.TagRequestLatency: {"avg": 334.25691227118176, "p50": 260.2190114557743, "p99": 478.3714088052511,
					"std": 105.05263168414449, "count": 3},
				results.TagITL:               {"avg": 13.474529753759425, "p50": 13.178768306970596},
				results.TagICL:               {"avg": 108.80408808588982, "p90": 111.50363013148308, "count": 5},
				results.TagTTST:              {"avg": 108.85877534747124},
				results.TagErrorISL:          {"sum": 611, "count": 2},
				results.TagErrorRequestCount: {"avg": 2},
				results.TagTotalISL:          {"avg": 861},
				results.TagTotalOSL:          {"avg": 44},
			},
		},
		{
			name: "gaps spread over tokens (SGLang's native backend)", lists: lambdaSubset(), chunkGaps: false,
			want: map[string]map[string]float64{
				results.TagRequestLatency: {"avg": 343.4187099337578},
				results.TagITL:            {"avg": 13.309564193855035},
			},
			absent: []string{results.TagICL, results.TagTTST},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := &Run{Name: "subset"}
			p := newProfile()
			run.listProfile(p, tc.lists, map[string]float64{"duration": 10}, benchShape{latency: "e2el", chunkITL: tc.chunkGaps})
			for tag, stats := range tc.want {
				for stat, want := range stats {
					got, ok := p.p.Value(tag, stat)
					require.True(t, ok, "%s.%s", tag, stat)
					assert.InDelta(t, want, got, 1e-9, "%s.%s", tag, stat)
				}
			}
			for _, tag := range tc.absent {
				_, ok := p.p.Metric(tag)
				assert.False(t, ok, tag)
			}
		})
	}
}

// TestListsLatencyMatchesFile checks that ttft + Σ itls reproduces the
// request latency vLLM 0.19 and SGLang 0.5.9 wrote (e2el ends at the last
// content chunk in vLLM 0.19; SGLang's at the stream's last line, some µs
// later), and that the lists' TTFT and pooled itls reproduce the files'.
func TestListsLatencyMatchesFile(t *testing.T) {
	for _, tc := range []struct {
		path                     string
		latency, ttft, icl, dLat float64
	}{
		// mean_e2el_ms, mean_ttft_ms, mean_itl_ms of the file
		{"testdata/vllm-bench/vllm-0.19-detailed-c1.json", 5866.656730121467, 886.3659732043743, 39.21488978080525, 1e-3},
		// mean_e2e_latency_ms, mean_ttft_ms of the file (its itl is spread, not read)
		{"testdata/sglang-bench/sglang-0.5.9-detailed.jsonl", 1253.022339376621, 578.4130509826355, 0, 0.02},
	} {
		t.Run(tc.path, func(t *testing.T) {
			run, err := Open(tc.path)
			require.NoError(t, err)
			lat, _ := run.Profile.Value(results.TagRequestLatency, "avg")
			assert.InDelta(t, tc.latency, lat, tc.dLat)
			ttft, _ := run.Profile.Value(results.TagTTFT, "avg")
			assert.InDelta(t, tc.ttft, ttft, 1e-9)
			if tc.icl > 0 {
				icl, _ := run.Profile.Value(results.TagICL, "avg")
				assert.InDelta(t, tc.icl, icl, 1e-9)
			}
		})
	}
}

// TestVLLMAggregatesOldNames reads benchmark_serving.py's 0.5-era result
// without its per-request lists (renamed away): *_latency_ms is the
// request latency, and the total token throughput it lacks is derived.
func TestVLLMAggregatesOldNames(t *testing.T) {
	run, err := Open(edited(t, vllmLambda, `"ttfts": [`, `"ttfts_not_read": [`))
	require.NoError(t, err)
	for _, c := range []struct {
		tag, stat string
		want      float64
	}{
		{results.TagRequestLatency, "avg", 2837.6744586974382},
		{results.TagRequestLatency, "p99", 10193.979698568583},
		{results.TagRequestCount, "avg", 10},
		{results.TagTotalThroughput, "avg", 154.85747799438207 + 238.39258442037368},
		{results.TagICL, "avg", 108.64524158690622},
	} {
		got, ok := run.Profile.Value(c.tag, c.stat)
		require.True(t, ok, c.tag)
		assert.InDelta(t, c.want, got, 1e-9, c.tag)
	}
	var warnings []string
	for _, w := range run.Warnings {
		warnings = append(warnings, w.Error())
	}
	assert.Contains(t, strings.Join(warnings, "\n"), "total_token_throughput is derived as input_throughput + output_throughput")
	assert.Contains(t, strings.Join(warnings, "\n"), "_latency_ms (benchmark_serving.py's name before e2el): read as request_latency")
}

package servermetrics

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// histSeries is an exported histogram series with only count and sum.
func histSeries(endpoint string, labels map[string]string, count, sum float64) SeriesStats {
	return SeriesStats{EndpointURL: endpoint, Labels: labels, Stats: StatValues{{"count", count}, {"sum", sum}}}
}

func stageLabels(stage, phase string) map[string]string {
	return map[string]string{"model": "m", "stage": stage, "phase": phase}
}

func dynamoExport(ttftCount, ttftSum float64, stages ...SeriesStats) *Export {
	return &Export{Metrics: map[string]*Metric{
		"dynamo_frontend_time_to_first_token_seconds": {Type: KindHistogram,
			Series: []SeriesStats{histSeries(ep, map[string]string{"model": "m"}, ttftCount, ttftSum)}},
		"dynamo_frontend_ttft_stage_seconds": {Type: KindHistogram, Series: stages},
	}}
}

func TestTTFTBreakdownDynamoAdditive(t *testing.T) {
	// Four requests; each stage observed for each (zero-valued ones too), in
	// an order different from the attribution order.
	e := dynamoExport(4, 0.4,
		histSeries(ep, stageLabels("backend", "aggregated"), 4, 0.3),
		histSeries(ep, stageLabels("route", "aggregated"), 4, 0.02),
		histSeries(ep, stageLabels("tokenize", "none"), 4, 0.06),
		histSeries(ep, stageLabels("backend", "prefill"), 4, 0),
		histSeries(ep, stageLabels("response_postprocess", "none"), 4, 0.02),
	)
	bs := TTFTBreakdowns(e)
	require.Len(t, bs, 1)
	b := bs[0]
	assert.Equal(t, Dynamo, b.Server)
	assert.InDelta(t, 100, b.TTFTMeanMs, 1e-9)
	assert.True(t, b.Additive, b.Reason)
	assert.Empty(t, b.Reason)
	var keys []string
	for _, s := range b.Stages {
		keys = append(keys, s.Key())
	}
	assert.Equal(t, []string{"tokenize/none", "route/aggregated", "backend/aggregated", "backend/prefill", "response_postprocess/none"}, keys)
	assert.InDelta(t, 75, b.Stages[2].MeanMs, 1e-9)
	assert.InDelta(t, 0.75, b.Stages[2].Share, 1e-12)
	assert.InDelta(t, 100, b.StageSumMs, 1e-9)
}

func TestTTFTBreakdownNotAdditiveSaysWhy(t *testing.T) {
	tests := []struct {
		name string
		e    *Export
		want []string
	}{
		{"cohorts mixed", dynamoExport(4, 0.4,
			histSeries(ep, stageLabels("backend", "aggregated"), 2, 0.3),
			histSeries(ep, stageLabels("route", "aggregated"), 4, 0.02)),
			[]string{"cohorts mixed", "backend/aggregated has 2 observations"}},
		{"instances mixed", func() *Export {
			e := dynamoExport(4, 0.4, histSeries(ep, stageLabels("backend", "aggregated"), 4, 0.2))
			m := e.Metrics["dynamo_frontend_time_to_first_token_seconds"]
			m.Series = append(m.Series, histSeries("http://b/metrics", map[string]string{"model": "m"}, 4, 0.4))
			return e
		}(), []string{"instances mixed", "from 2 endpoints"}},
		{"vllm stages do not cover tokenisation", &Export{Metrics: map[string]*Metric{
			"vllm:time_to_first_token_seconds": {Type: KindHistogram, Series: []SeriesStats{histSeries(ep, nil, 10, 1)}},
			"vllm:request_queue_time_seconds":  {Type: KindHistogram, Series: []SeriesStats{histSeries(ep, nil, 10, 0.2)}},
			"vllm:request_prefill_time_seconds": {Type: KindHistogram,
				Series: []SeriesStats{histSeries(ep, nil, 10, 0.7)}},
		}}, []string{"add up to 90.000 ms but the TTFT mean is 100.000 ms (-10.0%)", "tokenisation"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bs := TTFTBreakdowns(tt.e)
			require.NotEmpty(t, bs)
			assert.False(t, bs[0].Additive)
			for _, w := range tt.want {
				assert.Contains(t, bs[0].Reason, w)
			}
		})
	}
}

func TestTTFTBreakdownsNeedObservations(t *testing.T) {
	assert.Empty(t, TTFTBreakdowns(&Export{Metrics: map[string]*Metric{}}))
	assert.Empty(t, TTFTBreakdowns(dynamoExport(0, 0, histSeries(ep, stageLabels("backend", "aggregated"), 0, 0))))
	// A TTFT histogram without stage families gives no breakdown.
	e := dynamoExport(3, 0.3)
	delete(e.Metrics, "dynamo_frontend_ttft_stage_seconds")
	assert.Empty(t, TTFTBreakdowns(e))
}

func TestTTFTBreakdownJSONRoundTrip(t *testing.T) {
	b := TTFTBreakdowns(dynamoExport(2, 0.2, histSeries(ep, stageLabels("backend", "aggregated"), 2, 0.2)))[0]
	var buf bytes.Buffer
	require.NoError(t, WriteTTFTBreakdownJSON(&buf, b))
	assert.Contains(t, buf.String(), `"ttft_mean_ms": 100`)
	assert.Contains(t, buf.String(), `"additive": true`)
	path := filepath.Join(t.TempDir(), TTFTBreakdownName)
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	back, err := LoadTTFTBreakdownJSON(path)
	require.NoError(t, err)
	assert.Equal(t, b, back)

	require.NoError(t, os.WriteFile(path, []byte(`{"ttft_mean_ms": 0, "stages": []}`), 0o644))
	_, err = LoadTTFTBreakdownJSON(path)
	assert.ErrorContains(t, err, `field "ttft_mean_ms"`)
}

func TestTTFTBreakdownText(t *testing.T) {
	b := TTFTBreakdowns(dynamoExport(2, 0.2,
		histSeries(ep, stageLabels("route", "aggregated"), 2, 0.05),
		histSeries(ep, stageLabels("backend", "aggregated"), 2, 0.1)))[0]
	var buf bytes.Buffer
	require.NoError(t, b.WriteText(&buf))
	out := buf.String()
	assert.Contains(t, out, "route")
	assert.Contains(t, out, "25.000")
	assert.Contains(t, out, "warning: not additive: stage means add up to 75.000 ms but the TTFT mean is 100.000 ms")
}

func TestTTFTBreakdownNeedsTime(t *testing.T) {
	e := dynamoExport(4, 0, histSeries(ep, stageLabels("backend", "aggregated"), 4, 0))
	assert.Empty(t, TTFTBreakdowns(e), "zero TTFT: no shares to give")
}

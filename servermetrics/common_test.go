package servermetrics

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCommonMetrics(t *testing.T) {
	g := func(avg float64) SeriesStats { return SeriesStats{EndpointURL: ep, Stats: StatValues{{"avg", avg}}} }
	e := &Export{Metrics: map[string]*Metric{
		// Two workers: running requests add up, KV usage averages.
		"vllm:num_requests_running": {Type: KindGauge, Series: []SeriesStats{g(3), g(5)}},
		"vllm:kv_cache_usage_perc":  {Type: KindGauge, Series: []SeriesStats{g(0.2), g(0.6)}},
		// The renamed family is ignored once the current one is found.
		"vllm:gpu_cache_usage_perc": {Type: KindGauge, Series: []SeriesStats{g(0.9)}},
		"vllm:request_queue_time_seconds": {Type: KindHistogram, Series: []SeriesStats{
			histSeries(ep, nil, 10, 0.5), histSeries("http://b/metrics", nil, 30, 1.5)}},
		"vllm:prompt_tokens": {Type: KindCounter, Series: []SeriesStats{
			{EndpointURL: ep, Stats: StatValues{{"total", 100}, {"rate", 10}}},
			{EndpointURL: "http://b/metrics", Stats: StatValues{{"total", 50}, {"rate", 5}}}}},
		"sglang:num_queue_reqs": {Type: KindGauge, Series: []SeriesStats{g(7)}},
		// No observations: left out.
		"vllm:request_prefill_time_seconds": {Type: KindHistogram, Series: []SeriesStats{histSeries(ep, nil, 0, 0)}},
		// Wrong type for its vocabulary entry: left out.
		"vllm:num_requests_waiting": {Type: KindCounter, Series: []SeriesStats{g(1)}},
	}}
	got := map[string]CommonMetric{}
	var order []string
	for _, m := range CommonMetrics(e) {
		got[m.Name+"/"+m.Server] = m
		order = append(order, m.Name+"/"+m.Server)
	}
	assert.Equal(t, []string{"queue_time/vllm", "requests_running/vllm", "requests_waiting/sglang",
		"kv_cache_usage/vllm", "prompt_tokens/vllm"}, order)
	assert.Equal(t, StatValues{{"count", 40}, {"avg", 50}}, got["queue_time/vllm"].Stats)
	assert.Equal(t, "ms", got["queue_time/vllm"].Unit)
	assert.Equal(t, StatValues{{"avg", 8}}, got["requests_running/vllm"].Stats)
	assert.InDelta(t, 0.4, got["kv_cache_usage/vllm"].Stats[0].Value, 1e-12)
	assert.Equal(t, "vllm:kv_cache_usage_perc", got["kv_cache_usage/vllm"].Family)
	assert.Equal(t, StatValues{{"total", 150}, {"rate", 15}}, got["prompt_tokens/vllm"].Stats)
}

// Series labelled with a pool role (a disaggregated simulation) are also
// combined per role: the prefill workers' TTFT and the decode workers' are
// different quantities, and their sum over both pools is neither.
func TestCommonMetricsByRole(t *testing.T) {
	role := func(r string) map[string]string { return map[string]string{"model_name": "m", "role": r} }
	e := &Export{Metrics: map[string]*Metric{
		"vllm:time_to_first_token_seconds": {Type: KindHistogram, Series: []SeriesStats{
			histSeries("sim://prefill-0/metrics", role("prefill"), 10, 2),
			histSeries("sim://decode-0/metrics", role("decode"), 6, 0.06),
			histSeries("sim://decode-1/metrics", role("decode"), 4, 0.04)}},
	}}
	got := map[string]StatValues{}
	var order []string
	for _, m := range CommonMetrics(e) {
		got[m.Name] = m.Stats
		order = append(order, m.Name)
	}
	assert.Equal(t, []string{"ttft", "ttft/decode", "ttft/prefill"}, order)
	assert.Equal(t, StatValues{{"count", 20}, {"avg", 1000 * 2.1 / 20}}, got["ttft"])
	assert.Equal(t, StatValues{{"count", 10}, {"avg", 10}}, got["ttft/decode"])
	assert.Equal(t, StatValues{{"count", 10}, {"avg", 200}}, got["ttft/prefill"])
}

// vLLM's speculative decoding counters line up, and give the acceptance
// rate and the mean accepted length; without drafts there are none.
func TestCommonMetricsSpecDecode(t *testing.T) {
	ctr := func(total float64) []SeriesStats {
		return []SeriesStats{{EndpointURL: ep, Stats: StatValues{{"total", total}, {"rate", total / 10}}}}
	}
	e := &Export{Metrics: map[string]*Metric{
		"vllm:spec_decode_num_drafts":          {Type: KindCounter, Series: ctr(100)},
		"vllm:spec_decode_num_draft_tokens":    {Type: KindCounter, Series: ctr(400)},
		"vllm:spec_decode_num_accepted_tokens": {Type: KindCounter, Series: ctr(176)},
		"vllm:spec_decode_num_accepted_tokens_per_pos": {Type: KindCounter, Series: []SeriesStats{
			{EndpointURL: ep, Labels: map[string]string{"position": "0"}, Stats: StatValues{{"total", 70}}},
			{EndpointURL: ep, Labels: map[string]string{"position": "1"}, Stats: StatValues{{"total", 106}}}}},
	}}
	got := map[string]CommonMetric{}
	var order []string
	for _, m := range CommonMetrics(e) {
		got[m.Name] = m
		order = append(order, m.Name)
	}
	assert.Equal(t, []string{SpecDrafts, SpecDraftTokens, SpecAcceptedTokens, SpecAcceptanceRate, SpecMeanAcceptedLength}, order)
	assert.Equal(t, StatValues{{"avg", 0.44}}, got[SpecAcceptanceRate].Stats)
	assert.Equal(t, StatValues{{"avg", 2.76}}, got[SpecMeanAcceptedLength].Stats)
	assert.Equal(t, VLLM, got[SpecAcceptanceRate].Server)

	e.Metrics["vllm:spec_decode_num_drafts"] = &Metric{Type: KindCounter, Series: ctr(0)}
	for _, m := range CommonMetrics(e) {
		assert.NotEqual(t, SpecAcceptanceRate, m.Name)
	}
}

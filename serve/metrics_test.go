package serve

import (
	"net/http"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scrape parses the server's /metrics with prometheus/common's text parser.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	return fams
}

// total sums a family's counters, gauges and histogram counts over the
// series carrying every label of want.
func total(fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	sum := 0.0
	for _, m := range fams[name].GetMetric() {
		n := 0
		for _, l := range m.GetLabel() {
			if v, ok := want[l.GetName()]; ok && v == l.GetValue() {
				n++
			}
		}
		if n == len(want) {
			sum += m.GetCounter().GetValue() + m.GetGauge().GetValue() + float64(m.GetHistogram().GetSampleCount())
		}
	}
	return sum
}

// TestMetricsMoveWithRequests: /metrics exposes Dynamo's frontend families
// with the TTFT stages and each worker's vLLM families, and their counters
// count the requests and tokens served.
func TestMetricsMoveWithRequests(t *testing.T) {
	t.Parallel()
	cfg := linearCfg(2)
	cfg.Workers = 2
	ts := start(t, cfg, Options{Model: "m", Speedup: 10})
	before := scrape(t, ts.URL)
	assert.Zero(t, total(before, "dynamo_frontend_requests_total", map[string]string{"status": "success"}))
	assert.Zero(t, total(before, "vllm:generation_tokens_total", nil))
	require.Contains(t, before, "dynamo_frontend_ttft_stage_seconds")

	for range 3 {
		code, body := post(t, ts.URL+"/v1/completions", `{"prompt":"a b c d","max_tokens":4,"stream":true}`)
		require.Equal(t, http.StatusOK, code, body)
	}
	code, body := post(t, ts.URL+"/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":2}`)
	require.Equal(t, http.StatusOK, code, body)

	after := scrape(t, ts.URL)
	assert.Equal(t, 4.0, total(after, "dynamo_frontend_requests_total", map[string]string{"status": "success"}))
	assert.Equal(t, 4.0, total(after, "dynamo_frontend_time_to_first_token_seconds", nil))
	assert.Equal(t, 4.0, total(after, "dynamo_frontend_ttft_stage_seconds", map[string]string{"stage": "backend"}))
	assert.Equal(t, 14.0, total(after, "vllm:generation_tokens_total", nil))
	assert.Equal(t, 3*4.0+1, total(after, "vllm:prompt_tokens_total", nil)) // "hi": one token, no template
	for _, w := range []string{"worker-0", "worker-1"} {
		assert.Positive(t, total(after, "vllm:e2e_request_latency_seconds", map[string]string{"worker": w}), w)
	}
	assert.Zero(t, total(after, "dynamo_frontend_inflight_requests", nil))
}

// TestNoMetricsWhenDisabled: server_metrics.enabled false has no /metrics.
func TestNoMetricsWhenDisabled(t *testing.T) {
	t.Parallel()
	cfg := linearCfg(2)
	cfg.ServerMetrics.Enabled = false
	ts := start(t, cfg, Options{Speedup: 10})
	resp, err := http.Get(ts.URL + "/metrics")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
}

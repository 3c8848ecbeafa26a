package compare

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/servermetrics"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func common(name, server, family string, stats ...servermetrics.StatValue) servermetrics.CommonMetric {
	return servermetrics.CommonMetric{Name: name, Server: server, Family: family, Stats: stats, Unit: "ms"}
}

func TestCompareServerMetrics(t *testing.T) {
	ref := []servermetrics.CommonMetric{
		common("queue_time", "vllm", "vllm:request_queue_time_seconds", servermetrics.StatValue{Name: "count", Value: 10}, servermetrics.StatValue{Name: "avg", Value: 20}),
		common("requests_waiting", "dynamo", "dynamo_frontend_queued_requests", servermetrics.StatValue{Name: "avg", Value: 1}),
		common("requests_waiting", "vllm", "vllm:num_requests_waiting", servermetrics.StatValue{Name: "avg", Value: 2}),
		common("kv_cache_usage", "vllm", "vllm:kv_cache_usage_perc", servermetrics.StatValue{Name: "avg", Value: 0.5}),
		common("preemptions", "vllm", "vllm:num_preemptions", servermetrics.StatValue{Name: "total", Value: 0}),
	}
	cand := []servermetrics.CommonMetric{
		common("queue_time", "sglang", "sglang:queue_time_seconds", servermetrics.StatValue{Name: "count", Value: 10}, servermetrics.StatValue{Name: "avg", Value: 30}),
		common("requests_waiting", "vllm", "vllm:num_requests_waiting", servermetrics.StatValue{Name: "avg", Value: 3}),
		common("preemptions", "vllm", "vllm:num_preemptions", servermetrics.StatValue{Name: "total", Value: 4}),
		common("prompt_tokens", "vllm", "vllm:prompt_tokens", servermetrics.StatValue{Name: "total", Value: 4}),
	}
	rows := CompareServerMetrics(ref, cand)
	type key struct{ metric, stat, ref, cand string }
	var got []key
	for _, r := range rows {
		got = append(got, key{r.Metric, r.Stat, r.RefServer, r.CandServer})
	}
	assert.Equal(t, []key{
		{"queue_time", "count", "vllm", "sglang"}, // no shared server: each run's first
		{"queue_time", "avg", "vllm", "sglang"},
		{"requests_waiting", "avg", "vllm", "vllm"}, // the shared server only
		{"preemptions", "total", "vllm", "vllm"},
	}, got, "kv_cache_usage and prompt_tokens are in one run only")
	assert.InDelta(t, 50, *rows[1].ErrorPct, 1e-12)
	assert.NotEqual(t, rows[1].RefServer, rows[1].CandServer)
	assert.Nil(t, rows[3].ErrorPct, "reference 0, candidate 4: undefined")
	assert.Equal(t, 4.0, rows[3].Diff)
}

// TestServerMetricsSection: two run directories with exports get the
// section in every format; ttft_stage is left to the breakdown.
func TestServerMetricsSection(t *testing.T) {
	mk := func(queueSum float64) string {
		dir := t.TempDir()
		e := &servermetrics.Export{SchemaVersion: "1.0", Metrics: map[string]*servermetrics.Metric{
			"vllm:request_queue_time_seconds": {Type: servermetrics.KindHistogram, Series: []servermetrics.SeriesStats{{EndpointURL: "e",
				Stats: servermetrics.StatValues{{Name: "count", Value: 4}, {Name: "sum", Value: queueSum}}}}},
			"vllm:num_requests_running": {Type: servermetrics.KindGauge, Series: []servermetrics.SeriesStats{{EndpointURL: "e",
				Stats: servermetrics.StatValues{{Name: "avg", Value: 2}}}}},
		}}
		var buf bytes.Buffer
		require.NoError(t, servermetrics.WriteJSON(&buf, e))
		require.NoError(t, os.WriteFile(filepath.Join(dir, servermetrics.JSONName), buf.Bytes(), 0o644))
		src, err := os.ReadFile("../testdata/aiperf/qwen_concurrency1/profile_export_aiperf.json")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, results.ProfileJSONName), src, 0o644))
		return dir
	}
	a, err := Open(mk(0.4))
	require.NoError(t, err)
	b, err := Open(mk(0.6))
	require.NoError(t, err)
	r, err := Compare([]*Input{a}, []*Input{b}, Options{})
	require.NoError(t, err)
	require.Len(t, r.ServerMetrics, 3)
	assert.Equal(t, "queue_time", r.ServerMetrics[1].Metric)
	assert.InDelta(t, 100, r.ServerMetrics[1].Reference, 1e-9, "ms")
	assert.InDelta(t, 150, r.ServerMetrics[1].Candidate, 1e-9)
	for _, f := range []struct {
		name, want string
		write      func(*bytes.Buffer) error
	}{
		{"text", "+50.00%", func(w *bytes.Buffer) error { return WriteText(w, r) }},
		{"markdown", "+50.00%", func(w *bytes.Buffer) error { return WriteMarkdown(w, r, nil) }},
		{"json", `"error_pct": 50`, func(w *bytes.Buffer) error { return WriteJSON(w, r) }},
	} {
		var buf bytes.Buffer
		require.NoError(t, f.write(&buf), f.name)
		out := buf.String()
		assert.True(t, strings.Contains(out, "vllm:request_queue_time_seconds") && strings.Contains(out, f.want),
			"%s lacks the server metrics section", f.name)
	}
}

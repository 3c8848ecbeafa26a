package openaitest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewMetricsValidatesStages(t *testing.T) {
	t.Parallel()
	for name, stages := range map[string][]Stage{
		"empty":     {},
		"no name":   {{"", "none", 1}},
		"twice":     {{"a", "none", 0.5}, {"a", "none", 0.5}},
		"negative":  {{"a", "none", 1.5}, {"b", "none", -0.5}},
		"sum not 1": {{"a", "none", 0.5}, {"b", "none", 0.4}},
	} {
		_, err := NewMetrics("M", stages)
		assert.Error(t, err, name)
	}
	m, err := NewMetrics("M", nil)
	require.NoError(t, err)
	assert.Equal(t, DefaultStages(), m.stages)
}

func TestSplitAddsUpExactly(t *testing.T) {
	t.Parallel()
	m, err := NewMetrics("M", []Stage{{"a", "none", 1.0 / 3}, {"b", "prefill", 1.0 / 3}, {"c", "decode", 1.0 / 3}})
	require.NoError(t, err)
	for _, ttft := range []time.Duration{0, 1, 2, 7, time.Millisecond, 123456789, 40*time.Millisecond + 17} {
		parts := m.Split(ttft)
		var sum time.Duration
		for _, p := range parts {
			assert.GreaterOrEqual(t, p, time.Duration(0))
			sum += p
		}
		assert.Equal(t, ttft, sum, "%v", ttft)
	}
	assert.Equal(t, []time.Duration{1000, 1000, 1000}, m.Split(3000))
}

// histogram finds a histogram series by its labels in the gathered families.
func histogram(t *testing.T, fams []*dto.MetricFamily, name string, labels map[string]string) *dto.Histogram {
	t.Helper()
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if hasLabels(m, labels) {
				return m.GetHistogram()
			}
		}
	}
	require.FailNow(t, "no histogram", "%s %v", name, labels)
	return nil
}

func hasLabels(m *dto.Metric, labels map[string]string) bool {
	got := map[string]string{}
	for _, lp := range m.GetLabel() {
		got[lp.GetName()] = lp.GetValue()
	}
	for k, v := range labels {
		if got[k] != v {
			return false
		}
	}
	return true
}

func metricValue(fams []*dto.MetricFamily, name string, labels map[string]string) (float64, bool) {
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if hasLabels(m, labels) {
				return m.GetCounter().GetValue() + m.GetGauge().GetValue(), true
			}
		}
	}
	return 0, false
}

// TestServerObservesFirstToken: each request's TTFT is observed once, at
// its first token, its stages add up to it, and faults observe none.
func TestServerObservesFirstToken(t *testing.T) {
	t.Parallel()
	m, err := NewMetrics("fallback", nil)
	require.NoError(t, err)
	srv := &Server{TTFT: 15 * time.Millisecond, ITL: time.Millisecond, Tokens: 4, Metrics: m,
		FaultFor: func(n int) Fault {
			if n == 2 {
				return HTTP500
			}
			return None
		}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	for _, body := range []string{
		`{"model":"M","messages":[{"role":"user","content":"hi"}],"stream":true}`,
		`{"model":"M","prompt":"hi"}`,
		`{"model":"M","prompt":"hi","stream":true}`, // HTTP 500
	} {
		path := "/v1/completions"
		if strings.Contains(body, "messages") {
			path = "/v1/chat/completions"
		}
		resp, err := http.Post(ts.URL+path, "application/json", strings.NewReader(body))
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	fams, err := m.Registry().Gather()
	require.NoError(t, err)
	model := map[string]string{"model": "M"}
	ttft := histogram(t, fams, FamilyTTFT, model)
	assert.EqualValues(t, 2, ttft.GetSampleCount())
	assert.GreaterOrEqual(t, ttft.GetSampleSum(), 0.030)
	var stageSum float64
	for _, s := range DefaultStages() {
		h := histogram(t, fams, FamilyTTFTStage, map[string]string{"model": "M", "stage": s.Stage, "phase": s.Phase})
		assert.EqualValues(t, 2, h.GetSampleCount(), s.Stage)
		stageSum += h.GetSampleSum()
	}
	assert.InDelta(t, ttft.GetSampleSum(), stageSum, 1e-9)

	for _, c := range []struct {
		labels map[string]string
		want   float64
	}{
		{map[string]string{"model": "M", "endpoint": "chat_completions", "status": "success"}, 1},
		{map[string]string{"model": "M", "endpoint": "completions", "status": "success"}, 1},
		{map[string]string{"model": "M", "endpoint": "completions", "status": "error"}, 1},
	} {
		v, ok := metricValue(fams, FamilyRequests, c.labels)
		assert.True(t, ok, "%v", c.labels)
		assert.Equal(t, c.want, v, "%v", c.labels)
	}
	inflight, ok := metricValue(fams, FamilyInflight, model)
	assert.True(t, ok)
	assert.Zero(t, inflight)
	// The fallback model's series exist from the start, with zeros.
	assert.EqualValues(t, 0, histogram(t, fams, FamilyTTFT, map[string]string{"model": "fallback"}).GetSampleCount())
}

func TestMetricsFailScrape(t *testing.T) {
	t.Parallel()
	m, err := NewMetrics("M", nil)
	require.NoError(t, err)
	m.FailScrape = func(n int) bool { return n == 1 }
	ts := httptest.NewServer(&Server{Metrics: m})
	defer ts.Close()
	var codes []int
	for range 3 {
		resp, err := http.Get(ts.URL + "/metrics")
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		codes = append(codes, resp.StatusCode)
		if resp.StatusCode == http.StatusOK {
			assert.Contains(t, string(body), FamilyTTFTStage+`_bucket{model="M",phase="aggregated",stage="backend",le="0.0001"} 0`)
		}
	}
	assert.Equal(t, []int{200, 500, 200}, codes)
	assert.Equal(t, 3, m.Scrapes())
}

package servermetrics

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/simbench/simbench/internal/warning"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const ep = "http://localhost:8000/metrics"

func hist(labels map[string]string, count, sum float64, cum ...float64) Series {
	bounds := []float64{0.01, 0.1, 1, math.Inf(1)}
	s := Series{Labels: labels, Count: count, Sum: sum}
	for i, c := range cum {
		s.Buckets = append(s.Buckets, Bucket{UpperBound: bounds[i], Count: c})
	}
	return s
}

func scrapeAt(t int64, fams ...Family) Scrape {
	return Scrape{Endpoint: ep, AtNs: t, LatencyNs: 2e6, Families: fams}
}

// TestExportStatsOverWindow checks AIPerf's per-type statistics: counter
// and histogram deltas from the last sample before the window, gauge
// statistics from the samples inside it.
func TestExportStatsOverWindow(t *testing.T) {
	c := NewCollector([]string{ep})
	gauge := func(v float64) Family {
		return Family{Name: "vllm:num_requests_running", Kind: KindGauge, Help: "running", Series: []Series{{Value: v}}}
	}
	counter := func(v float64) Family {
		return Family{Name: "vllm:prompt_tokens_total", Kind: KindCounter, Series: []Series{{Value: v}}}
	}
	h := func(count, sum float64, cum ...float64) Family {
		return Family{Name: "vllm:time_to_first_token_seconds", Kind: KindHistogram,
			Series: []Series{hist(map[string]string{"model_name": "m"}, count, sum, cum...)}}
	}
	c.Add(scrapeAt(0, gauge(9), counter(100), h(5, 0.5, 5, 5, 5, 5)))         // before the window: reference only
	c.Add(scrapeAt(1e9, gauge(1), counter(150), h(7, 0.6, 6, 7, 7, 7)))       // in the window
	c.Add(scrapeAt(2e9, gauge(3), counter(400), h(9, 2.5, 6, 8, 8, 9)))       // in the window
	c.Add(scrapeAt(5e9, gauge(100), counter(1e6), h(99, 99, 99, 99, 99, 99))) // after it
	e := c.Export(Window{StartNs: 1e9 - 1, EndNs: 2e9 + 1}, nil)

	g := e.Metrics["vllm:num_requests_running"]
	require.NotNil(t, g)
	assert.Equal(t, KindGauge, g.Type)
	assert.Equal(t, "running", g.Description)
	assert.Equal(t, "", g.Unit) // no suffix AIPerf knows
	st := g.Series[0].Stats
	for name, want := range map[string]float64{"avg": 2, "min": 1, "max": 3, "std": math.Sqrt2, "p50": 2, "p25": 1.5} {
		got, ok := st.Get(name)
		require.True(t, ok, name)
		assert.InDelta(t, want, got, 1e-12, name)
	}

	ct := e.Metrics["vllm:prompt_tokens_total"].Series[0].Stats
	assert.Equal(t, StatValues{{"total", 300}, {"rate", 300 / (float64(2e9+1-(1e9-1)) / 1e9)}}, ct)

	hs := e.Metrics["vllm:time_to_first_token_seconds"].Series[0]
	assert.Equal(t, map[string]string{"model_name": "m"}, hs.Labels)
	count, _ := hs.Stat("count")
	sum, _ := hs.Stat("sum")
	avg, _ := hs.Stat("avg")
	assert.Equal(t, 4.0, count)
	assert.InDelta(t, 2.0, sum, 1e-12)
	assert.InDelta(t, 0.5, avg, 1e-12)
	assert.Equal(t, StatValues{{"0.01", 1}, {"0.1", 3}, {"1", 3}, {"+Inf", 4}}, hs.Buckets)
	p50, _ := hs.Stat("p50_estimate")
	assert.InDelta(t, 0.01+0.09*(2-1)/2, p50, 1e-12) // rank 2 falls in (0.01, 0.1]
	p99, _ := hs.Stat("p99_estimate")
	assert.Equal(t, 1.0, p99) // the +Inf bucket: the highest finite bound

	info := e.Summary.EndpointInfo[ep]
	require.NotNil(t, info)
	assert.Equal(t, 4, info.TotalFetches)
	assert.Equal(t, []string{ep}, e.Summary.EndpointsSuccessful)
}

func TestExportCounterResetClampsAndWarns(t *testing.T) {
	c := NewCollector([]string{ep})
	fam := func(v float64) Family {
		return Family{Name: "requests_total", Kind: KindCounter, Series: []Series{{Value: v}}}
	}
	c.Add(scrapeAt(0, fam(50)))
	c.Add(scrapeAt(2e9, fam(10)))
	e := c.Export(Window{StartNs: 1e9, EndNs: 3e9}, nil)
	total, _ := e.Metrics["requests_total"].Series[0].Stat("total")
	assert.Equal(t, 0.0, total)
	require.Len(t, e.Simbench.Warnings, 1)
	assert.Contains(t, e.Simbench.Warnings[0].Error(), "counter went down")
}

func TestExportHistogramResetNotSummarised(t *testing.T) {
	c := NewCollector([]string{ep})
	fam := func(count float64) Family {
		return Family{Name: "x_seconds", Kind: KindHistogram, Series: []Series{hist(nil, count, count, 0, 0, count, count)}}
	}
	c.Add(scrapeAt(0, fam(10)))
	c.Add(scrapeAt(2e9, fam(3)))
	c.Add(scrapeAt(3e9, fam(12)))
	e := c.Export(Window{StartNs: 1e9, EndNs: 4e9}, nil)
	s := e.Metrics["x_seconds"].Series[0]
	assert.Equal(t, StatValues{{"count", 0}}, s.Stats)
	assert.Contains(t, strings.Join(warning.Messages(e.Simbench.Warnings), "\n"), "reset")
}

func TestScrapeFailureIsAGapAndAWarning(t *testing.T) {
	c := NewCollector([]string{ep, "http://other:9/metrics"})
	fam := func(v float64) Family { return Family{Name: "g", Kind: KindGauge, Series: []Series{{Value: v}}} }
	c.Add(scrapeAt(0, fam(1)))
	c.Fail(ep, errors.New("HTTP 500"))
	c.Add(scrapeAt(2e9, fam(3)))
	for i := 0; i < 5; i++ {
		c.Fail("http://other:9/metrics", errors.New("connection refused"))
	}
	e := c.Export(Window{StartNs: 0, EndNs: 3e9}, nil)
	avg, _ := e.Metrics["g"].Series[0].Stat("avg")
	assert.Equal(t, 2.0, avg)
	assert.Equal(t, []string{ep}, e.Summary.EndpointsSuccessful)
	assert.Equal(t, []string{ep, "http://other:9/metrics"}, e.Summary.EndpointsConfigured)
	assert.Equal(t, map[string]int{ep: 1, "http://other:9/metrics": 5}, e.Simbench.FailedFetches)
	assert.Equal(t, 3, e.Summary.EndpointInfo[ep].TotalFetches)
	w := warning.Messages(c.Warnings())
	assert.Len(t, w, 5) // 1 + the first 3 of the other + "5 scrapes failed in all"
	assert.Contains(t, w[4], "5 scrapes failed in all")
}

func TestHistogramQuantile(t *testing.T) {
	inf := math.Inf(1)
	bounds := []float64{1, 2, 4, inf}
	tests := []struct {
		name  string
		q     float64
		cum   []float64
		total float64
		want  float64
	}{
		{"first bucket from 0", 0.25, []float64{4, 8, 8, 8}, 8, 0.5},
		{"middle bucket", 0.75, []float64{4, 8, 8, 8}, 8, 1.5},
		{"skips empty buckets", 0.5, []float64{0, 0, 10, 10}, 10, 3},
		{"+Inf bucket gives highest finite bound", 0.99, []float64{1, 1, 1, 10}, 10, 4},
		{"median exactly at a bound", 0.5, []float64{5, 10, 10, 10}, 10, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.InDelta(t, tt.want, histogramQuantile(tt.q, bounds, tt.cum, tt.total), 1e-12)
		})
	}
	assert.True(t, math.IsNaN(histogramQuantile(0.5, bounds, []float64{0, 0, 0, 0}, 0)))
}

func TestStatValuesJSONRoundTrip(t *testing.T) {
	in := StatValues{{"count", 3}, {"sum", 0.25}, {"avg", math.NaN()}, {"p50_estimate", 1e-5}}
	b, err := in.MarshalJSON()
	require.NoError(t, err)
	assert.Equal(t, `{"count":3,"sum":0.25,"p50_estimate":1e-05}`, string(b))
	var out StatValues
	require.NoError(t, out.UnmarshalJSON([]byte(`{"count":3,"sum":0.25,"median":null,"p50_estimate":1e-05}`)))
	assert.Equal(t, StatValues{{"count", 3}, {"sum", 0.25}, {"p50_estimate", 1e-5}}, out)
}

func TestExportJSONRoundTrip(t *testing.T) {
	c := NewCollector([]string{ep})
	fam := func(n float64) Family {
		return Family{Name: "dynamo_frontend_time_to_first_token_seconds", Kind: KindHistogram, Help: "TTFT",
			Series: []Series{hist(map[string]string{"model": "m"}, n, n/10, n, n, n, n)}}
	}
	c.Add(scrapeAt(1, fam(0)))
	c.Add(scrapeAt(3e9, fam(30)))
	e := c.Export(Window{StartNs: 2, EndNs: 3e9 + 2}, map[string]any{"endpoint": "x"})
	var buf bytes.Buffer
	require.NoError(t, WriteJSON(&buf, e))
	assert.NotContains(t, buf.String(), "NaN")
	assert.Contains(t, buf.String(), `"count": 30,`)
	back, err := ReadJSON(&buf)
	require.NoError(t, err)
	assert.Equal(t, e.Metrics, back.Metrics)
	assert.Equal(t, e.Summary.EndpointsConfigured, back.Summary.EndpointsConfigured)
}

func TestParseExpositionText(t *testing.T) {
	text := `# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="Qwen/Qwen3-0.6B"} 4.0
# HELP vllm:prompt_tokens_total Number of prefill tokens processed.
# TYPE vllm:prompt_tokens_total counter
vllm:prompt_tokens_total{engine="0",model_name="Qwen/Qwen3-0.6B"} 1234.0
# HELP vllm:request_queue_time_seconds Histogram of time spent in WAITING phase for request.
# TYPE vllm:request_queue_time_seconds histogram
vllm:request_queue_time_seconds_bucket{engine="0",le="0.3",model_name="Qwen/Qwen3-0.6B"} 2.0
vllm:request_queue_time_seconds_bucket{engine="0",le="0.5",model_name="Qwen/Qwen3-0.6B"} 3.0
vllm:request_queue_time_seconds_bucket{engine="0",le="+Inf",model_name="Qwen/Qwen3-0.6B"} 4.0
vllm:request_queue_time_seconds_count{engine="0",model_name="Qwen/Qwen3-0.6B"} 4.0
vllm:request_queue_time_seconds_sum{engine="0",model_name="Qwen/Qwen3-0.6B"} 1.25
# HELP rpc_duration_seconds A summary.
# TYPE rpc_duration_seconds summary
rpc_duration_seconds{quantile="0.5"} 0.2
rpc_duration_seconds_sum 10
rpc_duration_seconds_count 50
`
	fams, err := ParseExposition(strings.NewReader(text), expfmt.NewFormat(expfmt.TypeTextPlain))
	require.NoError(t, err)
	require.Len(t, fams, 3, "the summary is dropped")
	assert.Equal(t, "vllm:num_requests_running", fams[0].Name)
	assert.Equal(t, "vllm:prompt_tokens", fams[1].Name, "counters are keyed without _total, as AIPerf does")
	assert.Equal(t, KindCounter, fams[1].Kind)
	assert.Equal(t, 1234.0, fams[1].Series[0].Value)
	h := fams[2].Series[0]
	assert.Equal(t, map[string]string{"engine": "0", "model_name": "Qwen/Qwen3-0.6B"}, h.Labels)
	assert.Equal(t, 4.0, h.Count)
	assert.Equal(t, 1.25, h.Sum)
	assert.Equal(t, []Bucket{{0.3, 2}, {0.5, 3}, {math.Inf(1), 4}}, h.Buckets)

	_, err = ParseExposition(strings.NewReader("not a metric line {{{\n"), expfmt.NewFormat(expfmt.TypeTextPlain))
	require.Error(t, err)
}

func TestInferUnit(t *testing.T) {
	for fam, want := range map[string]string{
		"vllm:time_to_first_token_seconds": "seconds",
		"vllm:prompt_tokens":               "tokens",
		"dynamo_frontend_requests_total":   "requests",
		"vllm:kv_cache_usage_perc":         "percent",
		"sglang:num_running_reqs":          "requests",
		"vllm:num_preemptions_total":       "count",
		"vllm:request_success_total":       "requests",
		"weird":                            "",
	} {
		assert.Equal(t, want, inferUnit(fam), fam)
	}
}

func TestVocabularyFamiliesAreUnique(t *testing.T) {
	seen := map[string]string{}
	for _, m := range Vocabulary() {
		require.NotEmpty(t, m.Families, m.Name)
		for _, f := range m.Families {
			prev, dup := seen[f.Family]
			require.False(t, dup, "%s listed under %s and %s", f.Family, prev, m.Name)
			seen[f.Family] = m.Name
		}
	}
	info, _, ok := LookupFamily("vllm:prompt_tokens_total")
	require.True(t, ok, "a counter is found by its exposition name too")
	assert.Equal(t, "prompt_tokens", info.Name)
	info, server, ok := LookupFamily("sglang:num_queue_reqs")
	require.True(t, ok)
	assert.Equal(t, "requests_waiting", info.Name)
	assert.Equal(t, SGLang, server)
}

// BenchmarkCollectorAdd measures one scrape of a worker's gauges (what the
// simulator and a long run add thousands of times).
func BenchmarkCollectorAdd(b *testing.B) {
	labels := map[string]string{"model_name": "Qwen/Qwen3-0.6B", "engine": "0"}
	fams := []Family{
		{Name: "vllm:num_requests_running", Kind: KindGauge, Series: []Series{{Labels: labels, Value: 3}}},
		{Name: "vllm:num_requests_waiting", Kind: KindGauge, Series: []Series{{Labels: labels, Value: 1}}},
		{Name: "vllm:kv_cache_usage_perc", Kind: KindGauge, Series: []Series{{Labels: labels, Value: 0.4}}},
	}
	c := NewCollector([]string{ep})
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		c.Add(Scrape{Endpoint: ep, AtNs: int64(i), Families: fams})
	}
}

// TestSeriesBornMidRunCountsFromZero: servers create a labelled series at
// its first observation, so a series missing from the baseline scrape of
// an endpoint that answered started at zero.
func TestSeriesBornMidRunCountsFromZero(t *testing.T) {
	c := NewCollector([]string{ep})
	other := Family{Name: "up", Kind: KindGauge, Series: []Series{{Value: 1}}}
	reqs := func(v float64) Family {
		return Family{Name: "requests_total", Kind: KindCounter, Series: []Series{{Labels: map[string]string{"status": "ok"}, Value: v}}}
	}
	h := Family{Name: "x_seconds", Kind: KindHistogram, Series: []Series{hist(nil, 2, 0.3, 1, 2, 2, 2)}}
	c.Add(scrapeAt(0, other))
	c.Add(scrapeAt(2e9, other, reqs(2), h))
	c.Add(scrapeAt(3e9, other, reqs(8), h))
	e := c.Export(Window{StartNs: 1e9, EndNs: 4e9}, nil)
	total, _ := e.Metrics["requests_total"].Series[0].Stat("total")
	assert.Equal(t, 8.0, total)
	count, _ := e.Metrics["x_seconds"].Series[0].Stat("count")
	assert.Equal(t, 2.0, count)
	assert.Equal(t, StatValues{{"0.01", 1}, {"0.1", 2}, {"1", 2}, {"+Inf", 2}}, e.Metrics["x_seconds"].Series[0].Buckets)

	// Without an earlier scrape of the endpoint the first sample is the reference.
	c = NewCollector([]string{ep})
	c.Add(scrapeAt(2e9, reqs(2)))
	c.Add(scrapeAt(3e9, reqs(8)))
	total, _ = c.Export(Window{StartNs: 1e9, EndNs: 4e9}, nil).Metrics["requests_total"].Series[0].Stat("total")
	assert.Equal(t, 6.0, total)
}

// TestReadAIPerfServerMetricsShapes reads the shapes AIPerf's own export
// uses: null labels, units and buckets, timeslices, counters without
// _total, a histogram without observations, unknown keys.
func TestReadAIPerfServerMetricsShapes(t *testing.T) {
	doc := `{
  "schema_version": "1.0", "aiperf_version": "0.10.0", "benchmark_id": null,
  "summary": {"endpoints_configured": ["http://localhost:8000/metrics"],
    "endpoints_successful": ["http://localhost:8000/metrics"],
    "start_time": "2025-12-10T16:07:13.596361", "end_time": "2025-12-10T16:07:35.749758",
    "endpoint_info": {"http://localhost:8000/metrics": {"total_fetches": 144, "avg_fetch_latency_ms": 2.5,
      "unique_updates": 72, "duration_seconds": 22.66, "median_update_interval_ms": null}}},
  "metrics": {
    "dynamo_frontend_requests": {"type": "counter", "description": "Total number of requests processed", "unit": null,
      "series": [{"endpoint_url": "http://localhost:8000/metrics", "labels": null,
        "stats": {"total": 50.0, "rate": 2.2, "rate_avg": 2.3, "rate_min": 0.0, "rate_max": 9.0, "rate_std": 1.0},
        "timeslices": [{"start_ns": 1, "end_ns": 2, "total": 5.0, "rate": 2.5, "is_complete": false}]}]},
    "dynamo_frontend_time_to_first_token_seconds": {"type": "histogram", "description": "TTFT", "unit": "seconds",
      "series": [{"endpoint_url": "http://localhost:8000/metrics", "labels": {"model": "Qwen/Qwen3-0.6B"},
        "stats": {"count": 50, "sum": 2.2072624189999814, "avg": 0.04414524837999963, "p99_estimate": 0.09},
        "buckets": {"0.05": 35, "0.1": 50, "+Inf": 50}},
        {"endpoint_url": "http://localhost:8000/metrics", "labels": {"model": "other"},
        "stats": {"count": 0}, "buckets": null}]}
  },
  "input_config": {"endpoint": {"url": "localhost:8000"}}
}`
	e, err := ReadJSON(strings.NewReader(doc))
	require.NoError(t, err)
	total, ok := e.Metrics["dynamo_frontend_requests"].Series[0].Stat("total")
	require.True(t, ok)
	assert.Equal(t, 50.0, total)
	h := e.Metrics["dynamo_frontend_time_to_first_token_seconds"]
	assert.Equal(t, StatValues{{"0.05", 35}, {"0.1", 50}, {"+Inf", 50}}, h.Series[0].Buckets)
	assert.Nil(t, h.Series[1].Buckets)
	assert.Nil(t, e.Summary.EndpointInfo["http://localhost:8000/metrics"].MedianUpdateIntervalMs)
	info, server, ok := LookupFamily("dynamo_frontend_requests")
	require.True(t, ok)
	assert.Equal(t, "requests_finished", info.Name)
	assert.Equal(t, Dynamo, server)

	_, err = ReadJSON(strings.NewReader(`{"schema_version": "1.0"}`))
	assert.ErrorContains(t, err, "not a server metrics export")
}

// TestExportEdgeCases: counter units despite the stripped _total, a
// histogram layout change after the window, a type conflict warned once,
// and an idle histogram sharing its samples.
func TestExportEdgeCases(t *testing.T) {
	c := NewCollector([]string{ep})
	preempt := Family{Name: "vllm:num_preemptions", Kind: KindCounter, Series: []Series{{Value: 1}}}
	h := func(count float64, bounds ...float64) Family {
		s := Series{Count: count, Sum: count}
		for _, b := range bounds {
			s.Buckets = append(s.Buckets, Bucket{UpperBound: b, Count: count})
		}
		return Family{Name: "x_seconds", Kind: KindHistogram, Series: []Series{s}}
	}
	asGauge := Family{Name: "x_seconds", Kind: KindGauge, Series: []Series{{Value: 1}}}
	inf := math.Inf(1)
	c.Add(scrapeAt(0, preempt, h(1, 1, inf)))
	c.Add(scrapeAt(1e9, preempt, h(3, 1, inf), asGauge))
	c.Add(scrapeAt(2e9, preempt, h(3, 1, inf), asGauge))
	c.Add(scrapeAt(5e9, preempt, h(9, 0.5, 1, inf))) // a restart with a new layout, after the window
	e := c.Export(Window{StartNs: 1, EndNs: 3e9}, nil)
	assert.Equal(t, "count", e.Metrics["vllm:num_preemptions"].Unit)
	s := e.Metrics["x_seconds"].Series[0]
	assert.Equal(t, StatValues{{"1", 2}, {"+Inf", 2}}, s.Buckets, "the window's layout")
	n := 0
	for _, w := range warning.Messages(c.Warnings()) {
		if strings.Contains(w, "x_seconds is a gauge") {
			n++
		}
	}
	assert.Equal(t, 1, n, "one warning for the conflicting type")
	pts := c.order[1].points
	assert.Same(t, pts[1].h, pts[2].h, "an unchanged histogram sample is shared")
	assert.Equal(t, 3, e.Summary.EndpointInfo[ep].UniqueUpdates, "the third scrape changed nothing")
}

package sim

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/servermetrics"
	"github.com/simbench/simbench/traces"
)

// runMetrics simulates wl with server metrics and returns the records, the
// summary, the collector and the export over the profiling window.
func runMetrics(t *testing.T, cfg Config, wl *traces.Workload) ([]*results.Record, *Summary, *servermetrics.Collector, *servermetrics.Export) {
	t.Helper()
	col := servermetrics.NewCollector(ServerMetricsEndpoints(cfg))
	recs, sum := runAll(t, cfg, wl, WithServerMetrics(col))
	return recs, sum, col, col.Export(ServerMetricsWindow(sum), nil)
}

func metricsCfg(engine string, workers int) Config {
	cfg := DefaultConfig()
	cfg.Engine.Type, cfg.Workers, cfg.Seed = engine, workers, 3
	cfg.Engine.BlockSize, cfg.Engine.NumGPUBlocks, cfg.Engine.MaxNumSeqs = 16, 150, 8
	cfg.Engine.MaxNumBatchedTokens = 512
	cfg.Engine.LlamaCpp = LlamaCppConfig{Parallel: 3, CtxSize: 3 * 2300, NBatch: 256}
	cfg.Router.Policy = "kv"
	cfg.Frontend = FrontendConfig{RequestOverheadMs: 1.5, ResponseOverheadMs: 0.7}
	cfg.Client.GapMs = 2
	cfg.ServerMetrics.IntervalMs = 50
	return cfg
}

// meanMs is the mean over completed non-warmup records of f, in ms.
func meanMs(recs []*results.Record, f func(r *results.Record) int64) (float64, int) {
	var sum float64
	n := 0
	for _, r := range recs {
		if r.Warmup || r.Error != nil {
			continue
		}
		sum += float64(f(r))
		n++
	}
	return sum / float64(n) / 1e6, n
}

func stageNs(r *results.Record, names ...string) int64 {
	var ns int64
	for _, st := range r.Sim.TTFTBreakdown {
		for _, n := range names {
			if st.Name == n {
				ns += st.Ns
			}
		}
	}
	return ns
}

// The Dynamo breakdown of the export is additive, counts the completed
// non-warmup requests, and its stage means are the means of the records'
// own stages; vLLM's queue + prefill add up to its TTFT.
func TestServerMetricsBreakdownMatchesRecords(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			wl := randomWorkload(seed, 120, seed%2 == 0)
			recs, _, _, e := runMetrics(t, metricsCfg("vllm", 1+int(seed%2)), wl)
			bs := servermetrics.TTFTBreakdowns(e)
			require.Len(t, bs, 2)
			dyn, vllm := bs[0], bs[1]
			require.Equal(t, servermetrics.Dynamo, dyn.Server)
			require.Equal(t, servermetrics.VLLM, vllm.Server)

			ttft, n := meanMs(recs, func(r *results.Record) int64 { return r.Chunks[0].AtNs - r.StartNs })
			require.Positive(t, n)
			assert.Equal(t, float64(n), dyn.TTFTCount, "TTFT observations = completed non-warmup requests")
			assert.InEpsilon(t, ttft, dyn.TTFTMeanMs, 1e-9)
			assert.True(t, dyn.Additive, dyn.Reason)
			assert.InEpsilon(t, dyn.TTFTMeanMs, dyn.StageSumMs, 1e-9)

			want := map[string]float64{}
			want["preprocess/none"], _ = meanMs(recs, func(r *results.Record) int64 { return stageNs(r, StageFrontendRequest) })
			want["route/aggregated"] = 0
			want["backend/aggregated"], _ = meanMs(recs, func(r *results.Record) int64 {
				return stageNs(r, StageQueueWait, StagePrefill, StageBehindOther)
			})
			want["response_postprocess/none"], _ = meanMs(recs, func(r *results.Record) int64 { return stageNs(r, StageFirstEmission) })
			got := map[string]float64{}
			for _, st := range dyn.Stages {
				got[st.Key()] = st.MeanMs
				assert.Equal(t, float64(n), st.Count, st.Key())
			}
			require.Len(t, got, len(want))
			for k, v := range want {
				assert.InDelta(t, v, got[k], 1e-9*max(1, v), k)
			}

			engineTTFT, _ := meanMs(recs, func(r *results.Record) int64 { return r.Sim.PrefillEndNs - r.AckNs })
			assert.InEpsilon(t, engineTTFT, vllm.TTFTMeanMs, 1e-9)
			assert.True(t, vllm.Additive, vllm.Reason)
			assert.InEpsilon(t, vllm.TTFTMeanMs, vllm.StageSumMs, 1e-9)
			queue, _ := meanMs(recs, func(r *results.Record) int64 { return r.Sim.QueueWaitNs })
			assert.InDelta(t, queue, vllm.Stages[0].MeanMs, 1e-9*max(1, queue))
		})
	}
}

// Gauges are sampled at the baseline, every interval, at the profiling
// boundary after a warmup phase and at the end; histograms only at the
// full scrapes.
func TestServerMetricsScrapeSchedule(t *testing.T) {
	wl := randomWorkload(1, 80, false) // seed 1 has warmup requests
	require.True(t, wl.Requests[0].Warmup)
	cfg := metricsCfg("vllm", 2)
	_, sum, col, e := runMetrics(t, cfg, wl)
	require.Positive(t, sum.ProfileStartNs)
	interval := msToNs(cfg.ServerMetrics.IntervalMs)
	intervals := int((sum.SimulatedNs - 1) / interval)
	for _, ep := range ServerMetricsEndpoints(cfg) {
		assert.Equal(t, intervals+3, col.Scrapes(ep), ep) // baseline, boundary, final
	}
	running := e.Metrics["vllm:num_requests_running"]
	require.NotNil(t, running)
	require.Len(t, running.Series, 2)
	win := ServerMetricsWindow(sum)
	inWindow := 0
	for k := int64(1); k*interval < sum.SimulatedNs; k++ {
		if at := Epoch + k*interval; at >= win.StartNs && at <= win.EndNs {
			inWindow++
		}
	}
	for _, s := range running.Series {
		assert.Equal(t, map[string]string{"model_name": cfg.Hardware.Model, "engine": "0"}, s.Labels)
		max, _ := s.Stat("max")
		assert.LessOrEqual(t, max, float64(cfg.Engine.MaxNumSeqs))
		assert.Positive(t, max)
	}
	info := e.Summary.EndpointInfo[FrontendEndpoint]
	require.NotNil(t, info)
	assert.Equal(t, intervals+3, info.TotalFetches)
	// Gauge statistics use the samples inside the window: the interval
	// samples and the final one.
	assert.Positive(t, inWindow)
	inflight := e.Metrics["dynamo_frontend_inflight_requests"]
	require.NotNil(t, inflight)
	p50, ok := inflight.Series[0].Stat("p50")
	require.True(t, ok)
	assert.GreaterOrEqual(t, p50, 0.0)
}

// Every engine exposes its own families under the vocabulary's names.
func TestServerMetricsEngineFamilies(t *testing.T) {
	want := map[string][]string{
		"vllm": {"vllm:time_to_first_token_seconds", "vllm:request_queue_time_seconds", "vllm:request_prefill_time_seconds",
			"vllm:request_decode_time_seconds", "vllm:e2e_request_latency_seconds", "vllm:prompt_tokens",
			"vllm:generation_tokens", "vllm:prefix_cache_queries", "vllm:prefix_cache_hits",
			"vllm:num_preemptions", "vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc",
			"vllm:request_prompt_tokens", "vllm:request_generation_tokens"},
		"sglang": {"sglang:time_to_first_token_seconds", "sglang:queue_time_seconds", "sglang:e2e_request_latency_seconds",
			"sglang:num_running_reqs", "sglang:num_queue_reqs", "sglang:token_usage", "sglang:cached_tokens",
			"sglang:prompt_tokens", "sglang:generation_tokens"},
		"llamacpp": {"llamacpp:requests_processing", "llamacpp:requests_deferred", "llamacpp:kv_cache_usage_ratio",
			"llamacpp:prompt_tokens", "llamacpp:tokens_predicted"},
	}
	frontend := []string{"dynamo_frontend_time_to_first_token_seconds", "dynamo_frontend_ttft_stage_seconds",
		"dynamo_frontend_inflight_requests", "dynamo_frontend_requests", "dynamo_frontend_request_duration_seconds",
		"dynamo_frontend_input_sequence_tokens", "dynamo_frontend_output_sequence_tokens"}
	for engine, fams := range want {
		t.Run(engine, func(t *testing.T) {
			wl := randomWorkload(5, 60, false)
			recs, _, _, e := runMetrics(t, metricsCfg(engine, 2), wl)
			for _, name := range append(fams, frontend...) {
				m, ok := e.Metrics[name]
				if !assert.True(t, ok, name) {
					continue
				}
				info, _, known := servermetrics.LookupFamily(name)
				if known {
					assert.Equal(t, info.Kind, m.Type, name)
				}
			}
			var isl, gen float64
			for _, r := range recs {
				if !r.Warmup && r.Error == nil {
					isl += float64(r.InputTokens)
					gen += float64(r.OutputTokens)
				}
			}
			prefix := map[string]string{"vllm": "vllm:", "sglang": "sglang:", "llamacpp": "llamacpp:"}[engine]
			assert.Equal(t, isl, counterTotal(e, prefix+"prompt_tokens"))
			genName := prefix + "generation_tokens"
			if engine == "llamacpp" {
				genName = "llamacpp:tokens_predicted"
			}
			assert.Equal(t, gen, counterTotal(e, genName))
			bs := servermetrics.TTFTBreakdowns(e)
			require.NotEmpty(t, bs)
			assert.True(t, bs[0].Additive, bs[0].Reason)
		})
	}
}

func counterTotal(e *servermetrics.Export, family string) float64 {
	var total float64
	if m, ok := e.Metrics[family]; ok {
		for i := range m.Series {
			v, _ := m.Series[i].Stat("total")
			total += v
		}
	}
	return total
}

// Interval scrapes fill the gauge families of the first gathered scrape;
// they must equal what the registry would expose for the same state.
func TestIntervalGaugesMatchGather(t *testing.T) {
	for _, engine := range []string{"vllm", "sglang", "llamacpp"} {
		cfg := metricsCfg(engine, 1)
		wl := workload(req(0, 100, 5), req(0, 200, 5))
		s, err := newSimulator(cfg, wl, nil, nil)
		require.NoError(t, err)
		f := newFrontend("m", false, false)
		e := newEngineMetrics(s.workers[0], "m", 1000)
		for _, ep := range []*endpoint{&f.endpoint, &e.endpoint} {
			_, err := ep.full()
			require.NoError(t, err)
		}
		w := s.workers[0]
		f.inflight = 2
		w.waiting.pushBack(&request{isl: 10, osl: 1})
		w.running = append(w.running, &request{isl: 10, osl: 1})
		if w.kv != nil {
			w.kv.alloc(3)
		}
		for _, ep := range []*endpoint{&f.endpoint, &e.endpoint} {
			vals := make([]float64, 0, len(ep.gauges))
			for _, g := range ep.gauges {
				vals = append(vals, g.value())
			}
			col := servermetrics.NewCollector(nil)
			addIntervals(col, []*endpoint{ep}, []int64{1}, vals)
			fams, err := ep.full()
			require.NoError(t, err)
			var gauges []servermetrics.Family
			for _, fm := range fams {
				if fm.Kind == servermetrics.KindGauge {
					gauges = append(gauges, fm)
				}
			}
			assert.Equal(t, gauges, ep.gaugeFams, "%s %s", engine, ep.url)
			assert.Positive(t, gauges[0].Series[0].Value+gauges[len(gauges)-1].Series[0].Value, "%s %s", engine, ep.url)
		}
	}
}

func TestServerMetricsDisabled(t *testing.T) {
	cfg := metricsCfg("vllm", 1)
	cfg.ServerMetrics.Enabled = false
	col := servermetrics.NewCollector(ServerMetricsEndpoints(cfg))
	runAll(t, cfg, randomWorkload(2, 20, false), WithServerMetrics(col))
	assert.Equal(t, 0, col.Scrapes(FrontendEndpoint))

	dir := t.TempDir()
	files, err := WriteRun(context.Background(), dir, cfg, randomWorkload(2, 20, false), nil)
	require.NoError(t, err)
	assert.Nil(t, files.ServerMetrics)
	assert.NoFileExists(t, dir+"/"+servermetrics.JSONName)
}

func TestServerMetricsConfig(t *testing.T) {
	cfg, err := ParseConfig([]byte("server_metrics:\n  interval_ms: 100\n  enabled: false\n"))
	require.NoError(t, err)
	assert.Equal(t, ServerMetricsConfig{Enabled: false, IntervalMs: 100}, cfg.ServerMetrics)
	_, err = ParseConfig([]byte("server_metrics:\n  interval: 100\n"))
	require.ErrorContains(t, err, `unknown key "server_metrics.interval"`)
	cfg.ServerMetrics.IntervalMs = 0
	require.ErrorContains(t, cfg.Validate(), "server_metrics.interval_ms")
}

// TestIntervalGaugesFollowTheRequests checks the gauge samples against
// what the records say: two requests on one worker, apart in time, with no
// overheads, so a request is in flight (and running) from its send to its
// last token; the interval (7 ms) never falls on an event.
func TestIntervalGaugesFollowTheRequests(t *testing.T) {
	cfg := metricsCfg("vllm", 1)
	cfg.Frontend = FrontendConfig{}
	cfg.ServerMetrics.IntervalMs = 7
	wl := &traces.Workload{BlockSize: 16, Requests: []traces.Request{
		{Row: 0, HasTimestamp: true, TimestampMs: 0, InputLength: 200, OutputLength: 30},
		{Row: 1, HasTimestamp: true, TimestampMs: 400, InputLength: 300, OutputLength: 20},
	}}
	recs, sum, _, e := runMetrics(t, cfg, wl)
	require.Len(t, recs, 2)
	win := ServerMetricsWindow(sum)
	interval := msToNs(cfg.ServerMetrics.IntervalMs)
	var want []float64
	for k := int64(1); Epoch+k*interval < win.EndNs; k++ {
		at := Epoch + k*interval
		n := 0.0
		for _, r := range recs {
			if r.StartNs <= at && at < r.EndNs {
				n++
			}
		}
		want = append(want, n)
	}
	want = append(want, 0) // the final scrape, after the last token
	sw, ok := results.Summarize(slices.Clone(want))
	require.True(t, ok)
	for _, fam := range []string{"dynamo_frontend_inflight_requests", "vllm:num_requests_running"} {
		m := e.Metrics[fam]
		require.NotNil(t, m, fam)
		avg, _ := m.Series[0].Stat("avg")
		max, _ := m.Series[0].Stat("max")
		assert.InDelta(t, sw.Avg, avg, 1e-12, fam)
		assert.Equal(t, 1.0, max, fam)
	}
	waiting, _ := e.Metrics["vllm:num_requests_waiting"].Series[0].Stat("max")
	assert.Equal(t, 0.0, waiting, "one request at a time never waits")
}

// TestServerMetricsScrapeCountIsBounded: a schedule that ran to epoch
// milliseconds scraped every 333 virtual ms until memory ran out (4.8 GB
// after 100 s); more interval scrapes than maxIntervalScrapes are refused
// before the run.
func TestServerMetricsScrapeCountIsBounded(t *testing.T) {
	cfg := DefaultConfig()
	wl := &traces.Workload{BlockSize: 16, Requests: []traces.Request{
		{InputLength: 10, OutputLength: 2, HasTimestamp: true},
		{InputLength: 10, OutputLength: 2, HasTimestamp: true, TimestampMs: 1e9, Row: 1, Line: 2}}}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := Run(ctx, cfg, wl, nil, WithServerMetrics(servermetrics.NewCollector(ServerMetricsEndpoints(cfg))))
	require.Error(t, err)
	assert.EqualError(t, err, "sim: server_metrics.interval_ms 333 over a schedule whose last request is due at 1e+06 virtual s "+
		"takes 3e+06 scrapes, more than 1048576: raise server_metrics.interval_ms or disable server_metrics")
	_, err = Run(ctx, cfg, wl, nil)
	require.NoError(t, err, "without a scraper the idle time costs nothing")
}

package sim

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/simbench/simbench/servermetrics"
)

// FrontendEndpoint is the simulated Dynamo frontend's metrics endpoint.
const FrontendEndpoint = "sim://frontend/metrics"

// WorkerEndpoint is the metrics endpoint of the named worker.
func WorkerEndpoint(worker string) string { return "sim://" + worker + "/metrics" }

// ServerMetricsEndpoints lists the endpoints a run with cfg exposes: the
// frontend, then one per worker.
func ServerMetricsEndpoints(cfg Config) []string {
	out := []string{FrontendEndpoint}
	for _, name := range WorkerNames(cfg) {
		out = append(out, WorkerEndpoint(name))
	}
	return out
}

// WithServerMetrics makes Run expose the servers' Prometheus metrics and
// feed its virtual scrapes to c (when cfg.ServerMetrics.Enabled). See
// serverMetrics for what is exposed and when it is scraped.
func WithServerMetrics(c *servermetrics.Collector) Option {
	return func(o *options) { o.collector = c }
}

// ServerMetricsWindow is the profiling window of a run's server metrics:
// from the first non-warmup send to the end of the run, on the virtual
// wall clock.
func ServerMetricsWindow(sum *Summary) servermetrics.Window {
	return servermetrics.Window{StartNs: Epoch + max(0, sum.ProfileStartNs), EndNs: Epoch + sum.SimulatedNs}
}

// Bucket layouts, as the real servers declare them.
var (
	// vLLM V1 (vllm/v1/metrics/loggers.py): TTFT, and request_latency_buckets
	// for e2e, queue, prefill and decode times.
	vllmTTFTBuckets    = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560}
	vllmRequestBuckets = []float64{0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680}
	// SGLang (python/sglang/srt/metrics/collector.py) defaults.
	sglangTTFTBuckets  = []float64{0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400}
	sglangE2EBuckets   = []float64{0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400, 600, 1200, 1800, 2400}
	sglangQueueBuckets = []float64{0, 0.1, 0.2, 0.5, 1, 2, 3, 4, 5, 10, 15, 20, 30, 40, 50, 60, 70, 80, 90, 100, 200, 300, 400, 500, 600, 700, 800, 900, 1000, 1200, 1400, 1600, 1800, 2000, 2500, 3000}
	// Dynamo's frontend, as its /metrics exposes them (the layouts in
	// AIPerf's server-metrics documentation, scraped from a Dynamo
	// frontend); the TTFT stages share the TTFT layout, tokens use 1-2-5.
	dynamoTTFTBuckets     = []float64{0, 0.0022, 0.0047, 0.01, 0.022, 0.047, 0.1, 0.22, 0.47, 1, 2.2, 4.7, 10, 22, 48, 100, 220, 480}
	dynamoDurationBuckets = []float64{0, 1.9, 3.4, 6.3, 12, 22, 40, 75, 140, 260}
)

// tokenBuckets is vLLM's build_1_2_5_buckets: 1, 2, 5, 10, 20, 50, … up to
// limit.
func tokenBuckets(limit int) []float64 {
	var out []float64
	for mag := 1; ; mag *= 10 {
		for _, m := range []int{1, 2, 5} {
			if v := m * mag; v <= limit {
				out = append(out, float64(v))
			} else {
				return out
			}
		}
	}
}

// endpoint is one simulated /metrics endpoint: a registry of counters and
// gauges (scraped every interval) and one of histograms (scraped at the
// start, the profiling boundary and the end only, which keeps a long run's
// scrapes small). Both are private to the run.
type endpoint struct {
	url        string
	reg, hist  *prometheus.Registry
	gauges     []gaugeSource // in the order FamiliesFromDTO lists them
	gaugeFams  []servermetrics.Family
	counterFns []func() // bring counters up to date before a full scrape
}

// gaugeSource is one gauge and how to read its value from the state.
type gaugeSource struct {
	name  string
	g     prometheus.Gauge
	value func() float64
}

func (e *endpoint) gauge(name, help string, labels prometheus.Labels, value func() float64) {
	v := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labelNames(labels))
	e.reg.MustRegister(v)
	e.gauges = append(e.gauges, gaugeSource{name: name, g: v.With(labels), value: value})
}

func (e *endpoint) counter(name, help string, labels prometheus.Labels) prometheus.Counter {
	v := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labelNames(labels))
	e.reg.MustRegister(v)
	return v.With(labels)
}

// syncedCounter is a counter fed from a running total the simulator keeps
// (per-token or per-step counts), brought up to date before each full scrape.
func (e *endpoint) syncedCounter(name, help string, labels prometheus.Labels, total *int64) {
	e.sync(e.counter(name, help, labels), total)
}

// sync brings c up to total before each full scrape.
func (e *endpoint) sync(c prometheus.Counter, total *int64) {
	var pushed int64
	e.counterFns = append(e.counterFns, func() {
		c.Add(float64(*total - pushed))
		pushed = *total
	})
}

func (e *endpoint) histogram(name, help string, buckets []float64, labels prometheus.Labels) prometheus.Observer {
	v := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labelNames(labels))
	e.hist.MustRegister(v)
	return v.With(labels) // created now: the series exists (all zero) from the first scrape
}

func labelNames(l prometheus.Labels) []string {
	out := make([]string, 0, len(l))
	for k := range l {
		out = append(out, k)
	}
	return out
}

// gather gathers both registries after updating the gauges and counters.
func (e *endpoint) gather() ([]*dto.MetricFamily, error) {
	for _, fn := range e.counterFns {
		fn()
	}
	for _, g := range e.gauges {
		g.g.Set(g.value())
	}
	return prometheus.Gatherers{e.reg, e.hist}.Gather()
}

// full is gather in servermetrics' terms.
func (e *endpoint) full() ([]servermetrics.Family, error) {
	mfs, err := e.gather()
	if err != nil {
		return nil, err
	}
	fams := servermetrics.FamiliesFromDTO(mfs)
	if e.gaugeFams == nil {
		e.template(fams)
	}
	return fams, nil
}

// template keeps a copy of the gauge families of a gathered scrape, and
// orders e's gauge sources like them, so interval scrapes reuse the names,
// help and labels client_golang exposes.
func (e *endpoint) template(fams []servermetrics.Family) {
	byName := map[string]gaugeSource{}
	for _, g := range e.gauges {
		byName[g.name] = g
	}
	ordered := make([]gaugeSource, 0, len(e.gauges))
	for _, f := range fams {
		if f.Kind != servermetrics.KindGauge {
			continue
		}
		f.Series = append([]servermetrics.Series(nil), f.Series...)
		e.gaugeFams = append(e.gaugeFams, f)
		ordered = append(ordered, byName[f.Name])
	}
	e.gauges = ordered
}

// frontend is Dynamo's frontend: request counts and the client-visible
// latencies, with the exclusive TTFT stages.
type frontend struct {
	endpoint
	inflight                        int64
	ok, failed                      prometheus.Counter
	ttft, duration, isl, osl        prometheus.Observer
	preprocess, route, backend, out prometheus.Observer
	disagg                          *disaggStages // nil: aggregated serving
}

// disaggStages are the disaggregated path's stage/phase pairs. Every
// request observes each of them (0 where its path has no such stage, as
// Dynamo records zero-valued combinations), so the stage means add up.
type disaggStages struct {
	routePrefill, backendPrefill, firstPrefill prometheus.Observer
	routeDecode, backendDecode, firstDecode    prometheus.Observer
}

// newFrontend registers the frontend's families. disagg adds the
// disaggregated stages; local keeps the aggregated ones beside them (a
// request prefilled on its decode worker takes the aggregated path).
func newFrontend(model string, disagg, local bool) *frontend {
	f := &frontend{endpoint: endpoint{url: FrontendEndpoint, reg: prometheus.NewRegistry(), hist: prometheus.NewRegistry()}}
	m := prometheus.Labels{"model": model}
	f.gauge("dynamo_frontend_inflight_requests", "Number of inflight requests", m,
		func() float64 { return float64(f.inflight) })
	req := func(status string) prometheus.Labels {
		return prometheus.Labels{"model": model, "endpoint": "chat_completions", "request_type": "stream", "status": status}
	}
	reqs := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "dynamo_frontend_requests_total",
		Help: "Total number of LLM requests processed"}, labelNames(req("")))
	f.reg.MustRegister(reqs)
	f.ok, f.failed = reqs.With(req("success")), reqs.With(req("error"))
	f.ttft = f.histogram("dynamo_frontend_time_to_first_token_seconds", "Time to first token in seconds", dynamoTTFTBuckets, m)
	f.duration = f.histogram("dynamo_frontend_request_duration_seconds", "Duration of LLM requests", dynamoDurationBuckets, m)
	tok := tokenBuckets(1_000_000)
	f.isl = f.histogram("dynamo_frontend_input_sequence_tokens", "Input sequence length in tokens", tok, m)
	f.osl = f.histogram("dynamo_frontend_output_sequence_tokens", "Output sequence length in tokens", tok, m)
	stages := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "dynamo_frontend_ttft_stage_seconds",
		Help: "Exclusive time to first token attributed to each stage, in seconds", Buckets: dynamoTTFTBuckets},
		[]string{"model", "stage", "phase"})
	f.hist.MustRegister(stages)
	stage := func(stage, phase string) prometheus.Observer {
		return stages.With(prometheus.Labels{"model": model, "stage": stage, "phase": phase})
	}
	f.preprocess, f.out = stage("preprocess", "none"), stage("response_postprocess", "none")
	if !disagg || local {
		f.route, f.backend = stage("route", "aggregated"), stage("backend", "aggregated")
	}
	if disagg {
		f.disagg = &disaggStages{
			routePrefill: stage("route", "prefill"), backendPrefill: stage("backend", "prefill"), firstPrefill: stage("first_token", "prefill"),
			routeDecode: stage("route", "decode"), backendDecode: stage("backend", "decode"), firstDecode: stage("first_token", "decode"),
		}
	}
	return f
}

// engineMetrics is one worker's engine endpoint, with the engine's own
// family names (servermetrics.Vocabulary). Observers are nil where
// the engine has no such family.
type engineMetrics struct {
	endpoint
	ttft, queue, prefill, decode, e2e, promptLen, genLen prometheus.Observer
	prompt                                               prometheus.Counter
}

func newEngineMetrics(w *worker, model string, maxLen int) *engineMetrics {
	e := &engineMetrics{endpoint: endpoint{url: WorkerEndpoint(w.name), reg: prometheus.NewRegistry(), hist: prometheus.NewRegistry()}}
	running := func() float64 { return float64(len(w.running)) }
	waiting := func() float64 { return float64(w.waiting.len()) }
	usage := func() float64 { return float64(w.kvTokens()) / float64(max(1, w.kvCap)) }
	st := &w.stats
	switch w.kind {
	case engineVLLM:
		l := roleLabel(w, prometheus.Labels{"model_name": model, "engine": "0"})
		e.gauge("vllm:num_requests_running", "Number of requests in model execution batches.", l, running)
		e.gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.", l, waiting)
		e.gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", l, usage)
		e.prompt = e.counter("vllm:prompt_tokens_total", "Number of prefill tokens processed.", l)
		e.syncedCounter("vllm:generation_tokens_total", "Number of generation tokens processed.", l, &st.generated)
		e.syncedCounter("vllm:prefix_cache_queries_total", "Prefix cache queries, in terms of number of queried tokens.", l, &st.prefixQueries)
		e.syncedCounter("vllm:prefix_cache_hits_total", "Prefix cache hits, in terms of number of cached tokens.", l, &st.prefixHits)
		e.syncedCounter("vllm:num_preemptions_total", "Cumulative number of preemption from the engine.", l, &st.preemptions)
		e.ttft = e.histogram("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", vllmTTFTBuckets, l)
		e.queue = e.histogram("vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.", vllmRequestBuckets, l)
		e.prefill = e.histogram("vllm:request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request.", vllmRequestBuckets, l)
		e.decode = e.histogram("vllm:request_decode_time_seconds", "Histogram of time spent in DECODE phase for request.", vllmRequestBuckets, l)
		e.e2e = e.histogram("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", vllmRequestBuckets, l)
		tok := tokenBuckets(maxLen)
		e.promptLen = e.histogram("vllm:request_prompt_tokens", "Number of prefill tokens processed.", tok, l)
		e.genLen = e.histogram("vllm:request_generation_tokens", "Number of generation tokens processed.", tok, l)
		if w.pool.spec != nil {
			e.specFamilies(&st.spec, l)
		}
	case engineSGLang:
		l := roleLabel(w, prometheus.Labels{"model_name": model})
		e.gauge("sglang:num_running_reqs", "The number of running requests.", l, running)
		e.gauge("sglang:num_queue_reqs", "The number of requests in the waiting queue.", l, waiting)
		e.gauge("sglang:token_usage", "The token usage.", l, usage)
		e.prompt = e.counter("sglang:prompt_tokens_total", "Number of prefill tokens processed.", l)
		e.syncedCounter("sglang:generation_tokens_total", "Number of generation tokens processed.", l, &st.generated)
		e.syncedCounter("sglang:cached_tokens_total", "Number of cached prompt tokens.", l, &st.prefixHits)
		e.syncedCounter("sglang:num_retracted_requests_total", "Total number of retracted requests.", l, &st.preemptions)
		e.ttft = e.histogram("sglang:time_to_first_token_seconds", "Histogram of time to first token in seconds.", sglangTTFTBuckets, l)
		e.queue = e.histogram("sglang:queue_time_seconds", "Histogram of queueing time in seconds.", sglangQueueBuckets, l)
		e.e2e = e.histogram("sglang:e2e_request_latency_seconds", "Histogram of End-to-end request latency in seconds", sglangE2EBuckets, l)
	default: // llama.cpp's server: no labels, no histograms
		e.gauge("llamacpp:requests_processing", "Number of requests processing.", nil, running)
		e.gauge("llamacpp:requests_deferred", "Number of requests deferred.", nil, waiting)
		e.gauge("llamacpp:kv_cache_usage_ratio", "KV-cache usage. 1 means 100 percent usage.", nil, usage)
		e.prompt = e.counter("llamacpp:prompt_tokens_total", "Number of prompt tokens processed.", nil)
		e.syncedCounter("llamacpp:tokens_predicted_total", "Number of generation tokens processed.", nil, &st.generated)
	}
	return e
}

// specFamilies are vLLM's speculative decoding counters: drafts (a
// sequence's drafting in one step), draft tokens, accepted tokens, and
// accepted tokens by draft position (label position, from 0).
func (e *engineMetrics) specFamilies(sp *specStats, l prometheus.Labels) {
	e.syncedCounter("vllm:spec_decode_num_drafts_total", "Number of spec decoding drafts.", l, &sp.drafts)
	e.syncedCounter("vllm:spec_decode_num_draft_tokens_total", "Number of draft tokens.", l, &sp.draftTokens)
	e.syncedCounter("vllm:spec_decode_num_accepted_tokens_total", "Number of accepted tokens.", l, &sp.accepted)
	v := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vllm:spec_decode_num_accepted_tokens_per_pos_total",
		Help: "Accepted tokens per draft position."}, append(labelNames(l), "position"))
	e.reg.MustRegister(v)
	for i := range sp.perPos {
		pl := prometheus.Labels{"position": strconv.Itoa(i)}
		for k, x := range l {
			pl[k] = x
		}
		e.sync(v.With(pl), &sp.perPos[i])
	}
}

// roleLabel adds the worker's pool role (prefill or decode) to its engine
// families' labels under disaggregated serving.
func roleLabel(w *worker, l prometheus.Labels) prometheus.Labels {
	if w.pool.role != "" {
		l["role"] = w.pool.role
	}
	return l
}

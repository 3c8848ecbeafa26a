package openaitest

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metric families the test server exposes, named as Dynamo's frontend
// names them.
const (
	FamilyTTFT      = "dynamo_frontend_time_to_first_token_seconds"
	FamilyTTFTStage = "dynamo_frontend_ttft_stage_seconds"
	FamilyInflight  = "dynamo_frontend_inflight_requests"
	FamilyRequests  = "dynamo_frontend_requests_total"
)

// latencyBuckets is the bucket layout of the latency histograms (1-2-5
// from 100 µs to 100 s).
var latencyBuckets = []float64{0.0001, 0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05,
	0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100}

// Stage is one exclusive slice of a request's time to first token, labelled
// as Dynamo labels dynamo_frontend_ttft_stage_seconds. Fraction is its share
// of the request's server-side TTFT.
type Stage struct {
	Stage, Phase string
	Fraction     float64
}

// DefaultStages is a plausible aggregated-serving TTFT partition.
func DefaultStages() []Stage {
	return []Stage{
		{"tokenize", "none", 0.04},
		{"route", "aggregated", 0.02},
		{"backend", "aggregated", 0.86},
		{"first_token", "aggregated", 0.05},
		{"frontend_overhead", "none", 0.03},
	}
}

// Metrics is the Prometheus /metrics of a Server, in a private registry:
// Dynamo's TTFT histogram and its exclusive stage breakdown (observed when
// a request's first token is written, the stages partitioning that
// request's TTFT exactly), the in-flight gauge and the request counter.
// Set it as Server.Metrics.
type Metrics struct {
	// FailScrape, when set, answers the n-th GET /metrics (0-based) with
	// HTTP 500 when it returns true.
	FailScrape func(n int) bool

	model    string
	stages   []Stage
	reg      *prometheus.Registry
	handler  http.Handler
	ttft     *prometheus.HistogramVec
	stage    *prometheus.HistogramVec
	inflight *prometheus.GaugeVec
	requests *prometheus.CounterVec
	scrapes  atomic.Int64
}

// NewMetrics returns the metrics of a server; model labels requests that
// name none. stages (nil = DefaultStages) must have fractions ≥ 0 adding up
// to 1 and distinct stage/phase pairs.
func NewMetrics(model string, stages []Stage) (*Metrics, error) {
	if stages == nil {
		stages = DefaultStages()
	}
	if err := validateStages(stages); err != nil {
		return nil, err
	}
	m := &Metrics{model: model, stages: append([]Stage(nil), stages...), reg: prometheus.NewRegistry()}
	m.ttft = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: FamilyTTFT,
		Help: "Time to first token in seconds", Buckets: latencyBuckets}, []string{"model"})
	m.stage = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: FamilyTTFTStage,
		Help:    "Exclusive time to first token per stage in seconds; the stages of a request add up to its TTFT",
		Buckets: latencyBuckets}, []string{"model", "stage", "phase"})
	m.inflight = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: FamilyInflight,
		Help: "Number of inflight requests"}, []string{"model"})
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: FamilyRequests,
		Help: "Total number of LLM requests processed"}, []string{"model", "endpoint", "status"})
	for _, c := range []prometheus.Collector{m.ttft, m.stage, m.inflight, m.requests} {
		if err := m.reg.Register(c); err != nil {
			return nil, err
		}
	}
	m.handler = promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
	m.expose(model)
	return m, nil
}

// expose creates the model's series with zero values (as Dynamo exposes
// every stage/phase combination before the first request), so a scrape
// before any request is a baseline of zeros: a series first seen mid-run
// has no baseline, and its first sample would be taken as the start.
func (m *Metrics) expose(model string) {
	m.ttft.WithLabelValues(model)
	m.inflight.WithLabelValues(model)
	for _, ep := range []string{"chat_completions", "completions"} {
		m.requests.WithLabelValues(model, ep, "success")
	}
	for _, s := range m.stages {
		m.stage.WithLabelValues(model, s.Stage, s.Phase)
	}
}

func validateStages(stages []Stage) error {
	if len(stages) == 0 {
		return errors.New("openaitest: no TTFT stages")
	}
	seen := map[[2]string]bool{}
	sum := 0.0
	for _, s := range stages {
		key := [2]string{s.Stage, s.Phase}
		switch {
		case s.Stage == "":
			return errors.New("openaitest: a TTFT stage has no name")
		case seen[key]:
			return fmt.Errorf("openaitest: TTFT stage %s/%s listed twice", s.Stage, s.Phase)
		case !(s.Fraction >= 0) || math.IsInf(s.Fraction, 0):
			return fmt.Errorf("openaitest: TTFT stage %s/%s: fraction %v", s.Stage, s.Phase, s.Fraction)
		}
		seen[key] = true
		sum += s.Fraction
	}
	if math.Abs(sum-1) > 1e-9 {
		return fmt.Errorf("openaitest: TTFT stage fractions add up to %v, want 1", sum)
	}
	return nil
}

// Registry is the metrics' private registry.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Scrapes is the number of GET /metrics served (failed ones included).
func (m *Metrics) Scrapes() int { return int(m.scrapes.Load()) }

// ServeHTTP serves the exposition, or the scripted scrape failure.
func (m *Metrics) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := int(m.scrapes.Add(1) - 1)
	if m.FailScrape != nil && m.FailScrape(n) {
		http.Error(w, "scripted metrics failure", http.StatusInternalServerError)
		return
	}
	m.handler.ServeHTTP(w, r)
}

// Split partitions ttft into the stages' durations, in whole nanoseconds
// that add up to ttft exactly (the last stage takes the rounding).
func (m *Metrics) Split(ttft time.Duration) []time.Duration {
	out := make([]time.Duration, len(m.stages))
	var used time.Duration
	for i, s := range m.stages[:len(m.stages)-1] {
		out[i] = time.Duration(math.Floor(float64(ttft) * s.Fraction))
		used += out[i]
	}
	out[len(out)-1] = ttft - used
	return out
}

// ObserveFirstToken records one request's TTFT and its stages.
func (m *Metrics) ObserveFirstToken(model string, ttft time.Duration) {
	model = m.modelLabel(model)
	m.ttft.WithLabelValues(model).Observe(ttft.Seconds())
	for i, d := range m.Split(ttft) {
		s := m.stages[i]
		m.stage.WithLabelValues(model, s.Stage, s.Phase).Observe(d.Seconds())
	}
}

// begin counts a request in flight; the returned func ends it.
func (m *Metrics) begin(model, path string) func(ok bool) {
	model = m.modelLabel(model)
	m.inflight.WithLabelValues(model).Inc()
	endpoint := "completions"
	if strings.HasSuffix(path, "/chat/completions") {
		endpoint = "chat_completions"
	}
	return func(ok bool) {
		m.inflight.WithLabelValues(model).Dec()
		status := "success"
		if !ok {
			status = "error"
		}
		m.requests.WithLabelValues(model, endpoint, status).Inc()
	}
}

func (m *Metrics) modelLabel(model string) string {
	if model == "" {
		return m.model
	}
	return model
}

// serveMetrics routes GET /metrics to the server's metrics; false when the
// request is not one.
func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) bool {
	if s.Metrics == nil || r.URL.Path != "/metrics" || r.Method != http.MethodGet {
		return false
	}
	s.Metrics.ServeHTTP(w, r)
	return true
}

// track counts the request in the metrics until the returned func runs.
func (rs *response) track(path string) func() {
	if rs.s.Metrics == nil {
		return func() {}
	}
	model, _ := rs.body["model"].(string)
	end := rs.s.Metrics.begin(model, path)
	return func() { end(rs.fault == None) }
}

// firstTokenWritten observes the TTFT, arrival to first token written.
func (rs *response) firstTokenWritten() {
	if rs.s.Metrics == nil {
		return
	}
	model, _ := rs.body["model"].(string)
	rs.s.Metrics.ObserveFirstToken(model, time.Since(rs.arrived))
}

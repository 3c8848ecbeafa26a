package sim

import (
	"fmt"

	"github.com/simbench/simbench/servermetrics"
	"github.com/simbench/simbench/traces"
)

// serverMetrics is what the simulated servers expose and the virtual
// scraper that collects it, on the virtual clock (AtNs = Epoch + t):
//
//   - Dynamo's frontend (FrontendEndpoint): requests in flight and by
//     status, the client-visible TTFT and request duration, ISL and OSL,
//     and the exclusive TTFT stages dynamo_frontend_ttft_stage_seconds
//     {stage, phase}: preprocess/none (frontend request overhead),
//     route/aggregated (0: the router decides instantly, observed as 0 as
//     Dynamo records zero-valued stages), backend/aggregated (engine
//     arrival → engine first token: queue, own prefill and waiting behind
//     other work) and response_postprocess/none (the response overhead).
//     They partition each request's TTFT exactly.
//   - One engine endpoint per worker with the engine's families (see
//     newEngineMetrics): TTFT, queue and prefill time from engine arrival,
//     decode and e2e time, token and prefix-cache counters, preemptions, and
//     running/waiting/KV-usage gauges.
//
// Inter-token latency histograms are not exposed: they would cost an
// observation per token.
//
// Scrapes: a full one (every family) 1 ns before time 0, before any request, one at
// the start of the profiling phase when a warmup phase precedes it, and
// one after the last event; in between, every interval, the gauges only.
// Counter and histogram statistics are deltas between the window's edge
// samples, so interval samples of them would change nothing in the export
// but cost memory and time in a long run. Gauge values at a scrape time are
// the state after every event at or before it. Full scrapes go through
// each endpoint's private client_golang registries (Gather, then
// servermetrics.FamiliesFromDTO); interval scrapes fill the gauge families of the
// first full scrape with the same values the registries' gauges are set
// from (gathering costs about 50 µs per endpoint; a one-hour trace at
// 333 ms has over 10,000 scrapes per endpoint). Scrapes are added to the
// collector on a goroutine of their own, in order.
type serverMetrics struct {
	interval int64
	next     int64 // time of the next interval scrape
	front    *frontend
	engines  []*engineMetrics
	eps      []*endpoint // frontend, then the workers
	feed     *scrapeFeeder
	warmup   bool // the workload has a warmup phase
	boundary bool // the profiling boundary scrape is done
	err      error
}

// maxIntervalScrapes bounds the interval scrapes of one run (97 virtual
// hours at AIPerf's 333 ms): a schedule in epoch milliseconds would scrape
// for decades of virtual time, until memory runs out.
const maxIntervalScrapes = 1 << 20

// checkScrapeCount refuses a run whose schedule would take more than
// maxIntervalScrapes interval scrapes before its last request is due.
func checkScrapeCount(cfg Config, wl *traces.Workload) error {
	last := 0.0
	for i := range wl.Requests {
		if r := &wl.Requests[i]; r.HasTimestamp {
			last = max(last, r.TimestampMs)
		}
	}
	if n := last / cfg.ServerMetrics.IntervalMs; n > maxIntervalScrapes {
		return fmt.Errorf("sim: server_metrics.interval_ms %g over a schedule whose last request is due at %.3g virtual s "+
			"takes %.3g scrapes, more than %d: raise server_metrics.interval_ms or disable server_metrics",
			cfg.ServerMetrics.IntervalMs, last/1e3, n, maxIntervalScrapes)
	}
	return nil
}

// newServerMetrics registers the endpoints' families; c nil (online) takes
// no scrapes: the families are only gathered (Online.Metrics).
func newServerMetrics(s *simulator, c *servermetrics.Collector) *serverMetrics {
	model := s.cfg.Hardware.Model
	if model == "" {
		model = "sim"
	}
	local := s.decode != nil && s.cfg.Disaggregation.MaxLocalPrefillTokens > 0
	m := &serverMetrics{interval: msToNs(s.cfg.ServerMetrics.IntervalMs), front: newFrontend(model, s.decode != nil, local)}
	m.next = m.interval
	m.eps = append(m.eps, &m.front.endpoint)
	for _, w := range s.workers {
		maxLen := w.eng().MaxModelLen
		if maxLen <= 0 {
			maxLen = 1_000_000
		}
		e := newEngineMetrics(w, model, maxLen)
		m.engines = append(m.engines, e)
		m.eps = append(m.eps, &e.endpoint)
	}
	for i := range s.wl.Requests {
		m.warmup = m.warmup || s.wl.Requests[i].Warmup
	}
	if c != nil {
		m.feed = startFeeder(c, m.eps)
	}
	return m
}

// scrapeFull gathers every endpoint at virtual time at.
func (m *serverMetrics) scrapeFull(at int64) {
	if m.err != nil || m.feed == nil {
		return
	}
	m.feed.flush()
	for _, e := range m.eps {
		fams, err := e.full()
		if err != nil {
			m.err = fmt.Errorf("sim: server metrics: %s: %w", e.url, err)
			return
		}
		m.feed.full(servermetrics.Scrape{Endpoint: e.url, AtNs: Epoch + at, Families: fams})
	}
}

// catchUp takes the interval scrapes due before the next event at t.
func (m *serverMetrics) catchUp(t int64) {
	if m.feed == nil || m.next >= t {
		return
	}
	vals := m.feed.values()
	for _, e := range m.eps {
		for _, g := range e.gauges {
			vals = append(vals, g.value())
		}
	}
	m.feed.interval(m.next, vals) // the state is the same at every scrape before t
	for m.next += m.interval; m.next < t; m.next += m.interval {
		m.feed.interval(m.next, vals)
	}
}

// profileStart is called at the first non-warmup send, at virtual time now.
// After a warmup phase, the collector needs a sample of every family just
// before the window starts, so the export's deltas exclude the warmup
// requests: a full scrape of the state at the phase boundary, stamped 1 ns
// before the send (the window start). Without warmup, the baseline scrape
// serves.
func (m *serverMetrics) profileStart(now int64) {
	if m.boundary {
		return
	}
	m.boundary = true
	if m.warmup && now > 0 {
		m.scrapeFull(now - 1)
	}
}

// finish takes the final scrape at now and waits until the collector has
// every scrape.
func (m *serverMetrics) finish(now int64) error {
	m.next = now // the final scrape replaces an interval scrape due now
	m.scrapeFull(now)
	m.close()
	return m.err
}

func (m *serverMetrics) close() {
	if m.feed != nil {
		m.feed.close()
		m.feed = nil
	}
}

// request hooks, on the simulator's goroutine.

func (m *serverMetrics) sent() { m.front.inflight++ }

func (m *serverMetrics) rejected() {
	m.front.inflight--
	m.front.failed.Inc()
}

func seconds(ns int64) float64 { return float64(ns) / 1e9 }

// firstToken observes r's TTFT and its stages; respOv is the frontend
// response overhead.
func (m *serverMetrics) firstToken(r *request, respOv int64) {
	f := m.front
	f.ttft.Observe(seconds(r.firstTok + respOv - r.send))
	f.preprocess.Observe(seconds(r.arrive - r.send))
	f.out.Observe(seconds(respOv))
	m.backendStages(r)
	start, queued := r.arrive, r.prefillAt
	if r.h != nil { // the decode worker's request starts when the prefill ends
		start, queued = r.h.pDone, r.h.xferStart
	}
	m.engines[r.w.id].firstToken(r.isl, start, queued, r.firstTok)
}

// backendStages observes the routing and backend stages of r's path, and
// zero for the other path's pairs.
func (m *serverMetrics) backendStages(r *request) {
	f, d := m.front, m.front.disagg
	if r.h == nil {
		f.route.Observe(0)
		f.backend.Observe(seconds(r.firstTok - r.arrive))
		if d != nil {
			d.observe(0, 0)
		}
		return
	}
	if f.route != nil {
		f.route.Observe(0)
		f.backend.Observe(0)
	}
	d.observe(seconds(r.h.pDone-r.arrive), seconds(r.firstTok-r.h.pDone))
}

// observe records a request's backend time on the prefill and the decode
// side. Routing decides at once and the first token is the decode worker's,
// emitted when its step ends: those stages are 0.
func (d *disaggStages) observe(prefill, decode float64) {
	d.routePrefill.Observe(0)
	d.backendPrefill.Observe(prefill)
	d.firstPrefill.Observe(0)
	d.routeDecode.Observe(0)
	d.backendDecode.Observe(decode)
	d.firstDecode.Observe(0)
}

// firstToken observes a request that started on the engine at start, was
// first scheduled at queued and got its first token at first.
func (e *engineMetrics) firstToken(isl int, start, queued, first int64) {
	e.prompt.Add(float64(isl))
	if e.ttft != nil {
		e.ttft.Observe(seconds(first - start))
	}
	if e.queue != nil {
		e.queue.Observe(seconds(queued - start))
	}
	if e.prefill != nil {
		e.prefill.Observe(seconds(first - queued))
	}
}

// prefilled observes r's prefill worker when its prompt is computed (the
// prefill worker's request ends there; the token it would sample is the
// decode worker's to emit).
func (m *serverMetrics) prefilled(r *request) {
	e := m.engines[r.h.pw.id]
	e.firstToken(r.isl, r.arrive, r.prefillAt, r.h.pDone)
	if e.e2e != nil {
		e.e2e.Observe(seconds(r.h.pDone - r.arrive))
	}
	if e.promptLen != nil {
		e.promptLen.Observe(float64(r.isl))
	}
}

// completed observes a finished request; now is the engine time of its
// last token. The frontend's in-flight guard drops when the backend's
// stream ends.
func (m *serverMetrics) completed(r *request, now, respOv int64) {
	f := m.front
	f.inflight--
	f.ok.Inc()
	f.duration.Observe(seconds(now + respOv - r.send))
	f.isl.Observe(float64(r.isl))
	f.osl.Observe(float64(r.generated))
	e := m.engines[r.w.id]
	if e.decode != nil {
		e.decode.Observe(seconds(now - r.firstTok))
	}
	start := r.arrive
	if r.h != nil {
		start = r.h.pDone
	}
	if e.e2e != nil {
		e.e2e.Observe(seconds(now - start))
	}
	if e.promptLen != nil {
		e.promptLen.Observe(float64(r.isl))
		e.genLen.Observe(float64(r.generated))
	}
}

// scrapeFeeder adds scrapes to the collector on a goroutine of its own, in
// the order they were taken: full scrapes as they are, interval scrapes in
// batches of gauge values (one per gauge of every endpoint, in order).
type scrapeFeeder struct {
	ch      chan feedMsg
	done    chan struct{}
	at      []int64
	vals    []float64
	scratch []float64
}

type feedMsg struct {
	full *servermetrics.Scrape
	at   []int64
	vals []float64
}

const feedBatch = 512

func startFeeder(c *servermetrics.Collector, eps []*endpoint) *scrapeFeeder {
	f := &scrapeFeeder{ch: make(chan feedMsg, 64), done: make(chan struct{})}
	go func() {
		defer close(f.done)
		for msg := range f.ch {
			if msg.full != nil {
				c.Add(*msg.full)
				continue
			}
			addIntervals(c, eps, msg.at, msg.vals)
		}
	}()
	return f
}

func addIntervals(c *servermetrics.Collector, eps []*endpoint, at []int64, vals []float64) {
	k := 0
	for _, t := range at {
		for _, e := range eps {
			for i := range e.gaugeFams {
				e.gaugeFams[i].Series[0].Value = vals[k]
				k++
			}
			c.Add(servermetrics.Scrape{Endpoint: e.url, AtNs: Epoch + t, Families: e.gaugeFams})
		}
	}
}

func (f *scrapeFeeder) full(s servermetrics.Scrape) {
	f.flush()
	f.ch <- feedMsg{full: &s}
}

// values is a scratch slice for one interval scrape's gauge values.
func (f *scrapeFeeder) values() []float64 { return f.scratch[:0] }

func (f *scrapeFeeder) interval(at int64, vals []float64) {
	f.scratch = vals
	f.at = append(f.at, at)
	f.vals = append(f.vals, vals...)
	if len(f.at) >= feedBatch {
		f.flush()
	}
}

func (f *scrapeFeeder) flush() {
	if len(f.at) == 0 {
		return
	}
	f.ch <- feedMsg{at: f.at, vals: f.vals}
	f.at = make([]int64, 0, feedBatch)
	f.vals = make([]float64, 0, cap(f.vals))
}

func (f *scrapeFeeder) close() {
	f.flush()
	close(f.ch)
	<-f.done
}

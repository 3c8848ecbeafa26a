package sim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/simbench/simbench/pacer"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/servermetrics"
	"github.com/simbench/simbench/traces"
)

// Epoch is the virtual wall clock at simulated time 0, in ns since the Unix
// epoch (2023-11-14T22:13:20Z). Every simulated timestamp is Epoch plus
// virtual time, so two runs of the same inputs write identical files.
const Epoch int64 = 1_700_000_000_000_000_000

// RejectedType is the error type of a request the simulator rejects because
// it can never be served (results.ErrorDetails.Type).
const RejectedType = "SimRejected"

// Sink receives every finished request, in completion order. Warmup requests
// are included (Record.Warmup set). Returning an error stops the run.
type Sink func(*results.Record) error

// Progress is reported while a simulation runs.
type Progress struct {
	SimNs int64 // virtual time so far
	Done  int   // requests finished (completed or rejected)
	Total int
}

// String is the snapshot as one progress line.
func (p Progress) String() string {
	return fmt.Sprintf("%d/%d requests, %.1f s simulated", p.Done, p.Total, float64(p.SimNs)/1e9)
}

// Option changes how Run runs.
type Option func(*options)

type options struct {
	progress  func(Progress)
	every     int
	hook      func(*simulator) // tests: called after every step start and end
	collector *servermetrics.Collector
	slos      []results.SLO // WriteRun's aggregate
}

// WithProgress calls fn every `every` finished requests (0: about every
// 0.5%) and once at the end. fn runs on Run's goroutine.
func WithProgress(fn func(Progress), every int) Option {
	return func(o *options) { o.progress, o.every = fn, every }
}

// WithSLOs gives WriteRun's aggregate --goodput's SLOs: good_request_count,
// goodput and slo_attainment, recorded in input_config. Run ignores them.
func WithSLOs(slos []results.SLO) Option { return func(o *options) { o.slos = slos } }

func withHook(fn func(*simulator)) Option { return func(o *options) { o.hook = fn } }

// simulator is one run: the agenda, the pacer, the router and the workers.
type simulator struct {
	cfg  Config
	wl   *traces.Workload
	opts options
	// front is the server's work on a request before the router
	// (frontend.mode), steal what it takes from a CPU engine's steps
	// (frontend.arrival_stall_ms); reqOv and respOv are
	// request_overhead_ms and response_overhead_ms in ns.
	front         discipline
	steal         arrivalSteal
	reqOv, respOv int64
	// client is the load generator's gaps, stalls and order of
	// simultaneous sends (the client: section); sendQueue holds the sends
	// released at this instant.
	client    client
	sendQueue []pacer.Send

	events eventHeap
	now    int64
	pacer  *pacer.Pacer
	// next and nextSt are the pacer's last answer; stale means a send or
	// a completion came since.
	next    pacer.Send
	nextSt  pacer.State
	stale   bool
	wake    int64 // the pending wake event's time, when waking
	waking  bool
	live    []*request // in-flight requests by workload index
	workers []*worker
	pools   []*pool
	router  router // over the workers of the first pool (the prefill pool when disaggregated)
	// prefill and decode are the pools of disaggregated serving (nil when
	// aggregated); link carries their KV transfers.
	prefill, decode *pool
	link            *link
	xfer            transferStats
	dirty           []bool
	sink            Sink
	err             error
	// onToken, online only, hears of each token as it is emitted: the
	// request's index and when it reaches the client (virtual ns).
	onToken func(wi int32, atNs int64)

	done int
	sum  tally

	metrics      *serverMetrics // nil: no server metrics
	profileStart int64          // first non-warmup send, -1 before it

	spareHashes [][]uint64 // buffers of finished requests, reused
	spareHeld   [][]int32
}

// Run simulates wl on the cluster described by cfg and passes every finished
// request to sink (which may be nil). It returns the run's summary. It is
// deterministic: the same inputs give the same records in the same order.
func Run(ctx context.Context, cfg Config, wl *traces.Workload, sink Sink, opts ...Option) (*Summary, error) {
	s, err := newSimulator(cfg, wl, sink, opts)
	if err != nil {
		return nil, err
	}
	return s.run(ctx)
}

// run simulates the whole workload.
func (s *simulator) run(ctx context.Context) (*Summary, error) {
	cfg := s.cfg
	if s.opts.collector != nil && cfg.ServerMetrics.Enabled {
		s.metrics = newServerMetrics(s, s.opts.collector)
		defer s.metrics.close()
	}
	if err := s.loop(ctx); err != nil {
		return nil, err
	}
	if s.metrics != nil {
		if err := s.metrics.finish(s.now); err != nil {
			return nil, err
		}
	}
	return s.summary(), nil
}

func newSimulator(cfg Config, wl *traces.Workload, sink Sink, opts []Option) (*simulator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if wl == nil || len(wl.Requests) == 0 {
		return nil, errors.New("sim: empty workload")
	}
	pc, err := pacer.New(wl, pacer.Limits{})
	if err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	return build(cfg, wl, pc, sink, opts)
}

// build assembles a simulator of a validated cfg; pc nil is online mode.
func build(cfg Config, wl *traces.Workload, pc *pacer.Pacer, sink Sink, opts []Option) (*simulator, error) {
	s := &simulator{cfg: cfg, wl: wl, sink: sink, pacer: pc, stale: true,
		live: make([]*request, len(wl.Requests)), dirty: make([]bool, cfg.Workers),
		reqOv: msToNs(cfg.Frontend.RequestOverheadMs), respOv: msToNs(cfg.Frontend.ResponseOverheadMs),
		steal:  arrivalSteal{ns: msToNs(cfg.Frontend.ArrivalStallMs)},
		client: newClient(cfg.Client, cfg.Seed, wl.Concurrency), profileStart: -1,
		sum: tally{reasons: map[string]int{}}}
	s.front = newDiscipline(s)
	for _, o := range opts {
		o(&s.opts)
	}
	if s.opts.every <= 0 {
		s.opts.every = max(1, len(wl.Requests)/200)
	}
	if s.opts.collector != nil && cfg.ServerMetrics.Enabled {
		if err := checkScrapeCount(cfg, wl); err != nil {
			return nil, err
		}
	}
	if err := s.buildPools(); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(uint64(cfg.Seed), 0x5eed_5111_b3c4))
	s.router = newRouter(&s.cfg.Router, s.pools[0].workers, rng)
	if s.decode != nil {
		h := s.prefill.cfg.Hardware
		m, err := h.ResolveModel()
		if err != nil {
			return nil, err
		}
		s.link = newLink(s.cfg.Disaggregation.KVTransfer, h.KVBytesPerToken(m))
	}
	return s, nil
}

func (s *simulator) push(t int64, kind eventKind, arg int32) { s.events.push(t, kind, arg) }

// loop runs the agenda: all events at the earliest time, then the sends they
// allow, then a new step on every idle worker that has work.
func (s *simulator) loop(ctx context.Context) error {
	if s.metrics != nil {
		s.metrics.scrapeFull(-1) // the baseline, before any request (and before a send at 0)
	}
	s.dispatch()
	s.kick()
	for n := 0; s.events.len() > 0; n++ {
		if n&1023 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if err := s.instant(); err != nil {
			return err
		}
	}
	if s.done != len(s.wl.Requests) {
		return fmt.Errorf("sim: internal error: %d of %d requests finished", s.done, len(s.wl.Requests))
	}
	s.reportProgress(true)
	return s.err
}

// instant runs every event at the agenda's earliest time, then the sends
// they allow, then a new step on every idle worker that has work.
func (s *simulator) instant() error {
	if err := s.handleAt(s.events.peek().t); err != nil {
		return err
	}
	s.dispatch()
	s.kick()
	return nil
}

// handleAt moves virtual time to t and runs every event due at it.
func (s *simulator) handleAt(t int64) error {
	if s.metrics != nil {
		s.metrics.catchUp(t)
	}
	s.now = t
	for s.events.len() > 0 && s.events.peek().t == s.now {
		s.handle(s.events.pop())
	}
	return s.err
}

func (s *simulator) handle(e event) {
	switch e.kind {
	case evWake:
		s.waking = s.waking && e.t != s.wake
	case evArrive:
		s.arrive(s.live[e.arg])
	case evStepEnd:
		w := s.workers[e.arg]
		if w.stallNs > 0 { // the server worked on requests meanwhile: the step took longer
			w.stats.busyNs += w.stallNs
			s.push(s.now+w.stallNs, evStepEnd, e.arg)
			w.stallNs = 0
			return
		}
		w.endStep(s.now)
		s.dirty[e.arg] = true
		s.afterStep(w)
	case evClientDone:
		s.clientDone(e.arg)
	case evTransferJoin:
		s.linkJoin(s.live[e.arg])
	case evTransferEnd:
		s.transferDone(s.live[e.arg])
	case evLinkDone:
		s.linkDone(e.arg)
	case evFrontend:
		s.front.wake(e.arg)
	case evKVLoaded:
		s.kvLoaded(s.live[e.arg])
	}
}

// dispatch sends every request the pacer allows now, and schedules a wake
// event for the next one when it is due later. The pacer's answer changes
// only when a request is sent or completes, so only then is it asked again.
func (s *simulator) dispatch() {
	if s.pacer == nil { // online: requests are sent as they are submitted
		return
	}
	for s.release(); len(s.sendQueue) > 0; s.release() {
		s.flushSends() // a send can complete at once (rejected) and free the pacer
	}
}

// release queues every send the pacer lets go now (see dispatch).
func (s *simulator) release() {
	for {
		if s.stale {
			s.next, s.nextSt = s.pacer.Next()
			s.stale = false
		}
		if s.nextSt != pacer.Ready {
			return
		}
		if at := int64(s.next.At); at > s.now {
			s.wakeAt(at)
			return
		}
		snd := s.next
		s.pacer.Dispatch(snd)
		s.stale = true
		s.sendQueue = append(s.sendQueue, snd)
	}
}

// flushSends sends what dispatch let go at this instant, in the client's
// order (client.tie_order).
func (s *simulator) flushSends() {
	s.client.order(s.sendQueue)
	for _, snd := range s.sendQueue {
		s.send(snd)
	}
	s.sendQueue = s.sendQueue[:0]
}

// wakeAt schedules a wake event at t unless one is pending at or before t.
func (s *simulator) wakeAt(t int64) {
	if s.waking && s.wake <= t {
		return
	}
	s.wake, s.waking = t, true
	s.push(t, evWake, 0)
}

// kick starts a step on every idle worker that was touched.
func (s *simulator) kick() {
	for i, d := range s.dirty {
		if !d {
			continue
		}
		s.dirty[i] = false
		if w := s.workers[i]; !w.busy && w.startStep(s.now) {
			s.afterStep(w)
		}
	}
}

func (s *simulator) afterStep(*worker) {
	if s.opts.hook != nil {
		s.opts.hook(s)
	}
}

func (s *simulator) send(snd pacer.Send) {
	idx := int32(snd.Req)
	src := &s.wl.Requests[idx]
	r := &request{wi: idx, src: src, isl: engineISL(src) + s.cfg.Frontend.TemplateTokens, osl: src.OutputLength, slot: -1,
		pace: snd, send: s.now}
	s.live[idx] = r
	if s.profileStart < 0 && !src.Warmup {
		s.profileStart = s.now
		if s.metrics != nil {
			s.metrics.profileStart(s.now)
		}
	}
	if s.metrics != nil {
		s.metrics.sent()
	}
	s.front.send(r)
}

// engineISL is the prompt length the engine computes: the trace's ISL, or
// about 4 characters per token for a literal prompt without one, and at
// least 1 (a template token).
func engineISL(r *traces.Request) int {
	isl := r.InputLength
	if isl == 0 && r.TextInput != "" {
		isl = ceilDiv(len(r.TextInput), 4)
	}
	return max(1, isl)
}

// arrive routes a request that reached the frontend, or rejects it.
func (s *simulator) arrive(r *request) {
	r.arrive = s.now
	if reason := s.rejectReason(r); reason != "" {
		s.reject(r, reason)
		return
	}
	if s.needHashes() {
		r.hashes = blockHashes(s.hashBuf(), r.src, r.isl, s.wl.BlockSize, s.pools[0].cfg.Engine.BlockSize, uint64(r.wi)+1)
		r.held = s.heldBuf()
	}
	r.chunks = make([]results.Chunk, 0, r.osl)
	if s.decode != nil {
		s.route(r)
		return
	}
	s.enqueue(r, s.pools[0].workers[s.router.pick(r)])
}

// enqueue puts r in w's waiting queue.
func (s *simulator) enqueue(r *request, w *worker) {
	r.w = w
	switch lag := int64(w.eng().LlamaCpp.ReuseLagSteps); {
	case w.slots != nil && lag > 0:
		s.holdBack(r, w, lag)
	case w.slots == nil && w.eng().Async() && w.busy:
		// The step after the one in flight is planned already.
		r.readyAt = w.stats.steps + 1
	}
	w.waiting.pushBack(r)
	w.stats.requests++
	s.dirty[w.id] = true
}

// holdBack sets the first step a llamacpp runner whose loop holds a lock
// for each step (reuse_lag_steps > 0, Ollama's) may admit r while other
// slots run: r waits for the step in flight and lag more. Of requests
// reaching an idle runner at one instant the first starts a step at once
// and the rest come behind it: no two reach it at the same moment, and the
// first one's step holds the lock.
func (s *simulator) holdBack(r *request, w *worker, lag int64) {
	switch {
	case w.busy:
		r.readyAt = w.stats.steps + lag
	case w.claimed == s.now && w.waiting.len() > 0:
		r.readyAt = w.stats.steps + 1 + lag
	default:
		w.claimed = s.now
	}
}

// needHashes reports whether requests need their prompt's block hashes: a
// pool caches prefixes, or a router looks at them.
func (s *simulator) needHashes() bool {
	if s.cfg.Router.Policy == "kv" || s.decode != nil && s.cfg.Disaggregation.MaxLocalPrefillTokens > 0 {
		return true
	}
	for _, p := range s.pools {
		if p.cfg.Engine.EnablePrefixCaching {
			return true
		}
	}
	return false
}

func (s *simulator) hashBuf() []uint64 {
	if n := len(s.spareHashes); n > 0 {
		b := s.spareHashes[n-1]
		s.spareHashes = s.spareHashes[:n-1]
		return b
	}
	return nil
}

func (s *simulator) heldBuf() []int32 {
	if n := len(s.spareHeld); n > 0 {
		b := s.spareHeld[n-1]
		s.spareHeld = s.spareHeld[:n-1]
		return b
	}
	return nil
}

// recycle keeps a finished request's buffers for later requests.
func (s *simulator) recycle(r *request) {
	if r.hashes != nil {
		s.spareHashes = append(s.spareHashes, r.hashes[:0])
	}
	if r.held != nil {
		s.spareHeld = append(s.spareHeld, r.held[:0])
	}
	r.hashes, r.held = nil, nil
}

// rejectReason says why r can never be served, or "".
func (s *simulator) rejectReason(r *request) string {
	if r.osl <= 0 {
		return "output_length is 0 (server default): the simulator needs a requested output length"
	}
	for _, p := range s.pools {
		if reason := p.rejectReason(r.isl, r.osl); reason != "" {
			return reason
		}
	}
	return ""
}

// token emits r's next n output tokens at engine time now, as one chunk
// (n > 1: the accepted drafts of speculative decoding, streamed together
// as vLLM does).
func (s *simulator) token(r *request, now int64, n int) {
	first := r.generated == 0
	r.generated += n
	r.w.stats.generated += int64(n)
	if first {
		r.firstTok = now
		if s.metrics != nil {
			s.metrics.firstToken(r, s.respOv)
		}
	}
	r.chunks = append(r.chunks, results.Chunk{AtNs: Epoch + now + s.respOv, Tokens: n})
	for range n {
		if s.onToken != nil {
			s.onToken(r.wi, now+s.respOv)
		}
	}
}

// complete hands a finished request to the sink and frees its client slot
// once the last token has reached the client.
func (s *simulator) complete(r *request, now int64) {
	if s.metrics != nil {
		s.metrics.completed(r, now, s.respOv)
	}
	s.emit(s.record(r))
	s.front.leave(r)
	s.finishClient(r, s.client.freed(now+s.respOv))
}

func (s *simulator) reject(r *request, reason string) {
	s.sum.rejected++
	s.sum.reasons[reason]++
	if s.metrics != nil {
		s.metrics.rejected()
	}
	s.emit(s.rejectedRecord(r, reason))
	s.front.leave(r)
	s.finishClient(r, s.client.freed(s.now+s.respOv))
}

func (s *simulator) finishClient(r *request, at int64) {
	if at > s.now {
		s.push(at, evClientDone, r.wi)
		return
	}
	s.clientDone(r.wi)
}

func (s *simulator) emit(rec *results.Record) {
	s.sum.add(rec)
	if s.sink == nil || s.err != nil {
		return
	}
	if err := s.sink(rec); err != nil {
		s.err = err
	}
}

// clientDone frees the request's concurrency slot and releases its
// session's next turn.
func (s *simulator) clientDone(idx int32) {
	r := s.live[idx]
	s.live[idx] = nil
	s.done++
	if s.pacer != nil {
		s.pacer.Complete(r.pace, time.Duration(s.now))
		s.stale = true
	}
	s.reportProgress(false)
}

func (s *simulator) reportProgress(final bool) {
	if s.opts.progress == nil || !final && s.done%s.opts.every != 0 {
		return
	}
	s.opts.progress(Progress{SimNs: s.now, Done: s.done, Total: len(s.wl.Requests)})
}

// msToNs converts trace milliseconds to ns, rounded.
func msToNs(ms float64) int64 { return int64(math.Round(ms * 1e6)) }

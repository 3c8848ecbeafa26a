package loadgen

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/simbench/simbench/pacer"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/traces"
)

// Limits bounds a run beyond what the workload says (pacer.Limits).
type Limits = pacer.Limits

// Config configures Run.
type Config struct {
	Endpoint Endpoint
	Limits   Limits
	// Grace is how long requests still in flight when the duration limit
	// ends the sends may finish before they are cancelled (AIPerf's
	// --benchmark-grace-period). 0 = wait for them.
	Grace time.Duration
	// Spin is the busy-wait before each deadline; 0 = DefaultSpin, < 0 = none.
	Spin time.Duration
	// Progress, when set, is called every ProgressEvery (default 1 s) from
	// its own goroutine, and once at the end.
	Progress      func(Progress)
	ProgressEvery time.Duration
	// StartAt, when set, is the run's time origin: the schedule's time zero
	// is this wall-clock instant, held on the monotonic clock from then on,
	// so shards started apart share one schedule. Run waits for it; a run
	// that is ready only after it keeps the origin (its first sends are
	// late, as send lag shows) and reports how late in Report.StartLate.
	StartAt time.Time
	// OnProfilingStart, when set, is called once from the driver when the
	// profiling phase of a run with a warmup phase begins (every warmup
	// request has completed), before its first send, with the run's clock
	// (wall ns, as records' times). It must return at once (a scrape of
	// server metrics that marks the window's start runs in the background).
	OnProfilingStart func(atNs int64)
}

// Sink receives every finished request, warmup included, and returns its
// metrics; results.RunWriter.Add is one. Workers call it concurrently (a
// request's sink may run while the next one of its closed-loop slot
// finishes), so it must be safe for concurrent use.
type Sink func(*results.Record) (results.RecordMetrics, error)

// Progress is a snapshot of a run.
type Progress struct {
	Elapsed  time.Duration
	Total    int // requests in the workload (warmup included)
	Sent     int64
	Done     int64
	InFlight int64
	Errors   int64
	Duration time.Duration // the run's duration limit, 0 = none (ETA from it)
	Final    bool
}

// completion tells the driver that a send finished.
type completion struct {
	s  pacer.Send
	at time.Duration
}

type job struct {
	s      pacer.Send
	rec    *results.Record
	body   []byte
	req    *traces.Request
	noDone bool // a success whose stream ended without data: [DONE]
	// reason is the response's finish_reason; clientOSL the client's own
	// count of its output (before any server usage replaced it).
	reason    string
	clientOSL int
	badUsage  string // what was wrong with its usage, "" when nothing
	// implausibleUsage: the server's completion_tokens was beyond any count the
	// answer could have; the client's count was kept
	implausibleUsage bool
	// usagePlausible: it has a usage whose completion_tokens the answer
	// could have (see plausibleOutput), whatever counts were taken
	usagePlausible bool
}

// runner is one Run.
type runner struct {
	wl     *traces.Workload
	cfg    Config
	pacer  *pacer.Pacer
	client *client
	body   *body
	sink   Sink
	wait   *waiter
	wall0  int64 // wall ns at start

	jobs   chan job
	done   chan completion
	wg     sync.WaitGroup
	report *Report
	sinkMu sync.Mutex
	err    error
	ctx    context.Context
	abort  context.CancelFunc

	prepared   job
	hasPrep    bool
	warmedUp   bool // a warmup send was dispatched
	profiling  bool // the first profiling send was seen
	inflight   int
	sessionIDs map[string]string

	sent, finished, errs atomic.Int64
}

// Run sends wl to cfg.Endpoint on its schedule and passes each finished
// request to sink. When ctx ends (an interrupt) it stops sending, cancels
// the requests in flight (recorded as cancelled, code 499) and returns once
// every started request has reached sink. Per-request failures are records,
// not errors; Run returns an error only for a bad configuration or a sink
// failure.
func Run(ctx context.Context, wl *traces.Workload, cfg Config, sink Sink) (*Report, error) {
	r, err := newRunner(wl, cfg, sink)
	if err != nil {
		return nil, err
	}
	defer r.client.close()
	defer r.wait.close()
	parent := ctx
	ctx, r.abort = context.WithCancel(ctx)
	defer r.abort()
	r.ctx = ctx
	if !r.awaitStart(ctx) {
		r.report.StartNs, r.report.EndNs, r.report.Interrupted = r.wall0, r.now(), true
		return r.report, nil
	}
	stopProgress := r.startProgress()
	r.report.StartNs = r.now()
	r.drive(ctx)
	r.drain(ctx)
	close(r.jobs)
	r.wg.Wait()
	r.report.EndNs = r.now()
	r.report.Spin = r.wait.spun
	r.report.Interrupted = parent.Err() != nil
	stopProgress()
	return r.report, r.err
}

func newRunner(wl *traces.Workload, cfg Config, sink Sink) (*runner, error) {
	if err := cfg.Endpoint.Validate(); err != nil {
		return nil, err
	}
	pc, err := pacer.New(wl, cfg.Limits)
	if err != nil {
		return nil, fmt.Errorf("pacer: %w", err)
	}
	spin := cfg.Spin
	if spin == 0 {
		spin = DefaultSpin
	}
	start := time.Now()
	if !cfg.StartAt.IsZero() {
		start = start.Add(cfg.StartAt.Sub(start)) // the monotonic reading at StartAt
	}
	r := &runner{wl: wl, cfg: cfg, pacer: pc, sink: sink, wait: newWaiter(start, spin),
		wall0: start.UnixNano(), jobs: make(chan job), done: make(chan completion, 4096),
		report: newReport(wl), sessionIDs: map[string]string{}}
	pool := wl.Concurrency
	if pool <= 0 {
		pool = 10000
	}
	if r.client, err = newClient(&r.cfg.Endpoint, pool, r.now); err != nil {
		r.wait.close()
		return nil, err
	}
	r.body = newBody(&r.cfg.Endpoint)
	ep := &r.cfg.Endpoint
	r.report.Counting, r.report.ExactISL = ep.Counting(), ep.Prompts.Tokenizer != nil || ep.Prompts.TokenIDs
	r.report.Heuristic = ep.Prompts.Tokenizer == nil && !ep.ServerTokenCount
	r.report.Streaming = ep.Streaming
	return r, nil
}

// awaitStart waits for the time origin (Config.StartAt) and records how late
// the run was ready. It returns false when ctx ended first.
func (r *runner) awaitStart(ctx context.Context) bool {
	left := -r.wait.elapsed()
	if left <= 0 {
		if !r.cfg.StartAt.IsZero() {
			r.report.StartLate = -left
		}
		return true
	}
	t := time.NewTimer(left)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// now is wall-clock ns on the monotonic clock: the start's wall time plus
// the monotonic time since, so every timestamp of a run is consistent.
func (r *runner) now() int64 { return r.wall0 + int64(r.wait.elapsed()) }

// drive is the pacing loop: it alone owns the pacer.
func (r *runner) drive(ctx context.Context) {
	for ctx.Err() == nil {
		r.collect()
		s, st := r.pacer.Next()
		switch st {
		case pacer.Done:
			return
		case pacer.Blocked:
			select {
			case c := <-r.done:
				r.complete(c)
			case <-ctx.Done():
			}
			continue
		}
		r.notePhase(s)
		j := r.prepare(s)
		switch c, res := r.wait.until(ctx, s.At, r.done); res {
		case waitWoke:
			r.complete(c)
			continue
		case waitCancelled:
			return
		}
		r.pacer.Dispatch(s)
		r.hasPrep = false
		r.dispatch(j)
	}
}

// notePhase calls OnProfilingStart at the first profiling send after a
// warmup phase.
func (r *runner) notePhase(s pacer.Send) {
	if s.Warmup {
		r.warmedUp = true
		return
	}
	if r.warmedUp && !r.profiling {
		r.profiling = true
		if r.cfg.OnProfilingStart != nil {
			r.cfg.OnProfilingStart(r.now())
		}
	}
}

// collect applies completions already waiting.
func (r *runner) collect() {
	for {
		select {
		case c := <-r.done:
			r.complete(c)
		default:
			return
		}
	}
}

func (r *runner) complete(c completion) {
	r.inflight--
	r.pacer.Complete(c.s, c.at)
}

// drain waits for the requests in flight. After a duration limit they get
// Grace before they are cancelled; without one they run to completion;
// after an interrupt they are cancelled already.
func (r *runner) drain(ctx context.Context) {
	var grace <-chan time.Time
	if r.cfg.Grace > 0 && r.cfg.Limits.Duration > 0 && ctx.Err() == nil {
		t := time.NewTimer(r.cfg.Grace)
		defer t.Stop()
		grace = t.C
	}
	for r.inflight > 0 {
		select {
		case c := <-r.done:
			r.complete(c)
		case <-grace:
			r.abort()
			grace = nil
		}
	}
}

// prepare builds the record and body for s ahead of its deadline (kept if
// a completion interrupts the wait and s is still next).
func (r *runner) prepare(s pacer.Send) job {
	if r.hasPrep && r.prepared.s.Req == s.Req && r.prepared.s.Seq == s.Seq && r.prepared.s.Warmup == s.Warmup {
		r.prepared.s = s
		return r.prepared
	}
	req := &r.wl.Requests[s.Req]
	rec := &results.Record{
		ID: newUUID(), SessionNum: s.Seq, TraceRow: req.Row, ConversationID: req.SessionID,
		CorrelationID: r.correlationID(req), Turn: req.Turn, Warmup: s.Warmup,
		InputTokens: r.cfg.Endpoint.Prompts.Tokens(req), RequestedOutputTokens: max(req.OutputLength, 0),
		Chunks: make([]results.Chunk, 0, min(max(req.OutputLength, 16), 1<<14)),
	}
	r.prepared, r.hasPrep = job{s: s, rec: rec, body: r.body.build(req), req: req}, true
	return r.prepared
}

// correlationID is one id per session (AIPerf's x_correlation_id).
func (r *runner) correlationID(req *traces.Request) string {
	if req.SessionID == "" {
		return newUUID()
	}
	id, ok := r.sessionIDs[req.SessionID]
	if !ok || req.Turn == 0 {
		id = newUUID()
		r.sessionIDs[req.SessionID] = id
	}
	return id
}

// dispatch hands j to an idle worker, or starts one (vegeta's pattern:
// sends never queue behind busy workers).
func (r *runner) dispatch(j job) {
	j.rec.IntendedNs = r.wall0 + int64(j.s.Intended)
	r.inflight++
	r.sent.Add(1)
	lateBy := r.wait.elapsed() - j.s.At
	r.sinkMu.Lock()
	r.report.noteSend(j.s, lateBy)
	r.sinkMu.Unlock()
	select {
	case r.jobs <- j:
	default:
		r.wg.Add(1)
		go r.worker(j)
	}
}

func (r *runner) worker(first job) {
	defer r.wg.Done()
	st := newStream()
	r.handle(st, first)
	for j := range r.jobs {
		r.handle(st, j)
	}
}

// handle sends one request, reports its completion to the pacer first (a
// closed-loop slot frees at once), then counts its tokens and records it.
func (r *runner) handle(st *stream, j job) {
	j.noDone = r.client.do(r.ctx, st, j.rec, j.body)
	r.done <- completion{s: j.s, at: r.wait.elapsed()}
	j.implausibleUsage = r.client.finish(st, j.rec)
	j.reason, j.clientOSL, j.badUsage = string(st.reason), st.tally.out+st.tally.rsn, st.badUsage
	j.usagePlausible = j.rec.Usage != nil && j.rec.Usage.CompletionTokens <= st.tally.plausibleOutput(j.rec)
	r.record(j)
}

func (r *runner) record(j job) {
	r.finished.Add(1)
	if j.rec.Error != nil {
		r.errs.Add(1)
	}
	m, err := r.sink(j.rec)
	r.sinkMu.Lock()
	defer r.sinkMu.Unlock()
	if err != nil && r.err == nil {
		r.err = fmt.Errorf("recording request %d: %w", j.rec.SessionNum, err)
		r.abort()
	}
	r.report.add(j, &m)
}

// startProgress runs the progress callback until the returned stop.
func (r *runner) startProgress() (stop func()) {
	if r.cfg.Progress == nil {
		return func() {}
	}
	every := r.cfg.ProgressEvery
	if every <= 0 {
		every = time.Second
	}
	quit, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				r.cfg.Progress(r.progress(false))
			case <-quit:
				r.cfg.Progress(r.progress(true))
				return
			}
		}
	}()
	return func() { close(quit); <-finished }
}

func (r *runner) progress(final bool) Progress {
	sent, done := r.sent.Load(), r.finished.Load()
	return Progress{Elapsed: r.wait.elapsed(), Total: r.pacer.Total(), Sent: sent, Done: done,
		InFlight: sent - done, Errors: r.errs.Load(), Duration: r.cfg.Limits.Duration, Final: final}
}

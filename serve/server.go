package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/sim"
	"github.com/simbench/simbench/traces"
)

// DefaultModel is the model name served when Options.Model is empty.
const DefaultModel = "simbench-sim"

// maxBody bounds a request body (a long prompt as token ids fits).
const maxBody = 64 << 20

// Options are a server's settings beside the simulator's config.
type Options struct {
	Model   string  // the model served; requests naming another get 404 ("" = DefaultModel)
	Speedup float64 // virtual seconds a wall second (> 0)
	// Truth, when set, gets every finished request's true server-side
	// times (see truth), also of a request whose client left. It is called
	// from the requests' goroutines, one at a time.
	Truth func(*results.Record) error
	// Faults, when set, are the faults injected (see Faults); their seed
	// defaults to the simulator config's.
	Faults *Faults
}

// Server answers OpenAI-compatible requests with the simulator's timing.
type Server struct {
	model string
	// metrics: /metrics exposes the simulated servers' families
	// (server_metrics.enabled).
	metrics bool
	// template is the chat template's tokens the simulator adds to a
	// prompt (frontend.template_tokens), for per-chunk usage.
	template int
	eng      *engine
	ids      atomic.Int64
	faults   *Faults
	seed     int64        // the faults' seed
	arrived  atomic.Int64 // requests that drew their faults
	truthFn  func(*results.Record) error
	truthMu  sync.Mutex
	truthErr error          // the first error of truthFn
	pending  sync.WaitGroup // requests whose client left, until they finish
}

// New is a server of the cluster cfg describes; its virtual time 0 is now.
func New(cfg sim.Config, opts Options) (*Server, error) {
	if opts.Model == "" {
		opts.Model = DefaultModel
	}
	eng, err := newEngine(cfg, opts.Speedup, time.Now)
	if err != nil {
		return nil, err
	}
	seed := cfg.Seed
	if opts.Faults != nil {
		if err := opts.Faults.Validate(); err != nil {
			return nil, err
		}
		if opts.Faults.Seed != nil {
			seed = *opts.Faults.Seed
		}
	}
	return &Server{model: opts.Model, template: cfg.Frontend.TemplateTokens, eng: eng, truthFn: opts.Truth,
		metrics: cfg.ServerMetrics.Enabled, faults: opts.Faults, seed: seed}, nil
}

// Handler is the server's routes. The simulator only advances while Run
// (or Serve) runs.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.completions(true))
	mux.HandleFunc("POST /v1/completions", s.completions(false))
	mux.HandleFunc("GET /v1/models", s.models)
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	if s.metrics {
		mux.Handle("GET /metrics", promhttp.HandlerFor(prometheus.GathererFunc(s.eng.metrics), promhttp.HandlerOpts{}))
	}
	return mux
}

// Run keeps the simulator at the wall clock until ctx is done.
func (s *Server) Run(ctx context.Context) error { return s.eng.run(ctx) }

// Serve answers on ln until ctx is done, then stops taking requests and
// returns once the responses in flight are complete (the simulator runs on
// until then).
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	engCtx, stopEng := context.WithCancel(context.Background())
	defer stopEng()
	engDone := make(chan error, 1)
	go func() { engDone <- s.Run(engCtx) }()
	hs := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	var err error
	select {
	case err = <-served:
	case err = <-engDone:
		_ = hs.Close()
		return err
	case <-ctx.Done():
		err = hs.Shutdown(context.Background())
	}
	s.pending.Wait()
	stopEng()
	if engErr := <-engDone; engErr != nil {
		return engErr
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return errors.Join(err, s.TruthErr())
}

// TruthErr is the first error Options.Truth returned, if any.
func (s *Server) TruthErr() error {
	s.truthMu.Lock()
	defer s.truthMu.Unlock()
	return s.truthErr
}

// record hands a finished request's truth to Options.Truth.
func (s *Server) record(rec *results.Record, sent []int64, id, corr string) {
	if s.truthFn == nil {
		return
	}
	t := s.truth(rec, sent, id, corr)
	s.truthMu.Lock()
	defer s.truthMu.Unlock()
	if err := s.truthFn(t); err != nil && s.truthErr == nil {
		s.truthErr = err
	}
}

// settle records a request whose handler returned before its end (the
// client left): in the background, once the simulator finishes it.
func (s *Server) settle(l *listener, id, corr string) {
	s.pending.Add(1)
	go func() {
		defer s.pending.Done()
		for {
			ev, _ := l.next(context.Background()) // never cancelled: the simulator finishes every request
			if ev.rec != nil {
				s.record(ev.rec, nil, id, corr)
				return
			}
		}
	}()
}

func (s *Server) models(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []map[string]any{{
		"id": s.model, "object": "model", "created": s.eng.start.Unix(), "owned_by": "simbench",
	}}})
}

// event is what a request's listener heard: a token at virtual time at,
// or (rec set) its end.
type event struct {
	at  int64
	rec *results.Record
}

// listener passes a request's events from the simulator to its handler.
// Its queue grows as events come (never more than the tokens made so far),
// so the simulator never waits on a client.
type listener struct {
	mu    sync.Mutex
	queue []event
	ready chan struct{} // a signal that the queue has grown
}

func newListener() *listener { return &listener{ready: make(chan struct{}, 1)} }

func (l *listener) Token(at int64)           { l.push(event{at: at}) }
func (l *listener) Done(rec *results.Record) { l.push(event{rec: rec}) }

func (l *listener) push(ev event) {
	l.mu.Lock()
	l.queue = append(l.queue, ev)
	l.mu.Unlock()
	select {
	case l.ready <- struct{}{}:
	default:
	}
}

// next waits for the request's next event.
func (l *listener) next(ctx context.Context) (event, error) {
	for {
		l.mu.Lock()
		if len(l.queue) > 0 {
			ev := l.queue[0]
			l.queue = l.queue[1:]
			l.mu.Unlock()
			return ev, nil
		}
		l.mu.Unlock()
		select {
		case <-l.ready:
		case <-ctx.Done():
			return event{}, ctx.Err()
		}
	}
}

func (s *Server) completions(chat bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err != nil {
			writeError(w, http.StatusBadRequest, "request body: "+err.Error())
			return
		}
		p, err := parseRequest(body, chat)
		if err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		if p.model != "" && p.model != s.model {
			writeError(w, http.StatusNotFound, fmt.Sprintf("model: %q is not served here (%q is)", p.model, s.model))
			return
		}
		ft := s.faults.draw(s.seed, s.arrived.Add(1))
		if ft.err != nil {
			s.faultError(r.Context(), w, ft)
			return
		}
		l := newListener()
		if err := s.eng.submit(traces.Request{InputLength: p.isl, OutputLength: p.osl}, l); err != nil {
			writeError(w, http.StatusInternalServerError, err.Error())
			return
		}
		a := &answer{p: p, isl: p.isl + s.template, id: s.newID(chat), created: s.eng.now().Unix(), model: s.model, fault: ft}
		id, corr := requestIDs(r, a.id)
		var rec *results.Record
		if p.stream {
			rec, err = s.stream(r.Context(), w, a, l)
		} else {
			rec, err = s.whole(r.Context(), w, a, l)
		}
		if rec != nil {
			s.record(rec, a.sent, id, corr)
		} else {
			s.settle(l, id, corr)
		}
		if err != nil && r.Context().Err() == nil {
			panic(http.ErrAbortHandler) // the answer cannot be finished: cut it, never end it as if whole
		}
	}
}

// faultError answers with an injected error status, after the headers'
// delay when one was drawn too.
func (s *Server) faultError(ctx context.Context, w http.ResponseWriter, ft fault) {
	if hold(ctx, ft.slowHeader) != nil {
		return
	}
	if ft.err.RetryAfterS > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(ft.err.RetryAfterS))
	}
	writeError(w, ft.err.Status, fmt.Sprintf("injected fault (faults.errors): %s", http.StatusText(ft.err.Status)))
}

// hold waits ms wall milliseconds (none: at once).
func hold(ctx context.Context, ms float64) error {
	if ms <= 0 {
		return nil
	}
	return sleepFor(ctx, time.Duration(ms*float64(time.Millisecond)))
}

// requestIDs are the client's X-Request-ID (else the response id) and
// X-Correlation-ID (else the request id).
func requestIDs(r *http.Request, respID string) (id, corr string) {
	id, corr = r.Header.Get("X-Request-ID"), r.Header.Get("X-Correlation-ID")
	if id == "" {
		id = respID
	}
	if corr == "" {
		corr = id
	}
	return id, corr
}

func (s *Server) newID(chat bool) string {
	prefix := "cmpl-"
	if chat {
		prefix = "chatcmpl-"
	}
	return prefix + strconv.FormatInt(s.ids.Add(1), 10)
}

// stream writes each token when the simulated engine emits it. The headers
// go with the first token (a request the simulator rejects gets an error
// status instead), as an engine answers once its first output is ready. It
// returns the request's record once it has ended (nil if the stream
// stopped before).
func (s *Server) stream(ctx context.Context, w http.ResponseWriter, a *answer, l *listener) (*results.Record, error) {
	var buf []byte
	n := 0
	for {
		ev, err := l.next(ctx)
		if err != nil {
			return nil, err
		}
		if ev.rec != nil {
			if n == 0 { // rejected: its error status is the headers
				if err := hold(ctx, a.fault.slowHeader); err != nil {
					return ev.rec, err
				}
			}
			return ev.rec, end(w, buf[:0], a, ev.rec)
		}
		if err := s.sleepUntil(ctx, s.eng.wall(ev.at)); err != nil {
			return nil, err
		}
		if err := a.fault.before(ctx, n); err != nil {
			return nil, err
		}
		if buf, err = s.tokenEvents(w, buf[:0], a, n); err != nil {
			return nil, err
		}
		a.sent = append(a.sent, s.eng.now().UnixNano())
		if err := write(w, buf); err != nil {
			return nil, err
		}
		n++
		if n == a.fault.cutAfter {
			return nil, errCut
		}
	}
}

// errCut is a stream cut on purpose (faults.cut).
var errCut = errors.New("serve: stream cut (faults.cut)")

// end ends a stream: the usage chunk when asked, then [DONE]; or, for a
// request the simulator rejected, its error status.
func end(w http.ResponseWriter, buf []byte, a *answer, rec *results.Record) error {
	if rec.Error != nil {
		writeError(w, rec.Error.Code, rec.Error.Message)
		return nil
	}
	if a.p.usage {
		var err error
		if buf, err = sseEvent(buf, a.usageChunk(rec.InputTokens, rec.OutputTokens)); err != nil {
			return err
		}
	}
	return write(w, append(buf, sseDone...))
}

// tokenEvents appends the events of output token k; before the first it
// sends the headers and, for chat, the role chunk.
func (s *Server) tokenEvents(w http.ResponseWriter, buf []byte, a *answer, k int) ([]byte, error) {
	var err error
	if k == 0 {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		if a.p.chat {
			if buf, err = sseEvent(buf, a.roleChunk()); err != nil {
				return buf, err
			}
		}
	}
	return sseEvent(buf, a.tokenChunk(k, a.p.osl, a.isl))
}

// whole answers at the last token; it returns the request's record (nil
// if the client left before its end).
func (s *Server) whole(ctx context.Context, w http.ResponseWriter, a *answer, l *listener) (*results.Record, error) {
	for {
		ev, err := l.next(ctx)
		if err != nil {
			return nil, err
		}
		rec := ev.rec
		if rec == nil {
			continue
		}
		if rec.Error == nil {
			if err := s.sleepUntil(ctx, s.eng.wall(rec.EndNs-sim.Epoch)); err != nil {
				return rec, err
			}
		}
		if err := hold(ctx, a.fault.slowHeader); err != nil {
			return rec, err
		}
		if rec.Error != nil {
			writeError(w, rec.Error.Code, rec.Error.Message)
			return rec, nil
		}
		writeJSON(w, http.StatusOK, a.whole(rec.InputTokens, rec.OutputTokens))
		return rec, nil
	}
}

// sleepUntil waits for wall time t.
func (s *Server) sleepUntil(ctx context.Context, t time.Time) error {
	return sleepFor(ctx, t.Sub(s.eng.now()))
}

// sleepFor waits d.
func sleepFor(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// write sends b to the client at once.
func write(w http.ResponseWriter, b []byte) error {
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("serve: write: %w", err)
	}
	return http.NewResponseController(w).Flush()
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// writeError answers with OpenAI's error object.
func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]any{"error": map[string]any{
		"message": msg, "type": http.StatusText(code), "code": code,
	}})
}

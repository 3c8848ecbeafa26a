package sim

import "math"

// discipline is the frontend: the server's work on a request between the
// client's send and its arrival at the router, one implementation per
// discipline (frontend.mode; see FrontendConfig.Discipline). Its work on a
// request is request_overhead_ms plus prompt_token_ms a prompt token
// (simulator.frontendWork); the disciplines differ in how the requests'
// work shares the server.
type discipline interface {
	// send starts the work on r, sent now: r arrives at the router now,
	// or at an event the frontend schedules.
	send(r *request)
	// leave is r, which arrived, finishing (completed or rejected).
	leave(r *request)
	// wake is the frontend's own event (evFrontend) of argument arg.
	wake(arg int32)
}

var (
	_ discipline = unboundedFrontend{}
	_ discipline = (*handlerFrontend)(nil)
	_ discipline = (*loopFrontend)(nil)
	_ discipline = (*gateFrontend)(nil)
)

// newDiscipline is s's frontend of the discipline its configuration names.
func newDiscipline(s *simulator) discipline {
	f := s.cfg.Frontend
	switch f.Discipline() {
	case FrontendEventLoop:
		return &loopFrontend{s: s, loop: &sharedServer{rate: 1}} // a ns of CPU a ns, shared
	case FrontendHoldForSlot:
		return &gateFrontend{s: s, limit: s.cfg.Engine.LlamaCpp.Parallel, inner: newPreparer(s)}
	}
	return newPreparer(s)
}

// preparer is a frontend whose work on a request is known at its send:
// ready says when it is done.
type preparer interface {
	discipline
	ready(isl int) int64
}

// newPreparer is unbounded, or frontend.concurrency handlers.
func newPreparer(s *simulator) preparer {
	if n := s.cfg.Frontend.Concurrency; n > 0 {
		return &handlerFrontend{s: s, free: make([]int64, n)}
	}
	return unboundedFrontend{s}
}

// unboundedFrontend is frontend.mode unbounded: every request on its own
// handler, so simultaneous sends reach the engine together.
type unboundedFrontend struct{ s *simulator }

func (f unboundedFrontend) send(r *request) { f.s.arriveAt(r, f.ready(r.isl)) }
func (unboundedFrontend) leave(*request)    {}
func (unboundedFrontend) wake(int32)        {}

// ready is now plus the request's work.
func (f unboundedFrontend) ready(isl int) int64 {
	work := f.s.frontendWork(isl)
	return f.s.serverWork(f.s.now, work)
}

// handlerFrontend is frontend.mode handlers: frontend.concurrency handlers
// take the requests in send order (FIFO), each on the first one free.
type handlerFrontend struct {
	s    *simulator
	free []int64 // when each handler is next free
}

func (f *handlerFrontend) send(r *request) { f.s.arriveAt(r, f.ready(r.isl)) }
func (*handlerFrontend) leave(*request)    {}
func (*handlerFrontend) wake(int32)        {}

// ready is when the first free handler is done with the request.
func (f *handlerFrontend) ready(isl int) int64 {
	work := f.s.frontendWork(isl)
	j := 0
	for i, t := range f.free {
		if t < f.free[j] {
			j = i
		}
	}
	f.free[j] = f.s.serverWork(max(f.s.now, f.free[j]), work)
	return f.free[j]
}

// loopFrontend is frontend.mode event_loop: cpu_share of each request's
// work is CPU on the server's one event loop, shared equally by the
// requests it prepares at once; the rest is latency after it.
type loopFrontend struct {
	s     *simulator
	loop  *sharedServer
	ended []int32 // scratch of wake
}

// send starts r's CPU on the loop, or its latency when it has none.
func (f *loopFrontend) send(r *request) {
	if cpu := f.cpu(f.s.frontendWork(r.isl)); cpu > 0 {
		f.loop.join(f.s.now, r.wi, float64(cpu))
		f.schedule()
		return
	}
	f.done(r)
}

func (*loopFrontend) leave(*request) {}

// wake ends the CPU part of the requests whose share is done.
func (f *loopFrontend) wake(gen int32) {
	if f.loop.stale(gen) {
		return
	}
	f.ended = f.loop.finish(f.s.now, f.ended[:0])
	f.schedule()
	for _, wi := range f.ended {
		f.done(f.s.live[wi])
	}
}

// cpu is the part of work that is CPU on the event loop.
func (f *loopFrontend) cpu(work int64) int64 {
	return int64(math.Round(float64(work) * f.s.cfg.Frontend.CPUShare))
}

// schedule schedules the check for the request whose CPU ends first at
// the current share.
func (f *loopFrontend) schedule() {
	if gen, at, ok := f.loop.next(f.s.now); ok {
		f.s.push(at, evFrontend, gen)
	}
}

// done sends r on to the engine after the rest of its frontend time.
func (f *loopFrontend) done(r *request) {
	work := f.s.frontendWork(r.isl)
	f.s.arriveAt(r, f.s.now+work-f.cpu(work))
}

// gateFrontend is frontend.mode hold_for_slot: at most limit requests are
// past it (in the frontend or the engine), the others wait in send order
// before any work on them; those let through are prepared by inner.
type gateFrontend struct {
	s         *simulator
	limit, in int
	held      []*request
	inner     preparer
}

func (g *gateFrontend) send(r *request) {
	if g.enter(r) {
		g.inner.send(r)
	}
}

func (*gateFrontend) wake(int32) {}

// enter lets r through, or holds it when limit requests are through.
func (g *gateFrontend) enter(r *request) bool {
	if g.in >= g.limit {
		g.held = append(g.held, r)
		return false
	}
	g.in++
	r.gated = true
	return true
}

// leave is a request that was through the gate finishing: the first one
// held, if any, goes through and starts its way to the engine. Its
// arrival is an event even when it is due now, since a worker's step end
// calls this mid-step.
func (g *gateFrontend) leave(r *request) {
	if !r.gated {
		return
	}
	r.gated = false
	g.in--
	if len(g.held) == 0 {
		return
	}
	next := g.held[0]
	g.held[0] = nil
	g.held = g.held[1:]
	g.enter(next)
	g.s.push(g.inner.ready(next.isl), evArrive, next.wi)
}

// arriveAt has r reach the router at at: now, or at an arrival event.
func (s *simulator) arriveAt(r *request, at int64) {
	if at > s.now {
		s.push(at, evArrive, r.wi)
		return
	}
	s.arrive(r)
}

// frontendWork is the server's work on a request of isl prompt tokens:
// request_overhead_ms plus prompt_token_ms a token, in ns.
func (s *simulator) frontendWork(isl int) int64 {
	return s.reqOv + msToNs(s.cfg.Frontend.PromptTokenMs*float64(isl))
}

// serverWork is the end of work ns of the server's work on a request from
// start, which with frontend.arrival_stall_ms stretches the engine's steps
// beside it.
func (s *simulator) serverWork(start, work int64) int64 {
	if s.steal.ns > 0 && work > 0 {
		s.steal.open(frontWindow{start, start + work}, s.now, s.workers)
	}
	return start + work
}

// frontWindow is the server's work on one request, [start, end) ns.
type frontWindow struct{ start, end int64 }

// arrivalSteal is frontend.arrival_stall_ms: the CPU the server's work on
// one request takes from the engine's steps beside it (a CPU engine that
// shares its cores), spread over windows, the spans of that work still
// open or to come.
type arrivalSteal struct {
	ns      int64
	windows []frontWindow
}

// open adds the server's work on a request: the steps in flight are
// stretched by the share of it they overlap, and the steps to come by
// theirs as they start (stall).
func (a *arrivalSteal) open(fw frontWindow, now int64, workers []*worker) {
	a.windows = append(a.windows, fw)
	for _, w := range workers {
		if w.busy {
			w.stallNs += a.share(fw, now, w.stepEnd)
		}
	}
}

// share is the stall a window puts on a step over [from, to).
func (a *arrivalSteal) share(fw frontWindow, from, to int64) int64 {
	o := min(fw.end, to) - max(fw.start, from)
	if o <= 0 {
		return 0
	}
	return int64(math.Round(float64(a.ns) * float64(o) / float64(fw.end-fw.start)))
}

// stall is how much the server's work on requests stretches a step of
// dur ns that starts now: arrival_stall_ms a request, in the share of its
// window the step overlaps. Work beside an idle engine takes nothing from
// it. Steps start in time order, so windows over before now are done
// with.
func (a *arrivalSteal) stall(now, dur int64) int64 {
	if a.ns == 0 {
		return 0
	}
	keep, st := a.windows[:0], int64(0)
	for _, w := range a.windows {
		if w.end <= now {
			continue
		}
		keep = append(keep, w)
		st += a.share(w, now, now+dur)
	}
	a.windows = keep
	return st
}

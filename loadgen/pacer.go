package loadgen

import (
	"cmp"
	"container/heap"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/simbench/simbench/traces"
)

// Send is one request released by the Pacer.
type Send struct {
	Seq int // 0-based position in send order within its phase (AIPerf's session_num)
	Req int // index into Workload.Requests
	// At is the deadline: the request goes out at this offset from the run
	// start. Intended is when the schedule wanted it sent; At is later only
	// when the concurrency cap held the request back.
	At, Intended time.Duration
	Warmup       bool

	phase, sess, turn int
	src               source
}

type source uint8

const (
	srcOpen   source = iota // a session's first turn with a timestamp
	srcClosed               // a session's first turn without one (closed loop)
	srcLater                // a later turn, released by its previous turn's completion
)

// State says what the Pacer can release now.
type State int

const (
	// Ready: Next returned a send.
	Ready State = iota
	// Blocked: nothing can be released until an in-flight request completes.
	Blocked
	// Done: nothing will ever be released again (requests may still be in
	// flight).
	Done
)

// Limits bounds a run beyond what the workload says.
type Limits struct {
	// Duration stops the profiling phase: no send whose deadline is Duration
	// or more after the phase start. 0 = no limit.
	Duration time.Duration
	// Repeat cycles through a closed-loop, single-turn workload until
	// Duration (AIPerf's duration mode with a fixed dataset).
	Repeat bool
}

// Pacer turns a workload into send deadlines. It is pure, as vegeta's pacers
// are: it never reads a clock. It is told when each sent request completed
// (Complete) and answers what to send next and when (Next), so it runs on a
// virtual clock in tests and on the monotonic clock in a real run.
//
// Schedule rules (traces.Workload's semantics):
//   - a session's first turn with a timestamp is sent at that timestamp;
//   - one without is sent as soon as one of Workload.Concurrency slots frees
//     (closed loop);
//   - turn n+1 of a session is sent when turn n has completed plus its
//     DelayMs, and not before its own timestamp, if it has one;
//   - Workload.Concurrency > 0 caps requests in flight for every kind: a send
//     waits for the earliest freed slot (Send.At > Send.Intended).
//
// Warmup requests form a phase of their own that runs first; the profiling
// phase starts when the last warmup request completes. With a warmup phase,
// each phase's timestamps count from its own earliest timestamp.
//
// A Pacer is not safe for concurrent use.
type Pacer struct {
	reqs   []traces.Request
	cap    int
	lim    Limits
	phases []*phase
	cur    int
	slots  durHeap // free-slot times when cap > 0
}

type session struct{ reqs []int } // workload indices in turn order

type phase struct {
	warmup    bool
	sessions  []session
	open      []int // sessions whose first turn has a timestamp, by time
	closed    []int // sessions whose first turn has none, in order
	openPos   int
	closedPos int
	later     laterHeap
	start     time.Duration // phase time zero, offset from the run start
	zeroMs    float64       // the timestamp that maps to start
	inflight  int
	waiting   int // in-flight requests whose session has another turn
	seq       int
	lastDone  time.Duration
	stopped   bool
}

// NewPacer returns a pacer for wl. Requests without a timestamp need
// wl.Concurrency > 0.
func NewPacer(wl *traces.Workload, lim Limits) (*Pacer, error) {
	if len(wl.Requests) == 0 {
		return nil, errors.New("pacer: empty workload")
	}
	p := &Pacer{reqs: wl.Requests, cap: wl.Concurrency, lim: lim}
	warm, prof := splitPhases(wl.Requests)
	for _, idx := range [][]int{warm, prof} {
		if len(idx) > 0 {
			p.phases = append(p.phases, p.newPhase(idx, len(warm) > 0))
		}
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	p.resetSlots(0)
	return p, nil
}

func splitPhases(reqs []traces.Request) (warm, prof []int) {
	for i := range reqs {
		if reqs[i].Warmup {
			warm = append(warm, i)
		} else {
			prof = append(prof, i)
		}
	}
	return warm, prof
}

// newPhase groups idx into sessions (first appearance order) and sorts the
// timed first turns by timestamp.
func (p *Pacer) newPhase(idx []int, rebase bool) *phase {
	ph := &phase{warmup: p.reqs[idx[0]].Warmup}
	byID := map[string]int{}
	for _, i := range idx {
		id := p.reqs[i].SessionID
		if k, ok := byID[id]; ok && id != "" {
			ph.sessions[k].reqs = append(ph.sessions[k].reqs, i)
			continue
		}
		byID[id] = len(ph.sessions)
		ph.sessions = append(ph.sessions, session{reqs: []int{i}})
	}
	for k, s := range ph.sessions {
		if p.reqs[s.reqs[0]].HasTimestamp {
			ph.open = append(ph.open, k)
		} else {
			ph.closed = append(ph.closed, k)
		}
	}
	slices.SortStableFunc(ph.open, func(a, b int) int { return cmp.Compare(p.firstTs(ph, a), p.firstTs(ph, b)) })
	if rebase && len(ph.open) > 0 {
		ph.zeroMs = p.firstTs(ph, ph.open[0])
	}
	return ph
}

func (p *Pacer) firstTs(ph *phase, sess int) float64 {
	return p.reqs[ph.sessions[sess].reqs[0]].TimestampMs
}

func (p *Pacer) validate() error {
	for _, ph := range p.phases {
		if len(ph.closed) > 0 && p.cap <= 0 {
			return errors.New("pacer: requests without timestamps need a concurrency > 0 (closed loop)")
		}
	}
	if !p.lim.Repeat {
		return nil
	}
	if p.lim.Duration <= 0 {
		return errors.New("pacer: repeating the workload needs a duration limit")
	}
	last := p.phases[len(p.phases)-1]
	for _, s := range last.sessions {
		if len(s.reqs) > 1 || len(last.open) > 0 {
			return errors.New("pacer: only a closed-loop, single-turn workload can repeat")
		}
	}
	return nil
}

// Total is the number of sends the workload holds (warmup included); with
// Limits.Repeat the run may send more.
func (p *Pacer) Total() int { return len(p.reqs) }

// Next returns the next send and its deadline without committing to it:
// call Dispatch once it is sent. A completion reported in between may make
// another request due earlier, so call Next again after Complete.
func (p *Pacer) Next() (Send, State) {
	ph, st := p.phase()
	if st != Ready {
		return Send{}, st
	}
	if p.cap > 0 && ph.inflight >= p.cap {
		return Send{}, Blocked
	}
	s, ok := p.candidate(ph)
	if !ok {
		return Send{}, Blocked
	}
	s.At = s.Intended
	if p.cap > 0 {
		s.At = max(s.At, p.slots[0])
	}
	if s.src == srcClosed {
		s.Intended = s.At
	}
	if !ph.warmup && p.lim.Duration > 0 && s.At-ph.start >= p.lim.Duration {
		ph.stopped = true
		return p.Next()
	}
	return s, Ready
}

// phase returns the current phase, moving to the next one when the current
// one is over: no more sends and, for warmup, nothing in flight.
func (p *Pacer) phase() (*phase, State) {
	for {
		ph := p.phases[p.cur]
		if !ph.exhausted(p.lim.Repeat) {
			return ph, Ready
		}
		if p.cur == len(p.phases)-1 {
			return nil, Done
		}
		if ph.inflight > 0 {
			return nil, Blocked
		}
		p.cur++
		p.phases[p.cur].start = ph.lastDone
		p.resetSlots(ph.lastDone)
	}
}

func (ph *phase) exhausted(repeat bool) bool {
	if ph.stopped {
		return true
	}
	closedDone := ph.closedPos >= len(ph.closed) && !(repeat && !ph.warmup && len(ph.closed) > 0)
	return ph.openPos >= len(ph.open) && closedDone && ph.later.Len() == 0 && ph.waiting == 0
}

// candidate returns the earliest-intended pending send of ph (ties: workload
// order).
func (p *Pacer) candidate(ph *phase) (Send, bool) {
	var best Send
	found := false
	consider := func(s Send) {
		if !found || s.Intended < best.Intended || s.Intended == best.Intended && s.Req < best.Req {
			best, found = s, true
		}
	}
	if ph.openPos < len(ph.open) {
		k := ph.open[ph.openPos]
		consider(p.send(ph, k, 0, srcOpen, ph.start+msToDur(p.firstTs(ph, k)-ph.zeroMs)))
	}
	if len(ph.closed) > 0 && (ph.closedPos < len(ph.closed) || p.lim.Repeat && !ph.warmup) {
		k := ph.closed[ph.closedPos%len(ph.closed)]
		consider(p.send(ph, k, 0, srcClosed, ph.start))
	}
	if ph.later.Len() > 0 {
		l := ph.later[0]
		consider(p.send(ph, l.sess, l.turn, srcLater, l.at))
	}
	return best, found
}

func (p *Pacer) send(ph *phase, sess, turn int, src source, intended time.Duration) Send {
	return Send{Seq: ph.seq, Req: ph.sessions[sess].reqs[turn], Intended: intended, Warmup: ph.warmup,
		phase: p.cur, sess: sess, turn: turn, src: src}
}

// Dispatch commits s, the send last returned by Next: it is now in flight.
func (p *Pacer) Dispatch(s Send) {
	ph := p.phases[s.phase]
	switch s.src {
	case srcOpen:
		ph.openPos++
	case srcClosed:
		ph.closedPos++
	case srcLater:
		heap.Pop(&ph.later)
	}
	ph.inflight++
	ph.seq++
	if s.turn+1 < len(ph.sessions[s.sess].reqs) {
		ph.waiting++
	}
	if p.cap > 0 {
		heap.Pop(&p.slots)
	}
}

// Complete reports that the dispatched send s finished (successfully or
// not) at offset at from the run start. It frees a concurrency slot and
// releases the next turn of s's session.
func (p *Pacer) Complete(s Send, at time.Duration) {
	ph := p.phases[s.phase]
	ph.inflight--
	ph.lastDone = max(ph.lastDone, at)
	if p.cap > 0 && s.phase == p.cur {
		heap.Push(&p.slots, at)
	}
	reqs := ph.sessions[s.sess].reqs
	if s.turn+1 >= len(reqs) {
		return
	}
	ph.waiting--
	next := &p.reqs[reqs[s.turn+1]]
	due := at + msToDur(next.DelayMs)
	if next.HasTimestamp {
		due = max(due, ph.start+msToDur(next.TimestampMs-ph.zeroMs))
	}
	heap.Push(&ph.later, laterTurn{sess: s.sess, turn: s.turn + 1, at: due, req: reqs[s.turn+1]})
}

func (p *Pacer) resetSlots(at time.Duration) {
	p.slots = p.slots[:0]
	for range max(p.cap, 0) {
		p.slots = append(p.slots, at)
	}
}

// msToDur converts trace milliseconds to a Duration, rounded to the ns;
// negative values become 0.
func msToDur(ms float64) time.Duration {
	if ms <= 0 || math.IsNaN(ms) {
		return 0
	}
	if ms >= float64(math.MaxInt64)/1e6 {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(math.Round(ms * 1e6))
}

// String describes a send for test failures.
func (s Send) String() string {
	return fmt.Sprintf("seq=%d req=%d at=%v intended=%v warmup=%v", s.Seq, s.Req, s.At, s.Intended, s.Warmup)
}

// laterTurn is a later turn released by its previous turn's completion.
type laterTurn struct {
	sess, turn, req int
	at              time.Duration
}

type laterHeap []laterTurn

func (h laterHeap) Len() int { return len(h) }
func (h laterHeap) Less(i, j int) bool {
	return h[i].at < h[j].at || h[i].at == h[j].at && h[i].req < h[j].req
}
func (h laterHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *laterHeap) Push(x any)   { *h = append(*h, x.(laterTurn)) }
func (h *laterHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

type durHeap []time.Duration

func (h durHeap) Len() int           { return len(h) }
func (h durHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h durHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *durHeap) Push(x any)        { *h = append(*h, x.(time.Duration)) }
func (h *durHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// Package pacer turns a workload into sends: which request goes next and
// when. It is the one implementation of traces.Workload's replay semantics,
// used by the load generator on the monotonic clock and by the simulator on
// its event clock.
//
// A Pacer is pure, as vegeta's pacers are: it never reads a clock and starts
// no goroutines. It is told when each request was sent (Dispatch) and when it
// completed (Complete), and answers what to send next and when (Next). Times
// are offsets from the run start.
//
// Schedule rules:
//   - Requests sharing a SessionID are the turns of one session, in workload
//     order; every request without a SessionID is a session of its own.
//   - A session's first turn with a timestamp is due at that timestamp (open
//     loop); one without is due as soon as one of Workload.Concurrency slots
//     frees (closed loop, which needs Workload.Concurrency > 0).
//   - A later turn is due when every turn it waits for (traces.Request's
//     Parents, or else the previous turn of its session) has completed, plus
//     its DelayMs, and not before its own timestamp, if it has one. A turn
//     with several children releases them all at once: sub-agent branches
//     run concurrently.
//   - Workload.Concurrency > 0 caps the requests in flight for every kind: a
//     due send waits for the earliest freed slot (Send.At > Send.Intended).
//     When some turn of the workload has Parents (an agentic workload), it
//     caps the sessions in flight instead, as AIPerf's agentic mode does: a
//     session takes a slot with its first turn and frees it when its last
//     turn completes; its later turns never wait for a slot.
//     Sends go earliest due time first, ties in workload order.
//   - Warmup requests form a phase of their own that runs first; the
//     profiling phase starts when the last warmup request has completed.
//     With a warmup phase, each phase's timestamps count from the phase's
//     earliest first-turn timestamp.
//   - Limits.Duration stops the profiling phase; Limits.Repeat cycles a
//     closed-loop, single-turn workload until then.
//
// A send's intended time is its due time, except for a closed-loop first
// turn, which has no schedule: its intended time is when its slot freed.
// Send.Seq (AIPerf's session_num) counts sends within a phase.
package pacer

import (
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

	phase, sess, turn int32
	src               source
}

type source uint8

const (
	srcOpen   source = iota // a session's first turn with a timestamp
	srcClosed               // a session's first turn without one (closed loop)
	srcLater                // a later turn, released by its previous turn's completion
)

// String describes a send for test failures.
func (s Send) String() string {
	return fmt.Sprintf("seq=%d req=%d at=%v intended=%v warmup=%v", s.Seq, s.Req, s.At, s.Intended, s.Warmup)
}

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

// Pacer releases a workload's requests on its schedule (see the package
// documentation). A Pacer is not safe for concurrent use.
type Pacer struct {
	reqs   []traces.Request
	cap    int
	perSes bool // the cap counts sessions, not requests
	lim    Limits
	phases []*phase
	cur    int
	slots  minHeap[instant] // free-slot times when cap > 0
}

// New returns a pacer for wl. Requests without a timestamp need
// wl.Concurrency > 0.
func New(wl *traces.Workload, lim Limits) (*Pacer, error) {
	if len(wl.Requests) == 0 {
		return nil, errors.New("empty workload")
	}
	if err := traces.CheckParents(wl.Requests); err != nil {
		return nil, err
	}
	p := &Pacer{reqs: wl.Requests, cap: wl.Concurrency, lim: lim, perSes: agentic(wl.Requests)}
	warm, prof := splitPhases(wl.Requests)
	for _, idx := range [][]int32{warm, prof} {
		if len(idx) > 0 {
			ph, err := newPhase(wl.Requests, idx, len(warm) > 0)
			if err != nil {
				return nil, err
			}
			p.phases = append(p.phases, ph)
		}
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	p.resetSlots(0)
	return p, nil
}

// agentic reports whether some request has Parents: the concurrency cap
// then counts sessions.
func agentic(reqs []traces.Request) bool {
	return slices.ContainsFunc(reqs, func(r traces.Request) bool { return len(r.Parents) > 0 })
}

func splitPhases(reqs []traces.Request) (warm, prof []int32) {
	for i := range reqs {
		if reqs[i].Warmup {
			warm = append(warm, int32(i))
		} else {
			prof = append(prof, int32(i))
		}
	}
	return warm, prof
}

func (p *Pacer) validate() error {
	if err := traces.CheckConcurrency(p.cap, false); err != nil {
		return err
	}
	for _, ph := range p.phases {
		if len(ph.closed) > 0 && p.cap <= 0 {
			return errors.New("requests without timestamps need a concurrency > 0 (closed loop)")
		}
	}
	if !p.lim.Repeat {
		return nil
	}
	if p.lim.Duration <= 0 {
		return errors.New("repeating the workload needs a duration limit")
	}
	if last := p.phases[len(p.phases)-1]; len(last.open) > 0 || len(last.order) > len(last.closed) {
		return errors.New("only a closed-loop, single-turn workload can repeat")
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
	for {
		ph, st := p.phase()
		if st != Ready {
			return Send{}, st
		}
		full := p.cap > 0 && p.busy(ph) >= p.cap
		if full && !p.perSes {
			return Send{}, Blocked
		}
		s, ok := p.candidate(ph, !full)
		if !ok {
			return Send{}, Blocked
		}
		s.At = s.Intended
		if p.needsSlot(s) {
			s.At = max(s.At, time.Duration(p.slots[0]))
		}
		if s.src == srcClosed {
			s.Intended = s.At
		}
		if ph.warmup || p.lim.Duration <= 0 || s.At-ph.start < p.lim.Duration {
			return s, Ready
		}
		ph.stopped = true
	}
}

// phase returns the current phase, moving to the next one when the current
// one is over: no more sends and, for warmup, nothing in flight.
func (p *Pacer) phase() (*phase, State) {
	for {
		ph := p.phases[p.cur]
		if !ph.exhausted(p.repeats(ph)) {
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

// busy is what the cap counts in ph: sessions or requests in flight.
func (p *Pacer) busy(ph *phase) int {
	if p.perSes {
		return ph.active
	}
	return ph.inflight
}

// needsSlot reports whether s takes a concurrency slot: every send under a
// request cap, a session's first turn under a session cap.
func (p *Pacer) needsSlot(s Send) bool {
	return p.cap > 0 && (!p.perSes || s.src != srcLater)
}

// repeats reports whether ph cycles through its closed-loop sessions.
func (p *Pacer) repeats(ph *phase) bool { return p.lim.Repeat && !ph.warmup && len(ph.closed) > 0 }

// candidate returns the earliest-intended pending send of ph (ties: workload
// order); without first, only later turns.
func (p *Pacer) candidate(ph *phase, first bool) (Send, bool) {
	var best Send
	found := false
	if first && ph.openPos < len(ph.open) {
		best, found = p.send(ph, ph.open[ph.openPos], 0, srcOpen, ph.start+ph.openAt[ph.openPos]), true
	}
	if first && (ph.closedPos < len(ph.closed) || p.repeats(ph)) {
		s := p.send(ph, ph.closed[ph.closedPos%len(ph.closed)], 0, srcClosed, ph.start)
		best, found = earlier(best, found, s), true
	}
	if len(ph.later) > 0 {
		l := ph.later[0]
		best, found = earlier(best, found, p.send(ph, l.sess, l.turn, srcLater, l.at)), true
	}
	return best, found
}

// earlier returns the earlier of best (if found) and s.
func earlier(best Send, found bool, s Send) Send {
	if !found || s.Intended < best.Intended || s.Intended == best.Intended && s.Req < best.Req {
		return s
	}
	return best
}

func (p *Pacer) send(ph *phase, sess, turn int32, src source, intended time.Duration) Send {
	return Send{Seq: ph.seq, Req: int(ph.turn(sess, turn)), Intended: intended, Warmup: ph.warmup,
		phase: int32(p.cur), sess: sess, turn: turn, src: src}
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
		ph.later.pop()
	}
	ph.inflight++
	ph.seq++
	if s.src != srcLater {
		ph.left[s.sess] = ph.turns(s.sess)
		ph.active++
	}
	if p.needsSlot(s) {
		p.slots.pop()
	}
}

// Complete reports that the dispatched send s finished (successfully or
// not) at offset at from the run start. It frees a concurrency slot (under
// a session cap, once the session's last turn is done) and releases the
// turns of s's session that were waiting only for s.
func (p *Pacer) Complete(s Send, at time.Duration) {
	ph := p.phases[s.phase]
	ph.inflight--
	ph.lastDone = max(ph.lastDone, at)
	ph.left[s.sess]--
	sessionDone := ph.left[s.sess] == 0
	if sessionDone {
		ph.active--
	}
	if p.cap > 0 && int(s.phase) == p.cur && (!p.perSes || sessionDone) {
		p.slots.push(instant(at))
	}
	lo := ph.bounds[s.sess]
	for _, c := range ph.children(s.sess, s.turn) {
		ph.readyAt[c] = max(ph.readyAt[c], at)
		if ph.need[c]--; ph.need[c] > 0 {
			continue
		}
		ph.unreleased--
		req := ph.order[c]
		next := &p.reqs[req]
		due := ph.readyAt[c] + msToDur(next.DelayMs)
		if next.HasTimestamp {
			due = max(due, ph.start+msToDur(next.TimestampMs-ph.zeroMs))
		}
		ph.later.push(laterTurn{at: due, req: req, sess: s.sess, turn: c - lo})
	}
}

func (p *Pacer) resetSlots(at time.Duration) {
	p.slots = p.slots[:0]
	for range max(p.cap, 0) {
		p.slots = append(p.slots, instant(at))
	}
}

// msToDur converts trace milliseconds to a Duration, rounded to the ns;
// negative values and NaN become 0.
func msToDur(ms float64) time.Duration {
	if ms <= 0 || math.IsNaN(ms) {
		return 0
	}
	if ms >= float64(math.MaxInt64)/1e6 {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(math.Round(ms * 1e6))
}

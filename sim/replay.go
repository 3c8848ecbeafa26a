package sim

import (
	"cmp"
	"errors"
	"math"
	"slices"

	"github.com/simbench/simbench/traces"
)

// pacer decides when each request of a workload is sent. It follows the
// traces.Workload semantics, with the same rules as the load generator's
// pacer (it is a separate implementation on the simulator's event clock):
//
//   - Requests sharing a SessionID are the turns of one session, in workload
//     order; every request without a SessionID is a session of its own.
//   - A session's first turn with a timestamp is due at that timestamp (open
//     loop); one without is due at once (closed loop, which needs
//     Workload.Concurrency > 0).
//   - A later turn is due when the previous turn of its session has completed
//     (the client got its last token or its error) plus its DelayMs, and not
//     before its own timestamp, if it has one.
//   - Workload.Concurrency > 0 caps the requests in flight. Due requests are
//     sent earliest due time first, ties in workload order, as soon as a
//     slot is free.
//   - Warmup requests form a phase of their own that runs first; the
//     profiling phase starts when the last warmup request has completed.
//     With a warmup phase, each phase's timestamps count from the phase's
//     earliest first-turn timestamp.
//
// A request's intended send time is its due time, except for a closed-loop
// first turn, which has no schedule: its intended time is when it was sent.
// Session numbers (AIPerf's session_num) count sends within a phase.
type pacer struct {
	reqs   []traces.Request
	limit  int
	phases []*phase
	cur    int
	flying int
	waking bool // a wake event for the current phase's next first turn is pending
}

type phase struct {
	firsts []int32 // first turns by (offset, index)
	offset []int64 // their due time relative to the phase start
	open   []bool  // the first turn has a timestamp
	cursor int
	start  int64
	zeroMs float64 // timestamp mapped to the phase start
	ready  turnHeap
	size   int // requests in the phase
	done   int
	sent   int
	next   map[int32]int32 // later turn of the same session
}

func newPacer(wl *traces.Workload) (*pacer, error) {
	p := &pacer{reqs: wl.Requests, limit: wl.Concurrency}
	var warm, prof []int32
	for i := range wl.Requests {
		if wl.Requests[i].Warmup {
			warm = append(warm, int32(i))
		} else {
			prof = append(prof, int32(i))
		}
	}
	for _, idx := range [][]int32{warm, prof} {
		if len(idx) > 0 {
			p.phases = append(p.phases, p.newPhase(idx, len(warm) > 0))
		}
	}
	for _, ph := range p.phases {
		if slices.Contains(ph.open, false) && p.limit <= 0 {
			return nil, errors.New("sim: requests without timestamps need a concurrency > 0 (closed loop)")
		}
	}
	return p, nil
}

func (p *pacer) newPhase(idx []int32, rebase bool) *phase {
	ph := &phase{size: len(idx), next: map[int32]int32{}}
	last := map[string]int32{}
	for _, i := range idx {
		r := &p.reqs[i]
		if prev, ok := last[r.SessionID]; ok && r.SessionID != "" {
			ph.next[prev] = i
			last[r.SessionID] = i
			continue
		}
		last[r.SessionID] = i
		ph.firsts = append(ph.firsts, i)
	}
	ph.zeroMs = math.Inf(1)
	for _, i := range ph.firsts {
		if p.reqs[i].HasTimestamp {
			ph.zeroMs = min(ph.zeroMs, p.reqs[i].TimestampMs)
		}
	}
	if !rebase || math.IsInf(ph.zeroMs, 1) {
		ph.zeroMs = 0
	}
	slices.SortStableFunc(ph.firsts, func(a, b int32) int {
		return cmp.Compare(ph.due(&p.reqs[a]), ph.due(&p.reqs[b]))
	})
	for _, i := range ph.firsts {
		ph.offset = append(ph.offset, ph.due(&p.reqs[i]))
		ph.open = append(ph.open, p.reqs[i].HasTimestamp)
	}
	return ph
}

// due is a request's own earliest send time relative to the phase start.
func (ph *phase) due(r *traces.Request) int64 {
	if !r.HasTimestamp {
		return 0
	}
	return max(0, msToNs(r.TimestampMs-ph.zeroMs))
}

// msToNs converts trace milliseconds to ns, rounded.
func msToNs(ms float64) int64 { return int64(math.Round(ms * 1e6)) }

// send is one request released by the pacer.
type send struct {
	idx      int32
	intended int64
	seq      int
}

// next returns the next request to send at now, or false when none is due
// or no slot is free.
func (p *pacer) next(now int64) (send, bool) {
	if p.cur >= len(p.phases) || p.limit > 0 && p.flying >= p.limit {
		return send{}, false
	}
	ph := p.phases[p.cur]
	haveFirst := ph.cursor < len(ph.firsts) && ph.start+ph.offset[ph.cursor] <= now
	var s send
	switch {
	case haveFirst && (len(ph.ready) == 0 ||
		!ph.ready[0].before(turnItem{ph.start + ph.offset[ph.cursor], ph.firsts[ph.cursor]})):
		s = send{idx: ph.firsts[ph.cursor], intended: ph.start + ph.offset[ph.cursor]}
		if !ph.open[ph.cursor] {
			s.intended = now
		}
		ph.cursor++
	case len(ph.ready) > 0:
		it := ph.ready.pop()
		s = send{idx: it.idx, intended: it.t}
	default:
		return send{}, false
	}
	s.seq = ph.sent
	ph.sent++
	p.flying++
	return s, true
}

// wakeAt is when the current phase's next first turn becomes due, when the
// simulator needs a wake event for it.
func (p *pacer) wakeAt(now int64) (int64, bool) {
	if p.waking || p.cur >= len(p.phases) {
		return 0, false
	}
	ph := p.phases[p.cur]
	if ph.cursor >= len(ph.firsts) || ph.start+ph.offset[ph.cursor] <= now {
		return 0, false
	}
	p.waking = true
	return ph.start + ph.offset[ph.cursor], true
}

// done records that idx completed at the client at now. It returns the
// session's next turn and when that turn is due; when the phase is over, the
// next phase starts now.
func (p *pacer) done(idx int32, now int64) (next int32, at int64, ok bool) {
	p.flying--
	ph := p.phases[p.cur]
	ph.done++
	if ph.done == ph.size && p.cur+1 < len(p.phases) {
		p.cur++
		p.phases[p.cur].start = now
		p.waking = false
	}
	next, ok = ph.next[idx]
	if !ok {
		return 0, 0, false
	}
	r := &p.reqs[next]
	at = now + max(0, msToNs(r.DelayMs))
	if r.HasTimestamp {
		at = max(at, ph.start+ph.due(r))
	}
	return next, at, true
}

// ready queues a later turn of the current phase that became due.
func (p *pacer) ready(idx int32, at int64) {
	p.phases[p.cur].ready.push(turnItem{t: at, idx: idx})
}

package pacer

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/simbench/simbench/traces"
)

// phase is the warmup or the profiling part of a workload.
type phase struct {
	warmup bool
	// order holds the phase's workload indices grouped by session, each
	// session's turns in workload order: session k is
	// order[bounds[k]:bounds[k+1]].
	order  []int32
	bounds []int32
	open   []int32         // sessions whose first turn has a timestamp, by due time
	openAt []time.Duration // their due time from the phase start
	closed []int32         // sessions whose first turn has none, in order
	zeroMs float64         // the timestamp that maps to start

	// The DAG of each session's turns, by position in order: the positions
	// of a turn's children are kids[kidAt[i]:kidAt[i+1]]; need[i] counts
	// its parents not yet complete and readyAt is when the last completed.
	kidAt, kids []int32
	need        []int32
	readyAt     []time.Duration
	left        []int32 // per session: turns not yet complete (session cap)

	openPos, closedPos int
	later              minHeap[laterTurn]
	start              time.Duration // phase time zero, offset from the run start
	inflight           int
	active             int // sessions started and not complete (session cap)
	unreleased         int // later turns whose parents have not all completed
	seq                int
	lastDone           time.Duration
	stopped            bool
}

// newPhase groups idx into sessions (first appearance order) and sorts the
// timed first turns by due time, ties in workload order. With rebase, the
// phase's earliest first-turn timestamp is its time zero.
func newPhase(reqs []traces.Request, idx []int32, rebase bool) (*phase, error) {
	ph := &phase{warmup: reqs[idx[0]].Warmup}
	ph.group(reqs, idx)
	if err := ph.link(reqs); err != nil {
		return nil, err
	}
	for k := range int32(len(ph.bounds) - 1) {
		if r := &reqs[ph.turn(k, 0)]; r.HasTimestamp {
			if rebase && (len(ph.open) == 0 || r.TimestampMs < ph.zeroMs) {
				ph.zeroMs = r.TimestampMs
			}
			ph.open = append(ph.open, k)
		} else {
			ph.closed = append(ph.closed, k)
		}
	}
	due := func(k int32) time.Duration { return msToDur(reqs[ph.turn(k, 0)].TimestampMs - ph.zeroMs) }
	slices.SortStableFunc(ph.open, func(a, b int32) int { return cmp.Compare(due(a), due(b)) })
	ph.openAt = make([]time.Duration, len(ph.open))
	for i, k := range ph.open {
		ph.openAt[i] = due(k)
	}
	return ph, nil
}

// link builds each session's DAG: a turn waits for the turns its Parents
// name (by Turn number, within its session and phase), or for the turn
// before it.
func (ph *phase) link(reqs []traces.Request) error {
	n := len(ph.order)
	parents := make([][]int32, n)
	count := make([]int32, n+1)
	for k := range int32(len(ph.bounds) - 1) {
		lo, hi := ph.bounds[k], ph.bounds[k+1]
		for i := lo + 1; i < hi; i++ {
			ps, err := parentPositions(reqs, ph.order[lo:hi], i-lo)
			if err != nil {
				return err
			}
			for _, p := range ps {
				parents[i] = append(parents[i], lo+p)
				count[lo+p+1]++
			}
		}
	}
	ph.kidAt = make([]int32, n+1)
	for i := range n {
		ph.kidAt[i+1] = ph.kidAt[i] + count[i+1]
	}
	ph.kids = make([]int32, ph.kidAt[n])
	fill := slices.Clone(ph.kidAt[:n])
	ph.need = make([]int32, n)
	for i, ps := range parents {
		ph.need[i] = int32(len(ps))
		for _, p := range ps {
			ph.kids[fill[p]] = int32(i)
			fill[p]++
		}
	}
	ph.readyAt = make([]time.Duration, n)
	ph.unreleased = n - (len(ph.bounds) - 1)
	ph.left = make([]int32, len(ph.bounds)-1)
	return nil
}

// parentPositions returns the positions (within session, whose workload
// indices are sess) of the turns that the turn at position t waits for.
func parentPositions(reqs []traces.Request, sess []int32, t int32) ([]int32, error) {
	r := &reqs[sess[t]]
	if len(r.Parents) == 0 {
		return []int32{t - 1}, nil
	}
	out := make([]int32, 0, len(r.Parents))
	for _, want := range r.Parents {
		j := slices.IndexFunc(sess[:t], func(w int32) bool { return reqs[w].Turn == want })
		if j < 0 {
			return nil, fmt.Errorf("request %d (session %q turn %d) waits for turn %d, which is not an earlier turn of its session in its phase",
				r.Row, r.SessionID, r.Turn, want)
		}
		out = append(out, int32(j))
	}
	return out, nil
}

// group fills order and bounds: requests sharing a non-empty SessionID are
// one session, every other request a session of its own.
func (ph *phase) group(reqs []traces.Request, idx []int32) {
	sessOf := make([]int32, len(idx))
	count := []int32{}
	byID := map[string]int32{}
	for i, w := range idx {
		id := reqs[w].SessionID
		k, ok := byID[id]
		if !ok || id == "" {
			k = int32(len(count))
			count = append(count, 0)
			if id != "" {
				byID[id] = k
			}
		}
		sessOf[i] = k
		count[k]++
	}
	ph.bounds = make([]int32, len(count)+1)
	for k, n := range count {
		ph.bounds[k+1] = ph.bounds[k] + n
	}
	fill := slices.Clone(ph.bounds[:len(count)])
	ph.order = make([]int32, len(idx))
	for i, w := range idx {
		ph.order[fill[sessOf[i]]] = w
		fill[sessOf[i]]++
	}
}

// turn is the workload index of session k's turn t.
func (ph *phase) turn(k, t int32) int32 { return ph.order[ph.bounds[k]+t] }

// turns is the number of turns of session k.
func (ph *phase) turns(k int32) int32 { return ph.bounds[k+1] - ph.bounds[k] }

// children returns the positions of the turns waiting for session k's turn t.
func (ph *phase) children(k, t int32) []int32 {
	i := ph.bounds[k] + t
	return ph.kids[ph.kidAt[i]:ph.kidAt[i+1]]
}

// exhausted reports whether ph has nothing left to send: it was stopped, or
// every session is sent and no turn is waiting for its parents.
func (ph *phase) exhausted(repeat bool) bool {
	if ph.stopped {
		return true
	}
	closedDone := ph.closedPos >= len(ph.closed) && !repeat
	return ph.openPos >= len(ph.open) && closedDone && len(ph.later) == 0 && ph.unreleased == 0
}

// laterTurn is a later turn released by its previous turn's completion.
type laterTurn struct {
	at         time.Duration
	req        int32
	sess, turn int32
}

func (a laterTurn) before(b laterTurn) bool { return a.at < b.at || a.at == b.at && a.req < b.req }

// instant is a free concurrency slot's time.
type instant time.Duration

func (a instant) before(b instant) bool { return a < b }

// minHeap is a binary min-heap by the items' before.
type minHeap[T interface{ before(T) bool }] []T

func (h *minHeap[T]) push(x T) {
	*h = append(*h, x)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if !s[i].before(s[p]) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *minHeap[T]) pop() T {
	s := *h
	top, last := s[0], len(s)-1
	s[0] = s[last]
	s = s[:last]
	for i := 0; ; {
		m := 2*i + 1
		if m >= last {
			break
		}
		if r := m + 1; r < last && s[r].before(s[m]) {
			m = r
		}
		if !s[m].before(s[i]) {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}

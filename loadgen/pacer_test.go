package loadgen

import (
	"container/heap"
	"testing"
	"time"

	"github.com/simbench/simbench/traces"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const ms = time.Millisecond

// sent is what the virtual-clock harness observed for one send.
type sent struct {
	Req              int
	At, Intended     time.Duration
	Warmup           bool
	Seq              int
	Done             time.Duration
	SentAtClockValue time.Duration
}

type pending struct {
	s    Send
	done time.Duration
}

type pendingHeap []pending

func (h pendingHeap) Len() int { return len(h) }
func (h pendingHeap) Less(i, j int) bool {
	return h[i].done < h[j].done || h[i].done == h[j].done && h[i].s.Req < h[j].s.Req
}
func (h pendingHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *pendingHeap) Push(x any)   { *h = append(*h, x.(pending)) }
func (h *pendingHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// simulate drives p on a virtual clock, as the real driver does on the
// monotonic one: wait for the next deadline unless a completion comes
// first. service gives each request's duration.
func simulate(t *testing.T, p *Pacer, service func(req int) time.Duration) []sent {
	t.Helper()
	var (
		now      time.Duration
		inflight pendingHeap
		out      []sent
	)
	for steps := 0; steps < 100000; steps++ {
		s, st := p.Next()
		if st == Ready && (inflight.Len() == 0 || s.At < inflight[0].done) {
			now = max(now, s.At)
			p.Dispatch(s)
			done := now + service(s.Req)
			heap.Push(&inflight, pending{s, done})
			out = append(out, sent{Req: s.Req, At: s.At, Intended: s.Intended, Warmup: s.Warmup, Seq: s.Seq, Done: done, SentAtClockValue: now})
			continue
		}
		if inflight.Len() == 0 {
			require.Equal(t, Done, st, "pacer blocked with nothing in flight")
			return out
		}
		c := heap.Pop(&inflight).(pending)
		now = max(now, c.done)
		p.Complete(c.s, c.done)
	}
	t.Fatal("simulation did not end")
	return nil
}

func constService(d time.Duration) func(int) time.Duration {
	return func(int) time.Duration { return d }
}

func timed(ts ...float64) []traces.Request {
	out := make([]traces.Request, len(ts))
	for i, v := range ts {
		out[i] = traces.Request{Row: i, TimestampMs: v, HasTimestamp: true, InputLength: 10, OutputLength: 5}
	}
	return out
}

func untimed(n int) []traces.Request {
	out := make([]traces.Request, n)
	for i := range out {
		out[i] = traces.Request{Row: i, InputLength: 10, OutputLength: 5}
	}
	return out
}

func newPacer(t *testing.T, reqs []traces.Request, conc int, lim Limits) *Pacer {
	t.Helper()
	p, err := NewPacer(&traces.Workload{Requests: reqs, Concurrency: conc, BlockSize: 512}, lim)
	require.NoError(t, err)
	return p
}

func ats(ss []sent) (at, intended []time.Duration, reqs []int) {
	for _, s := range ss {
		at = append(at, s.At)
		intended = append(intended, s.Intended)
		reqs = append(reqs, s.Req)
	}
	return at, intended, reqs
}

func TestPacerFixedScheduleKeepsTimestamps(t *testing.T) {
	t.Parallel()
	// Unsorted on purpose, with a tie and a fractional ms: sends go in time
	// order, ties in workload order, whatever the service times.
	p := newPacer(t, timed(0, 25, 10, 10, 0.0015), 0, Limits{})
	out := simulate(t, p, constService(time.Second))
	at, intended, reqs := ats(out)
	assert.Equal(t, []int{0, 4, 2, 3, 1}, reqs)
	assert.Equal(t, []time.Duration{0, 1500, 10 * ms, 10 * ms, 25 * ms}, at)
	assert.Equal(t, at, intended)
	for i, s := range out {
		assert.Equal(t, i, s.Seq)
	}
}

func TestPacerConcurrencyCapDelaysButKeepsIntent(t *testing.T) {
	t.Parallel()
	p := newPacer(t, timed(0, 10, 20, 50), 1, Limits{})
	at, intended, _ := ats(simulate(t, p, constService(15*ms)))
	assert.Equal(t, []time.Duration{0, 15 * ms, 30 * ms, 50 * ms}, at)
	assert.Equal(t, []time.Duration{0, 10 * ms, 20 * ms, 50 * ms}, intended)
}

func TestPacerClosedLoop(t *testing.T) {
	t.Parallel()
	p := newPacer(t, untimed(5), 2, Limits{})
	out := simulate(t, p, func(req int) time.Duration { return time.Duration(10+req) * ms })
	at, intended, reqs := ats(out)
	assert.Equal(t, []int{0, 1, 2, 3, 4}, reqs)
	// 0 and 1 at once; 2 when 0 ends (10 ms); 3 when 1 ends (11 ms); 4 when 2 ends (10+12).
	assert.Equal(t, []time.Duration{0, 0, 10 * ms, 11 * ms, 22 * ms}, at)
	assert.Equal(t, at, intended, "closed-loop sends are intended when their slot frees")
}

func TestPacerClosedLoopNeedsConcurrency(t *testing.T) {
	t.Parallel()
	_, err := NewPacer(&traces.Workload{Requests: untimed(2)}, Limits{})
	require.ErrorContains(t, err, "concurrency")
	_, err = NewPacer(&traces.Workload{}, Limits{})
	require.Error(t, err)
}

func TestPacerMultiTurnSessions(t *testing.T) {
	t.Parallel()
	reqs := []traces.Request{
		{Row: 0, SessionID: "a", Turn: 0, TimestampMs: 0, HasTimestamp: true},
		{Row: 1, SessionID: "b", Turn: 0, TimestampMs: 5, HasTimestamp: true},
		{Row: 2, SessionID: "a", Turn: 1, DelayMs: 3},
		{Row: 3, SessionID: "b", Turn: 1, DelayMs: 0, TimestampMs: 100, HasTimestamp: true}, // its own timestamp is later
		{Row: 4, SessionID: "a", Turn: 2, DelayMs: 1},
	}
	p := newPacer(t, reqs, 0, Limits{})
	out := simulate(t, p, constService(20*ms))
	at, intended, order := ats(out)
	// a0 at 0 ends 20 → a1 at 23, ends 43 → a2 at 44; b0 at 5 ends 25 → b1 not before 100.
	assert.Equal(t, []int{0, 1, 2, 4, 3}, order)
	assert.Equal(t, []time.Duration{0, 5 * ms, 23 * ms, 44 * ms, 100 * ms}, at)
	assert.Equal(t, at, intended)
}

func TestPacerWarmupRunsFirst(t *testing.T) {
	t.Parallel()
	reqs := append(untimed(2), timed(40, 40, 50)...)
	reqs[0].Warmup, reqs[1].Warmup = true, true
	reqs[2].TimestampMs = 30 // profiling timestamps count from their own earliest one (30)
	p := newPacer(t, reqs, 1, Limits{})
	out := simulate(t, p, constService(10*ms))
	at, intended, order := ats(out)
	assert.Equal(t, []int{0, 1, 2, 3, 4}, order)
	// warmup: 0 at 0, 1 at 10, ends 20 → profiling zero = 20 ms: 20, 30, 40 (cap 1, 10 ms each)
	assert.Equal(t, []time.Duration{0, 10 * ms, 20 * ms, 30 * ms, 40 * ms}, at)
	assert.Equal(t, []time.Duration{0, 10 * ms, 20 * ms, 30 * ms, 40 * ms}, intended)
	assert.True(t, out[0].Warmup && out[1].Warmup && !out[2].Warmup)
	assert.Equal(t, []int{0, 1, 0, 1, 2}, []int{out[0].Seq, out[1].Seq, out[2].Seq, out[3].Seq, out[4].Seq})
}

func TestPacerDurationLimit(t *testing.T) {
	t.Parallel()
	p := newPacer(t, timed(0, 100, 200, 300, 350, 400), 0, Limits{Duration: 350 * ms})
	_, _, order := ats(simulate(t, p, constService(ms)))
	assert.Equal(t, []int{0, 1, 2, 3}, order, "a deadline at or after the duration is not sent")
}

func TestPacerRepeatUntilDuration(t *testing.T) {
	t.Parallel()
	p := newPacer(t, untimed(2), 1, Limits{Duration: 45 * ms, Repeat: true})
	at, _, order := ats(simulate(t, p, constService(10*ms)))
	assert.Equal(t, []int{0, 1, 0, 1, 0}, order)
	assert.Equal(t, []time.Duration{0, 10 * ms, 20 * ms, 30 * ms, 40 * ms}, at)

	_, err := NewPacer(&traces.Workload{Requests: untimed(2), Concurrency: 1}, Limits{Repeat: true})
	require.ErrorContains(t, err, "duration")
	_, err = NewPacer(&traces.Workload{Requests: timed(0, 1), Concurrency: 1}, Limits{Repeat: true, Duration: time.Second})
	require.ErrorContains(t, err, "closed-loop")
}

func TestPacerNextIsAPeek(t *testing.T) {
	t.Parallel()
	p := newPacer(t, timed(0, 10), 0, Limits{})
	a, st := p.Next()
	b, st2 := p.Next()
	require.Equal(t, Ready, st)
	require.Equal(t, st, st2)
	assert.Equal(t, a, b)
}

func TestPacerCompletionCanMakeAnEarlierSendDue(t *testing.T) {
	t.Parallel()
	// Session a's second turn (no delay) becomes due at a0's completion (5 ms),
	// before b0's timestamp (100 ms), which Next returned first.
	reqs := []traces.Request{
		{SessionID: "a", TimestampMs: 0, HasTimestamp: true},
		{SessionID: "b", TimestampMs: 100, HasTimestamp: true},
		{SessionID: "a", Turn: 1},
	}
	p := newPacer(t, reqs, 0, Limits{})
	s, _ := p.Next()
	p.Dispatch(s)
	next, _ := p.Next()
	assert.Equal(t, 1, next.Req)
	p.Complete(s, 5*ms)
	next, _ = p.Next()
	assert.Equal(t, 2, next.Req)
	assert.Equal(t, 5*ms, next.At)
}

func TestPacerSyntheticRates(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{traces.ModeConstant, traces.ModePoisson} {
		wl, err := traces.Synthesize(traces.SynthSpec{Mode: mode, Rate: 100, RequestCount: 50, ISL: 10, OSL: 5, Seed: 1})
		require.NoError(t, err)
		p, err := NewPacer(wl, Limits{})
		require.NoError(t, err)
		out := simulate(t, p, constService(500*ms)) // slow server: open loop does not wait
		require.Len(t, out, 50)
		for i, s := range out {
			assert.Equal(t, msToDur(wl.Requests[i].TimestampMs), s.At, "%s send %d", mode, i)
		}
		if mode == traces.ModeConstant {
			assert.Equal(t, 490*ms, out[49].At)
		}
	}
}

func TestMsToDur(t *testing.T) {
	t.Parallel()
	assert.Equal(t, time.Duration(0), msToDur(-3))
	assert.Equal(t, time.Duration(1500), msToDur(0.0015))
	assert.Equal(t, time.Duration(1<<63-1), msToDur(1e300))
}

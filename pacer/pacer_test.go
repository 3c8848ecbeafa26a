package pacer

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/traces"
)

const ms = time.Millisecond

// sent is what the virtual-clock harness observed for one send.
type sent struct {
	Send
	Done time.Duration
}

// pending is an in-flight send and when it completes.
type pending struct {
	s    Send
	done time.Duration
}

func (a pending) before(b pending) bool {
	return a.done < b.done || a.done == b.done && a.s.Req < b.s.Req
}

// simulate drives p on a virtual clock, as the load generator does on the
// monotonic one and the simulator on its event clock: wait for the next
// deadline unless a completion comes first. service gives each request's
// duration.
func simulate(t *testing.T, p *Pacer, service func(req int) time.Duration) []sent {
	t.Helper()
	var (
		now      time.Duration
		inflight minHeap[pending]
		out      []sent
	)
	for range 100000 {
		s, st := p.Next()
		if st == Ready && (len(inflight) == 0 || s.At < inflight[0].done) {
			require.GreaterOrEqual(t, s.At, now, "a deadline in the past: %v", s)
			now = s.At
			p.Dispatch(s)
			done := now + service(s.Req)
			inflight.push(pending{s, done})
			out = append(out, sent{s, done})
			continue
		}
		if len(inflight) == 0 {
			require.Equal(t, Done, st, "pacer blocked with nothing in flight")
			return out
		}
		c := inflight.pop()
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
	p, err := New(&traces.Workload{Requests: reqs, Concurrency: conc, BlockSize: 512}, lim)
	require.NoError(t, err)
	return p
}

func durs(msv ...float64) []time.Duration {
	out := make([]time.Duration, len(msv))
	for i, v := range msv {
		out[i] = time.Duration(v * float64(ms))
	}
	return out
}

func multiTurn() []traces.Request {
	return []traces.Request{
		{Row: 0, SessionID: "a", Turn: 0, TimestampMs: 0, HasTimestamp: true},
		{Row: 1, SessionID: "b", Turn: 0, TimestampMs: 5, HasTimestamp: true},
		{Row: 2, SessionID: "a", Turn: 1, DelayMs: 3},
		{Row: 3, SessionID: "b", Turn: 1, DelayMs: 0, TimestampMs: 100, HasTimestamp: true}, // its own timestamp is later
		{Row: 4, SessionID: "a", Turn: 2, DelayMs: 1},
	}
}

// sessionWithGap: session a's third turn has a timestamp later than its
// previous turn's completion plus delay; b is a single turn in between.
func sessionWithGap() []traces.Request {
	a0, a1, a2 := timed(0)[0], untimed(1)[0], timed(100)[0]
	a1.DelayMs, a2.DelayMs = 5, 1
	for i, r := range []*traces.Request{&a0, &a1, &a2} {
		r.SessionID, r.Turn = "a", i
	}
	return []traces.Request{a0, a1, timed(2)[0], a2}
}

// warmupThenTimed: two warmup requests at 0 (the second takes 30 ms), then
// profiling timestamps 1000 and 1004, which count from 1000.
func warmupThenTimed() []traces.Request {
	reqs := timed(0, 0, 1000, 1004)
	reqs[0].Warmup, reqs[1].Warmup = true, true
	return reqs
}

func warmupThenCapped() []traces.Request {
	reqs := append(untimed(2), timed(40, 40, 50)...)
	reqs[0].Warmup, reqs[1].Warmup = true, true
	reqs[2].TimestampMs = 30 // profiling timestamps count from their own earliest one (30)
	return reqs
}

func TestPacerSchedule(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		reqs    []traces.Request
		conc    int
		lim     Limits
		service func(req int) time.Duration
		order   []int
		at      []time.Duration
		// intended is nil when it equals at.
		intended []time.Duration
		seq      []int // nil: 0, 1, 2, … in send order
		warmup   int   // the first warmup sends are warmup
	}{{
		// Unsorted on purpose, with a tie and a fractional ms: sends go in
		// time order, ties in workload order, whatever the service times.
		name: "fixed schedule keeps timestamps", reqs: timed(0, 25, 10, 10, 0.0015), service: constService(time.Second),
		order: []int{0, 4, 2, 3, 1}, at: []time.Duration{0, 1500, 10 * ms, 10 * ms, 25 * ms},
	}, {
		name: "concurrency cap delays but keeps intent", reqs: timed(0, 10, 20, 50), conc: 1, service: constService(15 * ms),
		order: []int{0, 1, 2, 3}, at: durs(0, 15, 30, 50), intended: durs(0, 10, 20, 50),
	}, {
		name: "unsorted timestamps without cap", reqs: timed(5, 0, 1, 30), service: constService(10 * ms),
		order: []int{1, 2, 0, 3}, at: durs(0, 1, 5, 30),
	}, {
		name: "unsorted timestamps with cap", reqs: timed(5, 0, 1, 30), conc: 1, service: constService(10 * ms),
		order: []int{1, 2, 0, 3}, at: durs(0, 10, 20, 30), intended: durs(0, 1, 5, 30),
	}, {
		// 0 and 1 at once; 2 when 0 ends (10 ms); 3 when 1 ends (11 ms); 4
		// when 2 ends (10+12). Closed-loop sends are intended when their slot
		// frees.
		name: "closed loop", reqs: untimed(5), conc: 2, service: func(req int) time.Duration { return time.Duration(10+req) * ms },
		order: []int{0, 1, 2, 3, 4}, at: durs(0, 0, 10, 11, 22),
	}, {
		name: "closed loop, slots free together", reqs: untimed(5), conc: 2, service: constService(10 * ms),
		order: []int{0, 1, 2, 3, 4}, at: durs(0, 0, 10, 10, 20),
	}, {
		// a0 at 0 ends 20 → a1 at 23, ends 43 → a2 at 44; b0 at 5 ends 25 →
		// b1 not before 100.
		name: "multi-turn sessions", reqs: multiTurn(), service: constService(20 * ms),
		order: []int{0, 1, 2, 4, 3}, at: durs(0, 5, 23, 44, 100),
	}, {
		// a1: a0 ends at 10 + 5 ms delay; a2: a1 ends at 25, +1 = 26, but its
		// timestamp is 100.
		name: "turn waits for delay and own timestamp", reqs: sessionWithGap(), service: constService(10 * ms),
		order: []int{0, 2, 1, 3}, at: durs(0, 2, 15, 100),
	}, {
		// warmup: 0 at 0, 1 at 10, ends 20 → profiling zero = 20 ms: 20, 30,
		// 40 (cap 1, 10 ms each).
		name: "warmup runs first", reqs: warmupThenCapped(), conc: 1, service: constService(10 * ms),
		order: []int{0, 1, 2, 3, 4}, at: durs(0, 10, 20, 30, 40), seq: []int{0, 1, 0, 1, 2}, warmup: 2,
	}, {
		// The profiling phase starts when the last warmup request completes
		// (30 ms), and its timestamps count from its own earliest one.
		name: "profiling starts after the last warmup", reqs: warmupThenTimed(),
		service: func(req int) time.Duration { return map[bool]time.Duration{true: 30 * ms, false: 10 * ms}[req == 1] },
		order:   []int{0, 1, 2, 3}, at: durs(0, 0, 30, 34), seq: []int{0, 1, 0, 1}, warmup: 2,
	}, {
		name: "duration limit", reqs: timed(0, 100, 200, 300, 350, 400), lim: Limits{Duration: 350 * ms}, service: constService(ms),
		order: []int{0, 1, 2, 3}, at: durs(0, 100, 200, 300), // a deadline at or after the duration is not sent
	}, {
		name: "repeat until duration", reqs: untimed(2), conc: 1, lim: Limits{Duration: 45 * ms, Repeat: true}, service: constService(10 * ms),
		order: []int{0, 1, 0, 1, 0}, at: durs(0, 10, 20, 30, 40),
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out := simulate(t, newPacer(t, tt.reqs, tt.conc, tt.lim), tt.service)
			var order, seq []int
			var at, intended []time.Duration
			for i, s := range out {
				order, seq = append(order, s.Req), append(seq, s.Seq)
				at, intended = append(at, s.At), append(intended, s.Intended)
				assert.Equal(t, i < tt.warmup, s.Warmup, "send %d", i)
			}
			assert.Equal(t, tt.order, order)
			assert.Equal(t, tt.at, at)
			assert.Equal(t, orDefault(tt.intended, tt.at), intended)
			assert.Equal(t, orDefault(tt.seq, countFrom0(len(out))), seq)
		})
	}
}

func orDefault[T any](v, def []T) []T {
	if v == nil {
		return def
	}
	return v
}

func countFrom0(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func TestNewRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		wl   traces.Workload
		lim  Limits
		want string
	}{
		{"empty workload", traces.Workload{}, Limits{}, "empty workload"},
		{"closed loop without concurrency", traces.Workload{Requests: untimed(2)}, Limits{},
			"requests without timestamps need a concurrency > 0 (closed loop)"},
		{"closed-loop warmup without concurrency", traces.Workload{Requests: warmupThenCapped()}, Limits{},
			"need a concurrency > 0"},
		{"a concurrency beyond the bound", traces.Workload{Requests: untimed(2), Concurrency: 1_000_000_000}, Limits{},
			"--concurrency must be at most 65536 requests in flight, got 1000000000"},
		{"repeat without duration", traces.Workload{Requests: untimed(2), Concurrency: 1}, Limits{Repeat: true}, "duration"},
		{"repeat with timestamps", traces.Workload{Requests: timed(0, 1), Concurrency: 1}, Limits{Repeat: true, Duration: time.Second},
			"closed-loop"},
		{"repeat with sessions", traces.Workload{Requests: []traces.Request{{SessionID: "a"}, {SessionID: "a", Turn: 1}}, Concurrency: 1},
			Limits{Repeat: true, Duration: time.Second}, "single-turn"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := New(&tt.wl, tt.lim)
			require.ErrorContains(t, err, tt.want)
		})
	}
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

func TestPacerOrderTiesAndCap(t *testing.T) {
	t.Parallel()
	p := newPacer(t, timed(0, 0, 0), 1, Limits{})
	s, st := p.Next()
	require.Equal(t, Ready, st)
	assert.Equal(t, 0, s.Req)
	p.Dispatch(s)
	_, st = p.Next()
	assert.Equal(t, Blocked, st, "cap reached")
	p.Complete(s, 10*ms)
	s, st = p.Next()
	require.Equal(t, Ready, st)
	assert.Equal(t, Send{Seq: 1, Req: 1, At: 10 * ms, Intended: 0}, Send{Seq: s.Seq, Req: s.Req, At: s.At, Intended: s.Intended})
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
		p, err := New(wl, Limits{})
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
	tests := []struct {
		ms   float64
		want time.Duration
	}{{-3, 0}, {0.0015, 1500}, {1e300, 1<<63 - 1}}
	for _, tt := range tests {
		assert.Equal(t, tt.want, msToDur(tt.ms), "%v ms", tt.ms)
	}
}

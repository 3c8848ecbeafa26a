package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/traces"
)

// Every request takes exactly 10 ms (prefill 10 ms, OSL 1).
func tenMs() Config { return constCfg("vllm", 10, 0) }

func sends(t *testing.T, wl *traces.Workload) (start, intended []float64, seq []int) {
	cfg := tenMs()
	cfg.Workers = 8 // never queue at the engine
	recs, _ := runAll(t, cfg, wl)
	for _, r := range recs {
		start = append(start, float64(r.StartNs-Epoch)/float64(ms))
		intended = append(intended, float64(r.IntendedNs-Epoch)/float64(ms))
		seq = append(seq, r.SessionNum)
	}
	return start, intended, seq
}

func closedReq(isl, osl int) traces.Request {
	return traces.Request{InputLength: isl, OutputLength: osl}
}

func TestPacerClosedLoop(t *testing.T) {
	wl := workload(closedReq(10, 1), closedReq(10, 1), closedReq(10, 1), closedReq(10, 1), closedReq(10, 1))
	wl.Concurrency = 2
	start, intended, seq := sends(t, wl)
	assert.Equal(t, []float64{0, 0, 10, 10, 20}, start)
	assert.Equal(t, start, intended) // closed loop has no schedule
	assert.Equal(t, []int{0, 1, 2, 3, 4}, seq)

	wl.Concurrency = 0
	_, err := newPacer(wl)
	assert.ErrorContains(t, err, "need a concurrency > 0")
}

func TestPacerOpenLoopCap(t *testing.T) {
	wl := workload(req(5, 10, 1), req(0, 10, 1), req(1, 10, 1), req(30, 10, 1))
	start, intended, seq := sends(t, wl)
	assert.Equal(t, []float64{5, 0, 1, 30}, start)
	assert.Equal(t, start, intended)
	assert.Equal(t, []int{2, 0, 1, 3}, seq) // send order by timestamp

	wl.Concurrency = 1
	start, intended, _ = sends(t, wl)
	assert.Equal(t, []float64{20, 0, 10, 30}, start)
	assert.Equal(t, []float64{5, 0, 1, 30}, intended)
}

// Turn 2 waits for turn 1 plus its delay, and its own timestamp.
func TestPacerSessions(t *testing.T) {
	a0, a1, a2 := req(0, 10, 1), closedReq(10, 1), req(100, 10, 1)
	a1.DelayMs, a2.DelayMs = 5, 1
	for i, r := range []*traces.Request{&a0, &a1, &a2} {
		r.SessionID, r.Turn = "a", i
	}
	b0 := req(2, 10, 1)
	wl := workload(a0, a1, b0, a2)
	start, intended, _ := sends(t, wl)
	// a1: a0 ends at 10 + 5 ms delay; a2: a1 ends at 25, +1 = 26, but its
	// timestamp is 100.
	assert.Equal(t, []float64{0, 15, 2, 100}, start)
	assert.Equal(t, []float64{0, 15, 2, 100}, intended)
}

// The profiling phase starts when the last warmup request completes, and its
// timestamps count from its own earliest one.
func TestPacerWarmupPhase(t *testing.T) {
	w0, w1 := req(0, 10, 1), req(0, 10, 1)
	w0.Warmup, w1.Warmup = true, true
	w1.OutputLength = 3 // ends at 30 ms
	p0, p1 := req(1000, 10, 1), req(1004, 10, 1)
	recs, _ := runAll(t, tenMs(), workload(w0, w1, p0, p1))
	got := []float64{}
	for _, r := range recs {
		got = append(got, float64(r.StartNs-Epoch)/float64(ms))
	}
	assert.Equal(t, []float64{0, 0, 30, 34}, got)
	assert.Equal(t, 0, recs[2].SessionNum)
	assert.True(t, recs[0].Warmup)
	assert.False(t, recs[2].Warmup)
}

func TestPacerOrderTies(t *testing.T) {
	wl := workload(req(0, 10, 1), req(0, 10, 1), req(0, 10, 1))
	wl.Concurrency = 1
	p, err := newPacer(wl)
	require.NoError(t, err)
	s, ok := p.next(0)
	require.True(t, ok)
	assert.Equal(t, int32(0), s.idx)
	_, ok = p.next(0)
	assert.False(t, ok) // cap reached
	_, _, more := p.done(0, 10)
	assert.False(t, more)
	s, ok = p.next(10)
	require.True(t, ok)
	assert.Equal(t, int32(1), s.idx)
	assert.Equal(t, int64(0), s.intended)
}

package pacer_test

import (
	"cmp"
	"context"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/loadgen"
	"github.com/simbench/simbench/loadgen/openaitest"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/sim"
	"github.com/simbench/simbench/traces"
)

// agreeWorkload has a closed-loop warmup phase, then sessions with turn
// delays and timestamps, a closed-loop request, a timestamp tie and a burst
// the concurrency cap (2) holds back. Every request takes about 20 ms; the
// gaps are wide enough that the send order does not depend on the service
// time (anything under about 100 ms gives the same order), so the load
// generator on a shared machine and the simulator send the same sequence.
func agreeWorkload() *traces.Workload {
	at := func(ms float64) traces.Request { return traces.Request{TimestampMs: ms, HasTimestamp: true} }
	turn := func(r traces.Request, id string, n int, delayMs float64) traces.Request {
		r.SessionID, r.Turn, r.DelayMs = id, n, delayMs
		return r
	}
	reqs := []traces.Request{
		{Warmup: true}, {Warmup: true}, // closed loop, both at once
		turn(at(1000), "a", 0, 0), // profiling time zero
		{},                        // closed loop: at the phase start too, after a0 (workload order)
		turn(at(1200), "b", 0, 0),
		turn(traces.Request{}, "a", 1, 30), // a0's end + 30 ms
		at(1350), at(1350),                 // a tie: workload order
		turn(traces.Request{}, "b", 1, 20),
		turn(at(1450), "a", 2, 10),   // its own timestamp is later than a1's end + 10 ms
		at(1600), at(1605), at(1610), // the third waits for a slot
	}
	for i := range reqs {
		reqs[i].Row, reqs[i].InputLength, reqs[i].OutputLength = i, 16, 2
	}
	return &traces.Workload{Requests: reqs, Concurrency: 2, BlockSize: 16, Source: "agree",
		Digest: traces.ComputeDigest(reqs)}
}

// sendOrder is one send as both record it.
type sendOrder struct {
	Row, Seq     int
	Warmup       bool
	Session      string
	Turn         int
	IntendedOffs time.Duration // from its phase's first send; -1 when the service time sets it
}

// order lists records in send order (phase, then session number) with each
// schedule-defined intended time as an offset from its phase's first send.
func order(t *testing.T, wl *traces.Workload, recs []*results.Record) []sendOrder {
	t.Helper()
	require.Len(t, recs, len(wl.Requests))
	recs = slices.Clone(recs)
	slices.SortFunc(recs, func(a, b *results.Record) int {
		if a.Warmup != b.Warmup {
			return map[bool]int{true: -1, false: 1}[a.Warmup]
		}
		return cmp.Compare(a.SessionNum, b.SessionNum)
	})
	zero := map[bool]int64{}
	var out []sendOrder
	for _, r := range recs {
		if r.SessionNum == 0 {
			zero[r.Warmup] = r.IntendedNs
		}
		src := &wl.Requests[r.TraceRow]
		offs := time.Duration(-1)
		if src.HasTimestamp || src.Turn == 0 {
			offs = time.Duration(r.IntendedNs - zero[r.Warmup])
		}
		out = append(out, sendOrder{Row: r.TraceRow, Seq: r.SessionNum, Warmup: r.Warmup,
			Session: r.ConversationID, Turn: r.Turn, IntendedOffs: offs})
	}
	return out
}

func runLoadgen(t *testing.T, wl *traces.Workload) []*results.Record {
	t.Helper()
	ts := httptest.NewServer(&openaitest.Server{TTFT: 10 * time.Millisecond, ITL: 10 * time.Millisecond})
	defer ts.Close()
	var (
		mu   sync.Mutex
		recs []*results.Record
	)
	ep := loadgen.Endpoint{URL: ts.URL, Type: loadgen.EndpointChat, Model: "m", Streaming: true,
		Timeout: 5 * time.Second, Prompts: loadgen.Prompts{BlockSize: 16, Seed: 1}}
	_, err := loadgen.Run(context.Background(), wl, loadgen.Config{Endpoint: ep}, func(r *results.Record) (results.RecordMetrics, error) {
		mu.Lock()
		defer mu.Unlock()
		recs = append(recs, r)
		return results.ComputeMetrics(r), nil
	})
	require.NoError(t, err)
	return recs
}

func runSim(t *testing.T, wl *traces.Workload) []*results.Record {
	t.Helper()
	cfg := sim.DefaultConfig()
	cfg.Workers = 4 // never queue at the engine
	cfg.Engine.Type, cfg.Engine.BlockSize, cfg.Engine.NumGPUBlocks = "vllm", 16, 1000
	cfg.Engine.EnablePrefixCaching = false
	cfg.Timing.Model = "linear"
	cfg.Timing.Linear = sim.LinearConfig{BaseMs: 10} // 10 ms a step: 20 ms for 2 tokens
	var recs []*results.Record
	_, err := sim.Run(context.Background(), cfg, wl, func(r *results.Record) error {
		recs = append(recs, r)
		return nil
	})
	require.NoError(t, err)
	return recs
}

// TestLoadgenAndSimSendTheSameSequence runs one workload on the load
// generator (against openaitest, on the monotonic clock) and on the
// simulator (on its event clock), both paced by package pacer.
func TestLoadgenAndSimSendTheSameSequence(t *testing.T) {
	t.Parallel()
	wl := agreeWorkload()
	lg, simulated := runLoadgen(t, wl), runSim(t, wl)
	got := order(t, wl, lg)
	assert.Equal(t, got, order(t, wl, simulated))

	ms := time.Millisecond
	var rows []int
	for _, s := range got {
		rows = append(rows, s.Row)
	}
	assert.Equal(t, []int{0, 1, 2, 3, 5, 4, 8, 6, 7, 9, 10, 11, 12}, rows)
	assert.Equal(t, []time.Duration{0, 0, 0, 0, -1, 200 * ms, -1, 350 * ms, 350 * ms, 450 * ms, 600 * ms, 605 * ms, 610 * ms},
		intendedOffsets(got))
	// Row 12 (due at 610 ms) waits for row 10's end (600 ms + about 20 ms).
	for name, recs := range map[string][]*results.Record{"loadgen": lg, "sim": simulated} {
		i := slices.IndexFunc(recs, func(r *results.Record) bool { return r.TraceRow == 12 })
		assert.GreaterOrEqual(t, recs[i].StartNs-recs[i].IntendedNs, int64(9*ms), "%s: held by the cap", name)
	}
}

func intendedOffsets(ss []sendOrder) []time.Duration {
	out := make([]time.Duration, len(ss))
	for i, s := range ss {
		out[i] = s.IntendedOffs
	}
	return out
}

// dagWorkload is two agent sessions (closed loop, --concurrency 1 counting
// sessions): a planner fans out into two sub-agent branches with tool
// waits, a join waits for both, a last turn follows the join.
func dagWorkload() *traces.Workload {
	var reqs []traces.Request
	for _, id := range []string{"a", "b"} {
		reqs = append(reqs,
			traces.Request{SessionID: id},
			traces.Request{SessionID: id, Turn: 1, Parents: []int{0}, DelayMs: 40},
			traces.Request{SessionID: id, Turn: 2, Parents: []int{0}, DelayMs: 90},
			traces.Request{SessionID: id, Turn: 3, Parents: []int{1, 2}, DelayMs: 30},
			traces.Request{SessionID: id, Turn: 4, DelayMs: 10})
	}
	for i := range reqs {
		reqs[i].Row, reqs[i].InputLength, reqs[i].OutputLength = i, 16, 2
	}
	return &traces.Workload{Requests: reqs, Concurrency: 1, BlockSize: 16, Source: "dag",
		Digest: traces.ComputeDigest(reqs)}
}

// TestDAGTurnsStartWhenTheirParentsEnd replays an agentic DAG on the load
// generator and on the simulator: both send the same sequence, and every
// later turn is due exactly when the last of its parents ended plus its
// tool wait (on the simulator's virtual clock to the nanosecond; on the
// monotonic clock never before the parent's recorded end, and within 20
// ms of it: the pacer hears of the end once the client has closed the stream).
// It does not run in parallel with TestLoadgenAndSimSendTheSameSequence,
// whose send order needs service times under about 100 ms.
func TestDAGTurnsStartWhenTheirParentsEnd(t *testing.T) {
	wl := dagWorkload()
	lg, simulated := runLoadgen(t, wl), runSim(t, wl)
	assert.Equal(t, rowsOf(order(t, wl, lg)), rowsOf(order(t, wl, simulated)))
	for name, recs := range map[string][]*results.Record{"loadgen": lg, "sim": simulated} {
		byRow := map[int]*results.Record{}
		for _, r := range recs {
			byRow[r.TraceRow] = r
		}
		slack := map[string]int64{"sim": 0, "loadgen": int64(20 * time.Millisecond)}[name]
		for i := range wl.Requests {
			src := &wl.Requests[i]
			if src.Turn == 0 {
				continue
			}
			var due int64
			for _, p := range traces.ParentTurns(src) {
				due = max(due, byRow[i-src.Turn+p].EndNs+int64(src.DelayMs*1e6))
			}
			got := byRow[i].IntendedNs
			assert.GreaterOrEqual(t, got, due, "%s: row %d", name, i)
			assert.LessOrEqual(t, got, due+slack, "%s: row %d", name, i)
		}
		// Session b starts when a's last turn ends (the cap counts sessions).
		assert.GreaterOrEqual(t, byRow[5].StartNs, byRow[4].EndNs, name)
		// a's branches overlap: a fan-out of 2 is 2 concurrent requests.
		assert.Less(t, byRow[2].StartNs, byRow[1].EndNs+int64(60*time.Millisecond), name)
	}
}

// rowsOf is the send order without the intended times (a closed-loop first
// turn's depends on the service time).
func rowsOf(ss []sendOrder) []sendOrder {
	out := slices.Clone(ss)
	for i := range out {
		out[i].IntendedOffs = 0
	}
	return out
}

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

package serve

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/internal/numpy"
	"github.com/simbench/simbench/loadgen"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/sim"
	"github.com/simbench/simbench/traces"
)

// maxClientOverheadMs is the most a token may reach `simbench run` after
// the simulator's schedule (or serve's record) says, in wall ms: the
// request's way in (connect, send, parse, submit) plus the token's way out
// (the engine loop's timer, the handler's wake-up and write, the client's
// read). Under -race on a loaded 2-core machine the tail reached 17 ms
// (p50 about 0.5 ms a token); 30 ms is below a wall step in both tests, so
// a token a step late, or held back to the end, fails.
const maxClientOverheadMs = 30

// TestRunMeasuresTheSchedule: `simbench run`'s load generator against an
// in-process serve records every token at the time the simulator's own
// replay of the same workload stamps it (divided by the speedup), late by
// at most the client overhead and never early.
func TestRunMeasuresTheSchedule(t *testing.T) {
	// A wall step (50 ms) above the overhead bound: a token a step late fails.
	const speedup, stepMs, osl = 1.5, 75.0, 4
	cfg := sim.DefaultConfig()
	cfg.Workers = 1
	cfg.Frontend.RequestOverheadMs = 0
	cfg.Frontend.TemplateTokens = 0
	cfg.Engine.AsyncScheduling = new(bool)
	cfg.Timing.Model = "linear"
	cfg.Timing.Linear = sim.LinearConfig{BaseMs: stepMs}
	// Requests far enough apart that each finds the engine idle: its
	// schedule does not depend on when within a step it arrives.
	var reqs []traces.Request
	for i := range 6 {
		reqs = append(reqs, traces.Request{Row: i, TimestampMs: float64(i) * 450, HasTimestamp: true,
			InputLength: 32, OutputLength: osl})
	}
	wl := &traces.Workload{Requests: reqs, BlockSize: 16, Source: "test", Digest: traces.ComputeDigest(reqs)}

	want := map[int]*results.Record{}
	_, err := sim.Run(context.Background(), cfg, wl, func(r *results.Record) error {
		want[r.TraceRow] = r
		return nil
	})
	require.NoError(t, err)

	ts := start(t, cfg, Options{Model: "m", Speedup: speedup})

	// The client replays the schedule at the server's pace.
	fast := *wl
	fast.Requests = slices.Clone(reqs)
	for i := range fast.Requests {
		fast.Requests[i].TimestampMs /= speedup
	}
	var mu sync.Mutex
	got := map[int]*results.Record{}
	ep := loadgen.Endpoint{URL: ts.URL, Type: loadgen.EndpointChat, Model: "m", Streaming: true, ServerTokenCount: true,
		Prompts: loadgen.Prompts{BlockSize: 16}}
	_, err = loadgen.Run(context.Background(), &fast, loadgen.Config{Endpoint: ep}, func(r *results.Record) (results.RecordMetrics, error) {
		mu.Lock()
		defer mu.Unlock()
		got[r.TraceRow] = r
		return results.RecordMetrics{}, nil
	})
	require.NoError(t, err)

	var ttft, perToken []float64
	for row, w := range want {
		g := got[row]
		require.NotNil(t, g, "request %d", row)
		require.Nil(t, g.Error, "request %d", row)
		require.Len(t, g.Chunks, osl, "request %d", row)
		assert.Equal(t, 32, g.InputTokens, "request %d: the prompt's words counted as the server counts them", row)
		for k, c := range g.Chunks {
			truth := float64(w.Chunks[k].AtNs-w.StartNs) / speedup
			late := (float64(c.AtNs-g.StartNs) - truth) / 1e6
			if k == 0 {
				ttft = append(ttft, late)
			} else {
				perToken = append(perToken, late-(ttft[len(ttft)-1]))
			}
			assert.GreaterOrEqual(t, late, -0.01, "request %d token %d: before the schedule", row, k)
			assert.LessOrEqual(t, late, float64(maxClientOverheadMs), "request %d token %d", row, k)
		}
	}
	slices.Sort(ttft)
	slices.Sort(perToken)
	p := numpy.PercentileSorted
	t.Logf("client overhead over the schedule, wall ms: TTFT p50 %.3f p99 %.3f; each later token beyond its request's TTFT overhead p50 %.3f p99 %.3f",
		p(ttft, 50), p(ttft, 99), p(perToken, 50), p(perToken, 99))
}

// maxTailMs bounds a token's way out at 8 streams under -race on a loaded
// machine (the tail reached 28 ms): far below the answer's length (8 steps
// of at least 30 ms), so a stream held back fails.
const maxTailMs = 100

// accuracy is the load generator's added latency against serve's truth,
// wall ms: TTFT, each later token, and send lag, as p50 and p99.
type accuracy struct {
	streams, requests       int
	ttft, perToken, sendLag [2]float64
}

// measureAccuracy runs requests streams of osl tokens at concurrency
// streams against serve on cfg, checks every token `simbench run` records
// arrives at or after serve wrote it and within maxLateMs, and returns the
// client's added latency over the requests after the first wave (the
// first streams sends, each on a new connection, are apart).
func measureAccuracy(t *testing.T, cfg sim.Config, streams, requests, osl int, maxLateMs float64) accuracy {
	t.Helper()
	var mu sync.Mutex
	truth := map[string]*results.Record{}
	ts := start(t, cfg, Options{Model: "m", Speedup: 1, Truth: func(r *results.Record) error {
		mu.Lock()
		defer mu.Unlock()
		truth[r.ID] = r
		return nil
	}})
	if _, err := loadgen.RaiseFileLimit(); err != nil {
		t.Fatal(err)
	}
	var reqs []traces.Request
	for i := range requests {
		reqs = append(reqs, traces.Request{Row: i, InputLength: 64 + 8*(i%64), OutputLength: osl})
	}
	wl := &traces.Workload{Requests: reqs, BlockSize: 16, Concurrency: streams, Source: "test", Digest: traces.ComputeDigest(reqs)}
	var client []*results.Record
	ep := loadgen.Endpoint{URL: ts.URL, Type: loadgen.EndpointCompletions, Model: "m", Streaming: true, Timeout: time.Minute,
		Prompts: loadgen.Prompts{BlockSize: 16}}
	_, err := loadgen.Run(context.Background(), wl, loadgen.Config{Endpoint: ep}, func(r *results.Record) (results.RecordMetrics, error) {
		mu.Lock()
		defer mu.Unlock()
		client = append(client, r)
		return results.RecordMetrics{}, nil
	})
	require.NoError(t, err)

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, client, len(reqs))
	var ttft, perToken, sendLag []float64
	for _, c := range client {
		tr := truth[c.ID]
		require.NotNil(t, tr, "request %s: no server record", c.ID)
		require.Nil(t, c.Error, "request %s", c.ID)
		require.Len(t, c.Chunks, len(tr.Chunks), "request %s", c.ID)
		for k, ch := range c.Chunks {
			late := float64(ch.AtNs-tr.Chunks[k].AtNs) / 1e6
			assert.GreaterOrEqual(t, late, 0.0, "request %s token %d: before the server sent it", c.ID, k)
			assert.LessOrEqual(t, late, maxLateMs, "request %s token %d", c.ID, k)
			if k > 0 && c.TraceRow >= streams {
				perToken = append(perToken, late)
			}
		}
		if c.TraceRow >= streams {
			ttft = append(ttft, float64((c.Chunks[0].AtNs-c.StartNs)-(tr.Chunks[0].AtNs-tr.StartNs))/1e6)
			sendLag = append(sendLag, float64(c.StartNs-c.IntendedNs)/1e6)
		}
	}
	a := accuracy{streams: streams, requests: len(ttft)}
	for i, xs := range [][]float64{ttft, perToken, sendLag} {
		slices.Sort(xs)
		pp := [2]float64{numpy.PercentileSorted(xs, 50), numpy.PercentileSorted(xs, 99)}
		switch i {
		case 0:
			a.ttft = pp
		case 1:
			a.perToken = pp
		default:
			a.sendLag = pp
		}
	}
	return a
}

func (a accuracy) String() string {
	return fmt.Sprintf("%d streams, %d requests after the first wave, wall ms: added TTFT p50 %.3f p99 %.3f; added per token p50 %.3f p99 %.3f; send lag p50 %.3f p99 %.3f",
		a.streams, a.requests, a.ttft[0], a.ttft[1], a.perToken[0], a.perToken[1], a.sendLag[0], a.sendLag[1])
}

// TestRunAgainstTruth: at 8 concurrent streams on one batching engine,
// every token `simbench run` records arrives at or after the time serve
// records it was due out, within the client overhead; the test logs the
// load generator's added latency (TTFT, per token) and send lag.
func TestRunAgainstTruth(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Workers = 1
	cfg.Timing.Model = "linear"
	cfg.Timing.Linear = sim.LinearConfig{BaseMs: 30, DecodeSeqMs: 1, PrefillTokenMs: 0.02}
	t.Log("load generator vs serve's truth: " + measureAccuracy(t, cfg, 8, 56, 8, maxTailMs).String())
}

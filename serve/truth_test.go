package serve_test

import (
	"context"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/internal/numpy"
	"github.com/simbench/simbench/loadgen"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/serve"
	"github.com/simbench/simbench/sim"
	"github.com/simbench/simbench/traces"
)

// maxClientOverheadMs is the most a token may reach `simbench run` after
// the simulator's schedule says, in wall ms: the request's way in (connect,
// send, parse, submit) plus the token's way out (the engine loop's timer,
// the handler's wake-up and write, the client's read), on a shared CI
// machine under -race.
const maxClientOverheadMs = 15

// TestRunMeasuresTheSchedule: `simbench run`'s load generator against an
// in-process serve records every token at the time the simulator's own
// replay of the same workload stamps it (divided by the speedup), late by
// at most the client overhead and never early.
func TestRunMeasuresTheSchedule(t *testing.T) {
	// A wall step (25 ms) above the overhead bound: a token a step late fails.
	const speedup, stepMs, osl = 2.0, 50.0, 4
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
	for i := range 10 {
		reqs = append(reqs, traces.Request{Row: i, TimestampMs: float64(i) * 300, HasTimestamp: true,
			InputLength: 32, OutputLength: osl})
	}
	wl := &traces.Workload{Requests: reqs, BlockSize: 16, Source: "test", Digest: traces.ComputeDigest(reqs)}

	want := map[int]*results.Record{}
	_, err := sim.Run(context.Background(), cfg, wl, func(r *results.Record) error {
		want[r.TraceRow] = r
		return nil
	})
	require.NoError(t, err)

	s, err := serve.New(cfg, serve.Options{Model: "m", Speedup: speedup})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	engDone := make(chan error, 1)
	go func() { engDone <- s.Run(ctx) }()
	ts := httptest.NewServer(s.Handler())
	defer func() { ts.Close(); cancel(); require.NoError(t, <-engDone) }()

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

package sim

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/traces"
)

const ms = int64(1_000_000)

// constCfg is one worker whose every step takes base milliseconds plus
// perToken ms per prompt token, with prefix caching off and no frontend
// overhead (the stamps below are the engine's alone).
func constCfg(engine string, base, perToken float64) Config {
	cfg := DefaultConfig()
	cfg.Frontend.RequestOverheadMs = 0
	cfg.Engine.Type = engine
	cfg.Engine.BlockSize = 16
	cfg.Engine.NumGPUBlocks = 1000
	cfg.Engine.EnablePrefixCaching = false
	// Each step is timed as the test says; planning a step ahead (the
	// engines' default) has a test of its own (TestAsyncScheduling).
	cfg.Engine.AsyncScheduling = ptr(false)
	cfg.Timing.Model = "linear"
	cfg.Timing.Linear = LinearConfig{BaseMs: base, PrefillTokenMs: perToken}
	return cfg
}

// req is a single-turn request sent at atMs.
func req(atMs float64, isl, osl int) traces.Request {
	return traces.Request{TimestampMs: atMs, HasTimestamp: true, InputLength: isl, OutputLength: osl}
}

func workload(reqs ...traces.Request) *traces.Workload {
	for i := range reqs {
		reqs[i].Row = i
	}
	return &traces.Workload{Requests: reqs, BlockSize: 16, Source: "test", Digest: traces.ComputeDigest(reqs)}
}

// runAll simulates and returns the records by workload index.
func runAll(t *testing.T, cfg Config, wl *traces.Workload, opts ...Option) ([]*results.Record, *Summary) {
	t.Helper()
	recs := make([]*results.Record, len(wl.Requests))
	sum, err := Run(context.Background(), cfg, wl, func(r *results.Record) error {
		require.Nil(t, recs[r.TraceRow], "request %d finished twice", r.TraceRow)
		recs[r.TraceRow] = r
		return nil
	}, opts...)
	require.NoError(t, err)
	for i, r := range recs {
		require.NotNil(t, r, "request %d never finished", i)
	}
	return recs, sum
}

// stampsMs returns a record's token times in ms since the virtual epoch.
func stampsMs(r *results.Record) []float64 {
	out := make([]float64, len(r.Chunks))
	for i, c := range r.Chunks {
		out[i] = float64(c.AtNs-Epoch) / float64(ms)
	}
	return out
}

// stages returns the TTFT breakdown as a map of ms.
func stages(r *results.Record) map[string]float64 {
	out := map[string]float64{}
	for _, s := range r.Sim.TTFTBreakdown {
		out[s.Name] = float64(s.Ns) / float64(ms)
	}
	return out
}

func ptr[T any](v T) *T { return &v }

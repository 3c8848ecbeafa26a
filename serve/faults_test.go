package serve

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/loadgen"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/traces"
)

const faultsDoc = `workers: 2
faults:
  seed: 7
  errors:
    - {status: 429, rate: 0.2, retry_after_s: 2}
    - status: 503
      rate: 0.1
  cut: {rate: 0.25, after_tokens: 2}
  stall:
    rate: 0.5
    after_tokens: 3
    ms: 40
  slow_headers: {rate: 0.1, ms: 30}
timing:
  model: linear
  linear: {base_ms: 5}
`

func TestLoadConfigWithFaults(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "sim.yaml")
	require.NoError(t, os.WriteFile(path, []byte(faultsDoc), 0o644))
	cfg, f, err := LoadConfig(path)
	require.NoError(t, err)
	assert.Equal(t, 2, cfg.Workers)
	assert.Equal(t, "linear", cfg.Timing.Model, "the keys after the section are read")
	seed := int64(7)
	assert.Equal(t, &Faults{Seed: &seed,
		Errors:      []ErrorFault{{Status: 429, Rate: 0.2, RetryAfterS: 2}, {Status: 503, Rate: 0.1}},
		Cut:         CutFault{Rate: 0.25, AfterTokens: 2},
		Stall:       StallFault{Rate: 0.5, AfterTokens: 3, Ms: 40},
		SlowHeaders: SlowFault{Rate: 0.1, Ms: 30}}, f)

	path2 := filepath.Join(t.TempDir(), "plain.yaml")
	require.NoError(t, os.WriteFile(path2, []byte("workers: 3\n"), 0o644))
	cfg, f, err = LoadConfig(path2)
	require.NoError(t, err)
	assert.Equal(t, 3, cfg.Workers)
	assert.Nil(t, f)
}

// TestBadFaults: every bad value of the section is refused with the file,
// its line and the key; the simulator's own keys keep their lines.
func TestBadFaults(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, doc, msg string }{
		{"unknown key", "faults:\n  cut:\n    rate: 0.1\n    after: 2\n",
			`line 4: unknown key "faults.cut.after" (known under faults.cut: after_tokens, rate)`},
		{"rate above 1", "faults:\n  cut:\n    rate: 1.5\n", "line 3: faults.cut.rate: must be in [0, 1], got 1.5"},
		{"status", "faults:\n  errors:\n    - status: 429\n      rate: 0.1\n    - status: 404\n      rate: 0.1\n",
			"line 5: faults.errors[1].status: want one of [429 500 502 503 504], got 404"},
		{"rates add up", "faults:\n  errors:\n    - {status: 500, rate: 0.7}\n    - {status: 503, rate: 0.4}\n",
			"line 2: faults.errors: the rates add up to 1.1, more than 1"},
		{"retry after", "faults:\n  errors: [{status: 429, rate: 0.1, retry_after_s: -1}]\n",
			"line 2: faults.errors[0].retry_after_s: must be in [0, 86400], got -1"},
		{"stall without ms", "faults:\n  stall: {rate: 0.1, after_tokens: 2}\n",
			"line 2: faults.stall.ms: must be in (0, 86400000] when the rate is above 0, got 0"},
		{"stall at the first token", "faults:\n  stall: {rate: 0.1, ms: 5}\n",
			"line 2: faults.stall.after_tokens: must be ≥ 1"},
		{"fraction of a token", "faults:\n  cut:\n    rate: 0.1\n    after_tokens: 2.5\n",
			"line 4: faults.cut.after_tokens: want an integer, got 2.5"},
		{"flow style", "{workers: 1, faults: {cut: {rate: 0.1}}}\n", "line 1: faults: write the section in block style"},
		{"the simulator's line", "faults:\n  cut:\n    rate: 0.1\nworkers: 0\n", "workers: must be in [1, 4096], got 0"},
		{"the simulator's unknown key", "faults:\n  cut:\n    rate: 0.1\nworker: 1\n", `line 4: unknown key "worker"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "sim.yaml")
			require.NoError(t, os.WriteFile(path, []byte(tt.doc), 0o644))
			_, _, err := LoadConfig(path)
			require.Error(t, err)
			assert.Contains(t, err.Error(), path+": ")
			assert.Contains(t, err.Error(), tt.msg)
		})
	}
}

// TestFaultsAppearAsRunErrors: against a serve with error rates and cut
// streams, `simbench run`'s load generator writes the error records it
// writes for a real server's: the status (and its reason) of each injected
// error, and a payload error after the cut's tokens for each cut stream;
// the rest succeed with every token. The counts are the seeded draws'.
func TestFaultsAppearAsRunErrors(t *testing.T) {
	t.Parallel()
	f := &Faults{Errors: []ErrorFault{{Status: 429, Rate: 0.2, RetryAfterS: 1}, {Status: 503, Rate: 0.1}},
		Cut: CutFault{Rate: 0.2, AfterTokens: 2}}
	cfg := linearCfg(2)
	const n, osl = 40, 6
	want := map[string]int{}
	for i := range int64(n) {
		switch ft := f.draw(cfg.Seed, i+1); {
		case ft.err != nil:
			want[http.StatusText(ft.err.Status)]++
		case ft.cutAfter >= 0:
			want["cut"]++
		default:
			want["ok"]++
		}
	}
	for _, k := range []string{"Too Many Requests", "Service Unavailable", "cut", "ok"} {
		require.Positive(t, want[k], "the draws give no %s: the test would prove nothing", k)
	}

	ts := start(t, cfg, Options{Model: "m", Speedup: 10, Faults: f})
	var reqs []traces.Request
	for i := range n {
		reqs = append(reqs, traces.Request{Row: i, InputLength: 32, OutputLength: osl})
	}
	wl := &traces.Workload{Requests: reqs, BlockSize: 16, Concurrency: 4, Source: "test", Digest: traces.ComputeDigest(reqs)}
	var mu sync.Mutex
	got := map[string]int{}
	ep := loadgen.Endpoint{URL: ts.URL, Type: loadgen.EndpointChat, Model: "m", Streaming: true, Prompts: loadgen.Prompts{BlockSize: 16}}
	_, err := loadgen.Run(context.Background(), wl, loadgen.Config{Endpoint: ep}, func(r *results.Record) (results.RecordMetrics, error) {
		mu.Lock()
		defer mu.Unlock()
		switch e := r.Error; {
		case e == nil:
			assert.Len(t, r.Chunks, osl, "request %s", r.ID)
			got["ok"]++
		case e.Code == 0:
			assert.Equal(t, "ClientPayloadError", e.Type, "request %s: %s", r.ID, e.Message)
			assert.Contains(t, e.Message, "(after 2 content chunks)")
			assert.Len(t, r.Chunks, 2, "request %s", r.ID)
			got["cut"]++
		default:
			assert.Equal(t, http.StatusText(e.Code), e.Type, "request %s", r.ID)
			assert.Contains(t, e.Message, "injected fault (faults.errors)")
			assert.Empty(t, r.Chunks)
			got[e.Type]++
		}
		return results.RecordMetrics{}, nil
	})
	require.NoError(t, err)
	assert.Equal(t, want, got)
}

// TestRetryAfter: an injected 429 carries its Retry-After.
func TestRetryAfter(t *testing.T) {
	t.Parallel()
	ts := start(t, linearCfg(2), Options{Speedup: 10, Faults: &Faults{Errors: []ErrorFault{{Status: 429, Rate: 1, RetryAfterS: 3}}}})
	resp, err := http.Post(ts.URL+"/v1/completions", "application/json", strings.NewReader(`{"prompt":"a","max_tokens":2}`))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	assert.Equal(t, "3", resp.Header.Get("Retry-After"))
}

// TestStallAndSlowHeaders: a stall holds a stream's token back by its
// length, the tokens due meanwhile following at once; slow headers hold
// back the first token. Steps are 2 ms, the delays far longer.
func TestStallAndSlowHeaders(t *testing.T) {
	t.Parallel()
	f := &Faults{Stall: StallFault{Rate: 1, AfterTokens: 2, Ms: 150}, SlowHeaders: SlowFault{Rate: 1, Ms: 100}}
	ts := start(t, linearCfg(2), Options{Model: "m", Speedup: 1, Faults: f})
	reqs := []traces.Request{{Row: 0, InputLength: 8, OutputLength: 6}}
	wl := &traces.Workload{Requests: reqs, BlockSize: 16, Concurrency: 1, Source: "test", Digest: traces.ComputeDigest(reqs)}
	var rec *results.Record
	ep := loadgen.Endpoint{URL: ts.URL, Type: loadgen.EndpointCompletions, Model: "m", Streaming: true, Prompts: loadgen.Prompts{BlockSize: 16}}
	_, err := loadgen.Run(context.Background(), wl, loadgen.Config{Endpoint: ep}, func(r *results.Record) (results.RecordMetrics, error) {
		rec = r
		return results.RecordMetrics{}, nil
	})
	require.NoError(t, err)
	require.Nil(t, rec.Error)
	require.Len(t, rec.Chunks, 6)
	ms := func(ns int64) float64 { return float64(ns) / 1e6 }
	assert.GreaterOrEqual(t, ms(rec.Chunks[0].AtNs-rec.StartNs), 100.0, "TTFT behind the slow headers")
	assert.Less(t, ms(rec.Chunks[1].AtNs-rec.Chunks[0].AtNs), 50.0, "token 1 follows at once")
	// token 1's read may itself be late by the client overhead
	assert.GreaterOrEqual(t, ms(rec.Chunks[2].AtNs-rec.Chunks[1].AtNs), 150.0-maxClientOverheadMs, "the stall before token 2")
	assert.GreaterOrEqual(t, ms(rec.Chunks[2].AtNs-rec.StartNs), 100+150.0, "the stall after the slow headers")
	assert.Less(t, ms(rec.Chunks[5].AtNs-rec.Chunks[2].AtNs), 50.0, "the tokens due meanwhile follow at once")
}

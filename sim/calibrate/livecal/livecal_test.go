package livecal

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/loadgen"
	"github.com/simbench/simbench/loadgen/openaitest"
	"github.com/simbench/simbench/sim"
	"github.com/simbench/simbench/sim/calibrate"
)

// TestCalibrateAgainstScriptedServer runs the calibration plan against the
// in-process server, which answers every request after a fixed 100 ms and
// then streams a token every 20 ms, each request on its own clock (it is not
// a batching engine, so the steps seen in the token stream are only
// roughly batches): the fit must give a 20 ms step for one sequence, put
// the rest of the measured TTFT into the frontend overhead, reproduce the
// ITLs, and keep the plan's runs.
func TestCalibrateAgainstScriptedServer(t *testing.T) {
	srv := &openaitest.Server{TTFT: 100 * time.Millisecond, ITL: 20 * time.Millisecond, Ollama: true}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	base := sim.DefaultConfig()
	base.Engine.Type = "llamacpp"
	base.Engine.LlamaCpp = sim.LlamaCppConfig{Parallel: 2, CtxSize: 4096, NBatch: 512}
	var log bytes.Buffer
	art := t.TempDir()
	res, err := Calibrate(context.Background(), Options{Base: base, Artifacts: art, Log: &log,
		Plan: calibrate.PlanOptions{Requests: 4, Seed: 1},
		Config: loadgen.Config{Endpoint: loadgen.Endpoint{URL: ts.URL, Model: "m", Type: loadgen.EndpointChat,
			Streaming: true, LegacyMaxTokens: true}, Spin: -1}})
	require.NoError(t, err)
	assert.Contains(t, log.String(), "calibration plan: 3 runs")
	assert.Contains(t, log.String(), "no /api/show")
	require.Len(t, res.Dirs, 3)
	for _, d := range res.Dirs {
		_, err := os.Stat(filepath.Join(d, "profile_export.jsonl"))
		assert.NoError(t, err, d)
	}
	fit := res.Fit
	assert.Equal(t, "linear", fit.Model, "no model shape known: the linear basis")
	assert.Equal(t, [2]int{1, 2}, fit.Range.Concurrency)
	byName := map[string]sim.CalibratedParam{}
	for _, p := range fit.Params {
		byName[p.Name] = p
	}
	one := byName["base_ms"].Value + byName["decode_seq_ms"].Value
	assert.InEpsilon(t, 20, one, 0.15, "step of one sequence: %+v", fit.Params)
	// The rest of an idle request's TTFT is the frontend's: the server's
	// 100 ms and what the machine adds to it, which the run measured. The
	// fit matches TTFT means, so the check is against the mean.
	ttft := 0.0
	for _, r := range fit.Rows {
		if r.Target == "c1-short" && r.Metric == "time_to_first_token" && r.Stat == "avg" {
			ttft = r.Real
		}
	}
	require.Positive(t, ttft, "the c1-short run's TTFT avg row")
	assert.GreaterOrEqual(t, ttft, 100.0)
	assert.InEpsilon(t, ttft, byName["request_overhead_ms"].Value+one, 0.15, "%+v", byName["request_overhead_ms"])
	for _, r := range fit.Rows {
		if r.Metric == "inter_token_latency" && r.Stat == "avg" {
			assert.InDelta(t, 0, r.ErrorPct, 15, "%s", r.Target)
		}
	}
}

func TestLoopback(t *testing.T) {
	for url, want := range map[string]bool{"http://127.0.0.1:8000": true, "localhost:11434": true,
		"http://[::1]:80/v1": true, "gpu-node:8000": false, "http://10.0.0.2": false} {
		assert.Equal(t, want, loopback(url), url)
	}
}

// showBody is an excerpt of Ollama v0.17.4's /api/show for the tiny model.
const showBody = `{"details":{"format":"gguf","family":"llama","quantization_level":"F16"},
"model_info":{"general.architecture":"llama","general.parameter_count":16781824,"llama.attention.head_count":8,
"llama.attention.head_count_kv":4,"llama.block_count":4,"llama.embedding_length":512,"llama.feed_forward_length":1536,
"llama.vocab_size":4096,"tokenizer.ggml.model":"llama"}%s}`

// TestDiscoverOllama: a server that answers /api/show is Ollama; a
// llamacpp base then gets its runner's batching and lock lag, and its
// server's handlers, as many as the (loopback: this) machine's cores and
// a shorter prompt ready sooner, unless the base set the frontend. A
// model's num_thread below the cores is the threads the runner computes on.
func TestDiscoverOllama(t *testing.T) {
	for _, tc := range []struct {
		name       string
		conc, want int
		params     string
		threads    int
	}{
		{"default", 0, 0, "", 0},
		{"base sets the frontend", 3, 3, "", 0},
		{"num_thread 1", 0, 0, `,"parameters":"num_ctx 4096\nnum_thread 1"`, 1},
		{"num_thread of every core", 0, 0, `,"parameters":"num_thread 4096"`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/api/show" {
					http.NotFound(w, r)
					return
				}
				_, _ = fmt.Fprintf(w, showBody, tc.params)
			}))
			defer ts.Close()
			base := sim.DefaultConfig()
			base.Engine.Type = "llamacpp"
			base.Frontend.Concurrency = tc.conc
			got, notes := discover(context.Background(), Options{Base: base,
				Config: loadgen.Config{Endpoint: loadgen.Endpoint{URL: ts.URL + "/v1", Model: "tiny"}}})
			require.NotNil(t, got.Hardware.CustomModel, "%v", notes)
			assert.Equal(t, 4, got.Hardware.CustomModel.Layers)
			assert.Equal(t, sim.LlamaCppBatchPerSlot, got.Engine.LlamaCpp.Batch)
			assert.Equal(t, 1, got.Engine.LlamaCpp.ReuseLagSteps)
			want := tc.want
			if want == 0 { // the server is on loopback: this machine's cores
				require.NotNil(t, got.Hardware.CustomCPU)
				want = got.Hardware.CustomCPU.Cores
				assert.Equal(t, ollamaFrontendTokenMs, got.Frontend.PromptTokenMs)
				if want > 1 {
					assert.Equal(t, tc.threads, got.Hardware.CustomCPU.Threads, "%v", notes)
				}
			}
			assert.Equal(t, want, got.Frontend.Concurrency, "%v", notes)
		})
	}
}

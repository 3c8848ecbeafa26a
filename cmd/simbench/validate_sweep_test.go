package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/simbench/simbench/capacity"
	"github.com/simbench/simbench/loadgen/openaitest"
	"github.com/simbench/simbench/plots/figures"
	"github.com/simbench/simbench/validate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// slotsSim is the simulator of the 2-slot scripted server: two running
// requests at most, a 100 ms prefill of 50 tokens and a 10 ms decode step.
const slotsSim = `workers: 1
engine:
  type: vllm
  num_gpu_blocks: 4096
  max_num_seqs: 2
timing:
  model: linear
  linear:
    base_ms: 10
    prefill_token_ms: 1.8
    decode_seq_ms: 0
    context_token_ms: 0
`

// TestValidateLoadSweep: with a sweep section both arms are load sweeps
// (OUTPUT/real and OUTPUT/sim), compared by capacity, and the history
// records the capacity error.
func TestValidateLoadSweep(t *testing.T) {
	srv := &openaitest.Server{TTFT: 100 * time.Millisecond, ITL: 10 * time.Millisecond, Slots: 2}
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/models", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	mux.Handle("/", srv)
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sim.yaml"), []byte(slotsSim), 0o644))
	cfg := filepath.Join(dir, "pipeline.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf(`target: {url: %s, model: tiny, health_check: /v1/models, extra_inputs: {ignore_eos: true}}
workload: {request_count: 8, isl: 50, osl: 32, random_seed: 3}
goodput: "time_to_first_token:200"
sweep:
  concurrency: 1,2,4
sim: {config: sim.yaml}
compare:
  fail_above: [capacity=1000%%]
`, ts.URL)), 0o644))
	out := filepath.Join(t.TempDir(), "artifacts")
	code, stdout, stderr := validateCLI("--config", cfg, "-o", out, "--quiet")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "verdict: pass")
	for _, arm := range []string{"real", "sim"} {
		s, err := capacity.ReadSummary(filepath.Join(out, arm))
		require.NoError(t, err, arm)
		assert.Len(t, s.Points, 3, arm)
		require.NotNil(t, s.Capacity, arm)
	}
	var rep struct {
		Mode     string `json:"mode"`
		Capacity struct {
			Reference *capacity.Capacity `json:"reference"`
		} `json:"capacity"`
	}
	require.NoError(t, json.Unmarshal(runReadFile(t, filepath.Join(out, validate.CompareJSONName)), &rep))
	assert.Equal(t, "load-sweep", rep.Mode)
	require.NotNil(t, rep.Capacity.Reference)
	// A free slot's 100 ms TTFT is 100 ms inside the SLO, a queued one
	// (~510 ms) 310 ms outside: margins the race detector does not eat.
	assert.Equal(t, 2, rep.Capacity.Reference.Concurrency, "2 slots: concurrency 4 queues half the requests past 200 ms")
	assert.Equal(t, 4, rep.Capacity.Reference.FailingConcurrency)
	checkPNG(t, filepath.Join(out, validate.PlotsDirName, figures.SweepAttainmentName))
	hist := readHistoryT(t, filepath.Join(out, "history.jsonl"))
	require.Len(t, hist, 1)
	require.NotNil(t, hist[0].Capacity)
	assert.Equal(t, "concurrency", hist[0].Capacity.Load)
	require.NotNil(t, hist[0].Capacity.Real)
	require.NotNil(t, hist[0].Capacity.ErrorPct)
	assert.Equal(t, *hist[0].Capacity.ErrorPct, hist[0].Metrics["capacity"])
	assert.Equal(t, 1000.0, hist[0].Bounds["capacity"])
}

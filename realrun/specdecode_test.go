package realrun

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/loadgen/openaitest"
	"github.com/simbench/simbench/results"
)

// vllmSpecServer is a scripted OpenAI server whose /metrics is vLLM's
// exposition text: the fixture's snapshot 0 until the first request
// arrives, snapshot 1 after it, so the window's deltas are the fixture's
// (testdata/servermetrics/README.md).
func vllmSpecServer(t *testing.T) *httptest.Server {
	t.Helper()
	var pages [2][]byte
	for i := range pages {
		b, err := os.ReadFile(filepath.Join("..", "testdata", "servermetrics", "vllm_spec_metrics_"+string(rune('0'+i))+".txt"))
		require.NoError(t, err)
		pages[i] = b
	}
	var served atomic.Bool
	chat := &openaitest.Server{TTFT: 5 * time.Millisecond, ITL: time.Millisecond}
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		page := pages[0]
		if served.Load() {
			page = pages[1]
		}
		_, _ = w.Write(page)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		served.Store(true)
		chat.ServeHTTP(w, r)
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return ts
}

// TestRunSpecDecodeFromVLLM: a run scrapes vLLM's spec-decode counters
// (two engines, per position) and its aggregate's simbench section holds
// their deltas, the acceptance rate, the mean accepted length and each
// position's acceptance; the run summary prints them.
func TestRunSpecDecodeFromVLLM(t *testing.T) {
	ts := vllmSpecServer(t)
	dir := filepath.Join(t.TempDir(), "run")
	stdout, stderr := runWithMetrics(t, dir, testOptions(ts.URL, &syncBuffer{}))
	p, err := results.LoadProfileJSON(filepath.Join(dir, results.ProfileJSONName))
	require.NoError(t, err, stderr)
	s, ok := p.SpecDecode()
	require.True(t, ok, "spec-decode values in the aggregate")
	assert.Equal(t, 1200.0, s.Drafts)
	assert.Equal(t, 4800.0, s.DraftTokens)
	assert.Equal(t, 2592.0, s.AcceptedTokens)
	assert.InDeltaSlice(t, []float64{960, 720, 528, 384}, s.AcceptedPerPos, 1e-9)
	rate, _ := p.Value(results.TagSpecAcceptanceRate, "avg")
	assert.InDelta(t, 0.54, rate, 1e-12)
	length, _ := p.Value(results.TagSpecMeanAcceptedLength, "avg")
	assert.InDelta(t, 3.16, length, 1e-12)
	pos2, _ := p.Value(results.SpecPosTag(2), "avg")
	assert.InDelta(t, 0.44, pos2, 1e-12)
	assert.Contains(t, stdout, "Spec Decode Acceptance Rate (ratio)")
	assert.Contains(t, stdout, "Spec Decode Mean Accepted Length (tokens)")
	assert.Contains(t, stdout, "Tokens Per Chunk (tokens/chunk)")
	assert.Contains(t, stdout, "speculative decoding: 1200 drafts, acceptance by draft position 0.800 0.600 0.440 0.320")
}

package main

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/loadgen/openaitest"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/tokenizer/tokenizertest"
)

// TestRunTokenizer: `run --tokenizer DIR` sends prompts of exactly --isl
// Qwen3 tokens and says how tokens were counted; a bad path is a usage error.
func TestRunTokenizer(t *testing.T) {
	t.Parallel()
	dir := tokenizertest.Dir(t)
	tk := tokenizertest.Qwen3(t)
	srv := &openaitest.Server{Record: true}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	out := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := runCmdLine("run", "--url", ts.URL, "-m", "M", "--tokenizer", dir, "--concurrency", "2",
		"--request-count", "4", "--isl", "300", "--isl-stddev", "100", "--osl", "3", "-o", out, "--quiet")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "tokens:    tokenizer "+dir)
	f, err := os.Open(filepath.Join(out, "profile_export.jsonl"))
	require.NoError(t, err)
	defer f.Close()
	recs, err := results.ReadJSONL(f, "profile_export.jsonl")
	require.NoError(t, err)
	isl := map[string]float64{}
	for i := range recs {
		isl[recs[i].Meta.XRequestID], _ = recs[i].Get(results.TagISL)
	}
	got := srv.Requests()
	require.Len(t, got, 4)
	for _, r := range got {
		content := r.Body["messages"].([]any)[0].(map[string]any)["content"].(string)
		want, ok := isl[r.Header.Get("X-Request-ID")]
		require.True(t, ok)
		assert.Equal(t, int(want), tk.Count([]byte(content)), "the prompt is exactly its ISL")
	}

	code, _, stderr = runCmdLine("run", "--url", ts.URL, "-m", "M", "--tokenizer", filepath.Join(t.TempDir(), "none"),
		"--request-count", "1", "-o", filepath.Join(t.TempDir(), "bad"), "--quiet")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "--tokenizer")
}

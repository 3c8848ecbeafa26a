package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/loadgen/openaitest"
	"github.com/simbench/simbench/results"
)

const runTestKey = "sk-simbench-test-KEY-9f8e7d6c5b4a"

// The tests that run the CLI are not parallel: urfave/cli applies its
// global HelpFlag on every run, a data race between concurrent runs.

// writeRunTrace writes n requests every stepMs ms with hash_ids at 512.
func writeRunTrace(t *testing.T, n int, stepMs float64, isl, osl int) string {
	t.Helper()
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"timestamp": %g, "input_length": %d, "output_length": %d, "hash_ids": [%d]}`+"\n",
			float64(i)*stepMs, isl, osl, i%4)
	}
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	return path
}

func runCmdLine(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(append([]string{"simbench"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

// TestRunAcceptance is the "done when": a streaming server with TTFT
// 200 ms and 50 ms per token (five times the 40 ms and 10 ms, so
// the timing checks keep five times their margins and hold under the race
// detector on a busy machine), a 60-request fixed-schedule trace, the key from
// SIMBENCH_API_KEY and --extra-inputs ignore_eos:true.
func TestRunAcceptance(t *testing.T) {
	srv := &openaitest.Server{TTFT: 200 * time.Millisecond, ITL: 50 * time.Millisecond, Record: true, CutAfter: 3,
		FaultFor: func(n int) openaitest.Fault {
			switch n {
			case 7, 31:
				return openaitest.HTTP500
			case 19:
				return openaitest.CutStream
			}
			return openaitest.None
		}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	trace := writeRunTrace(t, 60, 20, 64, 10)
	dir := filepath.Join(t.TempDir(), "run")
	t.Setenv(apiKeyEnv, runTestKey)

	code, stdout, stderr := runCmdLine("run", "--url", strings.TrimPrefix(ts.URL, "http://"), "--model", "M", "--trace", trace,
		"--extra-inputs", "ignore_eos:true", "-o", dir, "--progress-interval", "200ms")
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)

	run, err := results.LoadRun(dir)
	require.NoError(t, err)
	p := run.Profile
	stat := func(tag, s string) float64 {
		v, ok := p.Value(tag, s)
		require.True(t, ok, "%s %s", tag, s)
		return v
	}
	t.Logf("send lag p50 %.3f p99 %.3f max %.3f ms", stat(results.TagSendLag, "p50"), stat(results.TagSendLag, "p99"), stat(results.TagSendLag, "max"))
	// The server's times and the margins are five times the 40 ms
	// and 10 ms within 5 ms and 2 ms: what the race detector on a loaded
	// 2-core machine adds stays well inside them.
	assert.InDelta(t, 200, stat(results.TagTTFT, "p50"), 25, "TTFT within a few ms of the truth")
	assert.InDelta(t, 50, stat(results.TagITL, "avg"), 10, "ITL")
	assert.InDelta(t, 50, stat(results.TagICL, "p50"), 10, "chunk gaps")
	// Schedule kept: the median send is within 5 ms of its timestamp (the
	// tail depends on how loaded the machine is: logged only).
	assert.Less(t, stat(results.TagSendLag, "p50"), 5.0, "schedule kept")
	assert.Equal(t, 57.0, stat(results.TagRequestCount, "avg"))
	assert.Equal(t, 3.0, stat(results.TagErrorRequestCount, "avg"))
	types := map[string]int{}
	for _, e := range p.ErrorSummary {
		types[e.Details.Type] += e.Count
	}
	assert.Equal(t, map[string]int{"Internal Server Error": 2, "ClientPayloadError": 1}, types)

	// The aggregates are those of the run's own JSONL.
	fromJSONL, err := results.SummarizeJSONL(filepath.Join(dir, results.RecordsName), nil)
	require.NoError(t, err)
	require.Equal(t, len(fromJSONL.Metrics), len(p.Metrics))
	for _, m := range fromJSONL.Metrics {
		got, _ := p.Metric(m.Tag)
		assert.Equal(t, m.Stats, got.Stats, m.Tag)
	}

	// What the server saw.
	reqs := srv.Requests()
	require.Len(t, reqs, 60)
	for _, r := range reqs {
		assert.Equal(t, "Bearer "+runTestKey, r.Header.Get("Authorization"))
		assert.Equal(t, true, r.Body["ignore_eos"])
		assert.EqualValues(t, 10, r.Body["max_completion_tokens"])
		assert.NotEmpty(t, r.Header.Get("X-Request-ID"))
	}

	// The summary, and the key nowhere.
	assert.Contains(t, stdout, "requested 50.00 req/s")
	assert.Contains(t, stdout, "Time to First Token (ms)")
	assert.Contains(t, stdout, "the server reported no usage")
	assert.Contains(t, stderr, "progress:")
	assertNoRunKey(t, dir, stdout, stderr)
	var cfg map[string]any
	require.NoError(t, json.Unmarshal(runReadFile(t, filepath.Join(dir, results.ProfileJSONName)), &cfg))
	ic := cfg["input_config"].(map[string]any)
	assert.Equal(t, []any{"M"}, ic["endpoint"].(map[string]any)["model_names"])
	assert.Equal(t, []any{[]any{"ignore_eos", true}}, ic["input"].(map[string]any)["extra"])
	assert.Equal(t, true, ic["input"].(map[string]any)["fixed_schedule"])
	assert.NotEmpty(t, ic["workload"].(map[string]any)["digest"], "the workload digest under workload")
	assert.NotContains(t, ic["simbench"], "workload_digest")
}

func runReadFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

// assertNoKey greps every file of dir and the command's output for the key.
func assertNoRunKey(t *testing.T, dir string, outputs ...string) {
	t.Helper()
	files := 0
	require.NoError(t, filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		files++
		assert.NotContains(t, string(runReadFile(t, path)), runTestKey, path)
		return nil
	}))
	assert.GreaterOrEqual(t, files, 3)
	for _, o := range outputs {
		assert.NotContains(t, o, runTestKey)
	}
}

func TestRunKeyFlagNeverWrittenEvenWhenEchoed(t *testing.T) {
	// The server rejects every request and echoes the Authorization header.
	ts := httptest.NewServer(&echoAuthServer{})
	defer ts.Close()
	dir := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := runCmdLine("run", "--url", ts.URL, "-m", "M", "--concurrency", "2", "--request-count", "4",
		"--isl", "8", "--osl", "2", "--api-key", runTestKey, "-o", dir, "--max-error-rate", "50%", "--quiet")
	assert.Equal(t, exitFailure, code, "all requests failed: above --max-error-rate")
	assert.Contains(t, stderr, "above --max-error-rate")
	assert.Contains(t, stdout, "Unauthorized")
	assertNoRunKey(t, dir, stdout, stderr)
	assert.NotContains(t, stderr, "progress:", "--quiet")
}

type echoAuthServer struct{}

func (echoAuthServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	http.Error(w, "invalid key "+r.Header.Get("Authorization"), http.StatusUnauthorized)
}

func TestRunSyntheticClosedLoop(t *testing.T) {
	srv := &openaitest.Server{Record: true, Ollama: true}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	dir := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := runCmdLine("run", "--url", ts.URL, "-m", "tiny", "--concurrency", "2", "--request-count", "6",
		"--warmup-request-count", "1", "--isl", "30", "--osl", "4", "--use-legacy-max-tokens", "--use-server-token-count",
		"--endpoint-type", "completions", "--seed", "5", "-o", dir, "--quiet")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "closed loop")
	assert.Contains(t, stdout, "ISL:")
	lines := strings.Split(strings.TrimSpace(string(runReadFile(t, filepath.Join(dir, results.RecordsName)))), "\n")
	assert.Len(t, lines, 6, "the warmup request is not written")
	require.Len(t, srv.Requests(), 7)
	for _, r := range srv.Requests() {
		assert.EqualValues(t, 4, r.Body["max_tokens"])
		assert.Equal(t, "/v1/completions", r.Path)
		assert.Len(t, strings.Fields(r.Body["prompt"].(string)), 30)
	}
	p, err := results.LoadProfileJSON(filepath.Join(dir, results.ProfileJSONName))
	require.NoError(t, err)
	isl, _ := p.Value(results.TagISL, "avg")
	assert.Equal(t, 30.0, isl, "server usage.prompt_tokens")
	var cfg struct {
		InputConfig struct {
			Loadgen map[string]any `json:"loadgen"`
		} `json:"input_config"`
	}
	require.NoError(t, json.Unmarshal(runReadFile(t, filepath.Join(dir, results.ProfileJSONName)), &cfg))
	assert.Equal(t, map[string]any{"concurrency": 2.0, "request_count": 6.0, "warmup_request_count": 1.0,
		"arrival_pattern": "concurrency_burst"}, cfg.InputConfig.Loadgen)
}

func TestRunDurationRepeatsClosedLoop(t *testing.T) {
	ts := httptest.NewServer(&openaitest.Server{TTFT: 5 * time.Millisecond, ITL: time.Millisecond})
	defer ts.Close()
	dir := filepath.Join(t.TempDir(), "run")
	code, _, stderr := runCmdLine("run", "--url", ts.URL, "-m", "M", "--concurrency", "2", "--isl", "8", "--osl", "3",
		"--benchmark-duration", "0.3", "-o", dir, "--quiet")
	require.Equal(t, 0, code, stderr)
	lines := strings.Split(strings.TrimSpace(string(runReadFile(t, filepath.Join(dir, results.RecordsName)))), "\n")
	assert.Greater(t, len(lines), 10, "the 10 default requests repeat until the duration")
}

func TestRunUsageErrors(t *testing.T) {
	trace := writeRunTrace(t, 3, 10, 8, 2)
	base := []string{"run", "--url", "127.0.0.1:1", "-m", "M", "-o", t.TempDir()}
	for name, extra := range map[string][]string{
		"no workload":         {},
		"rate with trace":     {"--trace", trace, "--request-rate", "5"},
		"filter without":      {"--speedup", "2", "--concurrency", "1"},
		"token ids with chat": {"--trace", trace, "--prompt-token-ids"},
		"bad extra":           {"--trace", trace, "--extra-inputs", "nocolon"},
		"bad error rate":      {"--trace", trace, "--max-error-rate", "150%"},
		"bad endpoint type":   {"--trace", trace, "--endpoint-type", "embeddings"},
		"positional":          {"--trace", trace, "extra-arg"},
	} {
		code, _, stderr := runCmdLine(append(append([]string{}, base...), extra...)...)
		assert.Equal(t, exitUsage, code, "%s: %s", name, stderr)
	}
	code, _, _ := runCmdLine("run", "-m", "M", "-o", t.TempDir(), "--trace", trace)
	assert.Equal(t, exitUsage, code, "--url is required")
}

func TestRunHelp(t *testing.T) {
	code, stdout, _ := runCmdLine("run", "--help")
	require.Equal(t, 0, code)
	for _, want := range []string{"--trace", "--concurrency", "--extra-inputs", "SIMBENCH_API_KEY", "simbench run --url", "--speedup", "--isl"} {
		assert.Contains(t, stdout, want)
	}
	assert.NotContains(t, stdout, "--spin")
}

func TestRunStreamingFalse(t *testing.T) {
	srv := &openaitest.Server{Record: true}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	dir := filepath.Join(t.TempDir(), "run")
	code, _, stderr := runCmdLine("run", "--url", ts.URL, "-m", "M", "--concurrency", "1", "--request-count", "2",
		"--isl", "8", "--osl", "3", "--streaming=false", "-o", dir, "--quiet")
	require.Equal(t, 0, code, stderr)
	for _, r := range srv.Requests() {
		assert.Equal(t, false, r.Body["stream"])
	}
	p, err := results.LoadProfileJSON(filepath.Join(dir, results.ProfileJSONName))
	require.NoError(t, err)
	_, hasTTFT := p.Metric(results.TagTTFT)
	assert.False(t, hasTTFT, "no TTFT without streaming")
	n, _ := p.Value(results.TagRequestCount, "avg")
	assert.Equal(t, 2.0, n)
}

func TestRunTokenIDPromptsHaveExactLength(t *testing.T) {
	srv := &openaitest.Server{Record: true}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	dir := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := runCmdLine("run", "--url", ts.URL, "-m", "M", "--endpoint-type", "completions", "--prompt-token-ids",
		"--vocab-size", "1000", "--use-server-token-count", "--request-rate", "200", "--arrival-pattern", "constant",
		"--request-count", "5", "--isl", "700", "--osl", "2", "-o", dir, "--quiet")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "intended 700.0 tokens avg (exact), server usage.prompt_tokens 700.0 avg: +0.0 tokens per request")
	var first []any
	for i, r := range srv.Requests() {
		ids := r.Body["prompt"].([]any)
		require.Len(t, ids, 700)
		for _, id := range ids {
			assert.True(t, id.(float64) >= 100 && id.(float64) < 1000)
		}
		if i == 0 {
			first = ids
		} else {
			assert.NotEqual(t, first[:512], ids[:512], "distinct hash ids, distinct blocks")
		}
	}
}

// The run command's description (help/run.txt) names the environment
// variables the code reads.
func TestRunHelpNamesTheEnvironment(t *testing.T) {
	for _, env := range []string{apiKeyEnv, jobIndexEnv} {
		assert.Contains(t, runCommand().Description, "$"+env)
	}
}

package serve

import (
	"context"
	"flag"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/sim"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// linearCfg is one vLLM worker whose every step takes stepMs, no frontend
// overhead and no chat template: token k of a lone request is at
// (k+1)·stepMs.
func linearCfg(stepMs float64) sim.Config {
	cfg := sim.DefaultConfig()
	cfg.Workers = 1
	cfg.Frontend.RequestOverheadMs = 0
	cfg.Frontend.ResponseOverheadMs = 0
	cfg.Frontend.TemplateTokens = 0
	cfg.Engine.AsyncScheduling = new(bool)
	cfg.Timing.Model = "linear"
	cfg.Timing.Linear = sim.LinearConfig{BaseMs: stepMs}
	return cfg
}

// start runs a server on an httptest listener until the test ends.
func start(t *testing.T, cfg sim.Config, opts Options) *httptest.Server {
	t.Helper()
	s, err := New(cfg, opts)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		ts.Close()
		cancel()
		require.NoError(t, <-done)
	})
	return ts
}

func post(t *testing.T, url, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

var created = regexp.MustCompile(`"created":\d+`)

// TestGoldenFraming: the bytes of each kind of answer, as AIPerf and vLLM
// clients read them (created normalised).
func TestGoldenFraming(t *testing.T) {
	t.Parallel()
	ts := start(t, linearCfg(5), Options{Model: "m", Speedup: 100})
	tests := []struct{ name, path, body string }{
		{"chat_stream_usage", "/v1/chat/completions",
			`{"model":"m","messages":[{"role":"user","content":"the cat sat"}],"max_completion_tokens":3,"stream":true,"stream_options":{"include_usage":true}}`},
		{"chat_stream_per_chunk_usage", "/v1/chat/completions",
			`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"a b"}]}],"max_tokens":2,"stream":true,"stream_options":{"include_usage":true,"continuous_usage_stats":true}}`},
		{"completions_stream", "/v1/completions",
			`{"model":"m","prompt":[1,2,3,4],"max_tokens":3,"stream":true,"ignore_eos":true}`},
		{"chat_whole", "/v1/chat/completions",
			`{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":4}`},
		{"completions_whole", "/v1/completions", `{"prompt":"Hello, world!","max_tokens":2}`},
		{"rejected", "/v1/completions", `{"prompt":"x","max_tokens":100000000,"stream":true}`},
	}
	for _, tt := range tests { // in turn: the response ids count up
		t.Run(tt.name, func(t *testing.T) {
			code, body := post(t, ts.URL+tt.path, tt.body)
			got := created.ReplaceAllString("HTTP "+http.StatusText(code)+"\n"+body, `"created":0`)
			path := filepath.Join("testdata", tt.name+".txt")
			if *update {
				require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, string(want), got)
		})
	}
}

func TestBadRequests(t *testing.T) {
	t.Parallel()
	ts := start(t, linearCfg(5), Options{Model: "m", Speedup: 100})
	tests := []struct {
		name, path, body string
		code             int
		msg              string
	}{
		{"not json", "/v1/completions", `{`, 400, "request body: unexpected end of JSON input"},
		{"no max_tokens", "/v1/completions", `{"prompt":"a"}`, 400, "max_tokens: required"},
		{"max_tokens 0", "/v1/chat/completions", `{"messages":[{"role":"user","content":"a"}],"max_completion_tokens":0}`, 400,
			"max_completion_tokens: 0, want > 0"},
		{"no prompt", "/v1/completions", `{"max_tokens":1}`, 400, "prompt: required"},
		{"batch", "/v1/completions", `{"prompt":["a","b"],"max_tokens":1}`, 400, "prompt: want a string or a list of token ids"},
		{"image", "/v1/chat/completions", `{"messages":[{"role":"user","content":[{"type":"image_url"}]}],"max_tokens":1}`, 400,
			`messages[0].content: part 0: type "image_url", only text is simulated`},
		{"no messages", "/v1/chat/completions", `{"max_tokens":1}`, 400, "messages: required"},
		{"stream_options without stream", "/v1/completions", `{"prompt":"a","max_tokens":1,"stream_options":{"include_usage":true}}`, 400,
			"stream_options: only with stream true"},
		{"other model", "/v1/completions", `{"model":"x","prompt":"a","max_tokens":1}`, 404, `model: "x" is not served here ("m" is)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, body := post(t, ts.URL+tt.path, tt.body)
			assert.Equal(t, tt.code, code)
			assert.Contains(t, body, `"message":`)
			assert.Contains(t, body, jsonQuote(tt.msg))
		})
	}
}

// jsonQuote is s as encoding/json writes it inside a string, without the
// quotes.
func jsonQuote(s string) string {
	r := strings.NewReplacer(`"`, `\"`)
	return r.Replace(s)
}

func TestModelsAndHealth(t *testing.T) {
	t.Parallel()
	ts := start(t, linearCfg(5), Options{Speedup: 100})
	resp, err := http.Get(ts.URL + "/v1/models")
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, string(b), `"id":"`+DefaultModel+`"`)
	resp, err = http.Get(ts.URL + "/health")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

// TestShutdownCompletesStreams: a stream in flight when the server is told
// to stop runs to its [DONE], and Serve returns after it.
func TestShutdownCompletesStreams(t *testing.T) {
	t.Parallel()
	s, err := New(linearCfg(20), Options{Speedup: 1})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()

	resp, err := http.Post("http://"+ln.Addr().String()+"/v1/completions", "application/json",
		strings.NewReader(`{"prompt":"a b c","max_tokens":10,"stream":true}`))
	require.NoError(t, err)
	defer resp.Body.Close()
	first := make([]byte, 1)
	_, err = io.ReadFull(resp.Body, first) // the first token is out: 9 more to come, 180 ms
	require.NoError(t, err)
	cancel()
	rest, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	body := string(first) + string(rest)
	assert.Equal(t, 10, strings.Count(body, `"text":`))
	assert.True(t, strings.HasSuffix(body, "data: [DONE]\n\n"), body)
	select {
	case err := <-served:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after the stream ended")
	}
}

// TestTruthOfALeftRequest: a request whose client leaves mid-stream is
// still recorded, once the simulator has finished it, with the client's
// ids and every token.
func TestTruthOfALeftRequest(t *testing.T) {
	t.Parallel()
	got := make(chan *results.Record, 1)
	ts := start(t, linearCfg(10), Options{Speedup: 1, Truth: func(r *results.Record) error { got <- r; return nil }})
	req, err := http.NewRequest(http.MethodPost, ts.URL+"/v1/completions",
		strings.NewReader(`{"prompt":"a b","max_tokens":5,"stream":true}`))
	require.NoError(t, err)
	req.Header.Set("X-Request-ID", "r1")
	req.Header.Set("X-Correlation-ID", "c1")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_, err = io.ReadFull(resp.Body, make([]byte, 1))
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close()) // gone after the first token
	select {
	case r := <-got:
		assert.Equal(t, "r1", r.ID)
		assert.Equal(t, "c1", r.CorrelationID)
		assert.Len(t, r.Chunks, 5)
		assert.Nil(t, r.Error)
		assert.Greater(t, r.Chunks[0].AtNs, r.StartNs)
		assert.Equal(t, r.Chunks[4].AtNs, r.EndNs)
	case <-time.After(5 * time.Second):
		t.Fatal("no record of the request")
	}
}

// TestHugeMaxTokensCostsNothing: a request the simulator rejects for its
// max_tokens gets its 400 without the server reserving room for its tokens.
func TestHugeMaxTokensCostsNothing(t *testing.T) {
	ts := start(t, linearCfg(5), Options{Speedup: 100})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	code, body := post(t, ts.URL+"/v1/completions", `{"prompt":"x","max_tokens":100000000,"stream":true}`)
	runtime.ReadMemStats(&after)
	assert.Equal(t, http.StatusBadRequest, code, body)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64<<20), "bytes allocated")
}

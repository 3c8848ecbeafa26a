package loadgen

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/simbench/simbench/loadgen/openaitest"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/traces"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const testKey = "sk-test-SECRET-0123456789"

func chatEndpoint(url string) Endpoint {
	return Endpoint{URL: url, Type: EndpointChat, Model: "m", Streaming: true, APIKey: testKey,
		Timeout: 5 * time.Second, Prompts: Prompts{BlockSize: 512, Seed: 1}}
}

// doOne sends one request for r through a fresh client.
func doOne(t *testing.T, ep Endpoint, r *traces.Request) *results.Record {
	t.Helper()
	start := time.Now()
	c, err := newClient(&ep, 4, func() int64 { return start.UnixNano() + int64(time.Since(start)) })
	require.NoError(t, err)
	defer c.close()
	rec := &results.Record{ID: "req-1", CorrelationID: "corr-1", InputTokens: ep.Prompts.Tokens(r)}
	st := newStream()
	c.do(context.Background(), st, rec, newBody(&ep).build(r))
	c.finish(st, rec)
	return rec
}

func ms64(ns int64) float64 { return float64(ns) / 1e6 }

func TestClientStreamsAndTimesChunks(t *testing.T) {
	t.Parallel()
	srv := &openaitest.Server{TTFT: 30 * time.Millisecond, ITL: 5 * time.Millisecond, Record: true}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	rec := doOne(t, chatEndpoint(ts.URL), &traces.Request{InputLength: 20, OutputLength: 10, HashIDs: []int64{3}})
	require.Nil(t, rec.Error)
	require.Len(t, rec.Chunks, 10)
	// Lower bounds are exact (the server cannot send earlier); the upper
	// ones only catch gross errors on a loaded machine.
	ttft, last := ms64(rec.Chunks[0].AtNs-rec.StartNs), ms64(rec.Chunks[9].AtNs-rec.StartNs)
	assert.GreaterOrEqual(t, ttft, 30.0, "TTFT")
	assert.Less(t, ttft, 500.0, "TTFT")
	assert.GreaterOrEqual(t, last, 75.0, "30 ms + 9 gaps of 5 ms")
	assert.Less(t, last, 600.0)
	assert.Equal(t, 10, rec.OutputTokens)
	assert.Equal(t, 20, rec.InputTokens)
	assert.True(t, rec.AckNs >= rec.StartNs && rec.EndNs >= rec.Chunks[9].AtNs)

	got := srv.Requests()
	require.Len(t, got, 1)
	h := got[0].Header
	assert.Equal(t, "Bearer "+testKey, h.Get("Authorization"))
	assert.Equal(t, "req-1", h.Get("X-Request-ID"))
	assert.Equal(t, "corr-1", h.Get("X-Correlation-ID"))
	b := got[0].Body
	assert.Equal(t, "m", b["model"])
	assert.Equal(t, true, b["stream"])
	assert.EqualValues(t, 10, b["max_completion_tokens"])
	msg := b["messages"].([]any)[0].(map[string]any)
	assert.Equal(t, "user", msg["role"])
	assert.Equal(t, "text", msg["name"])
	assert.Len(t, strings.Fields(msg["content"].(string)), 20)
}

func TestClientFaultsBecomeRecords(t *testing.T) {
	t.Parallel()
	tests := []struct {
		fault   openaitest.Fault
		code    int
		typ     string
		msg     string
		chunks  int
		invalid bool // no error, but no content either
	}{
		{fault: openaitest.HTTP500, code: 500, typ: "Internal Server Error", msg: "scripted failure"},
		{fault: openaitest.HTTP429, code: 429, typ: "Too Many Requests", msg: "slow down"},
		{fault: openaitest.CutStream, typ: "ClientPayloadError", msg: "after 3 content chunks", chunks: 3},
		{fault: openaitest.SSEError, code: 502, typ: "SSEResponseError", msg: "scripted SSE error", chunks: 3},
		{fault: openaitest.JSONError, code: 502, typ: "SSEResponseError", msg: "scripted JSON error", chunks: 3},
		{fault: openaitest.MalformedJSON, typ: "JSONDecodeError", msg: "invalid JSON", chunks: 3},
		{fault: openaitest.NoContent, invalid: true},
	}
	for _, tc := range tests {
		t.Run(tc.typ, func(t *testing.T) {
			t.Parallel()
			srv := &openaitest.Server{CutAfter: 3, FaultFor: func(int) openaitest.Fault { return tc.fault }}
			ts := httptest.NewServer(srv)
			defer ts.Close()
			rec := doOne(t, chatEndpoint(ts.URL), &traces.Request{InputLength: 5, OutputLength: 8})
			assert.Len(t, rec.Chunks, tc.chunks)
			assert.NotZero(t, rec.EndNs)
			m := results.ComputeMetrics(rec)
			require.NotNil(t, m.Error)
			if tc.invalid {
				assert.Nil(t, rec.Error)
				assert.Equal(t, "InvalidInferenceResultError", m.Error.Type)
				return
			}
			assert.Equal(t, tc.code, rec.Error.Code)
			assert.Equal(t, tc.typ, rec.Error.Type)
			assert.Contains(t, rec.Error.Message, tc.msg)
			assert.Equal(t, 5, m.ErrorISL)
		})
	}
}

func TestClientConnectionRefused(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	l.Close()
	rec := doOne(t, chatEndpoint(addr), &traces.Request{InputLength: 5, OutputLength: 8})
	require.NotNil(t, rec.Error)
	assert.Equal(t, "ClientConnectorError", rec.Error.Type)
	assert.Contains(t, rec.Error.Message, "refused")
	assert.NotContains(t, rec.Error.Message, "Post \"", "the URL prefix is dropped")
}

func TestClientTimeout(t *testing.T) {
	t.Parallel()
	srv := &openaitest.Server{StallFor: 2 * time.Second, FaultFor: func(int) openaitest.Fault { return openaitest.Stall }}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	ep := chatEndpoint(ts.URL)
	ep.Timeout = 100 * time.Millisecond
	rec := doOne(t, ep, &traces.Request{InputLength: 5, OutputLength: 8})
	require.NotNil(t, rec.Error)
	assert.Equal(t, "TimeoutError", rec.Error.Type)
	assert.False(t, rec.Cancelled)
}

func TestClientServerTokenCount(t *testing.T) {
	t.Parallel()
	srv := &openaitest.Server{Record: true}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	ep := chatEndpoint(ts.URL)
	ep.ServerTokenCount = true
	rec := doOne(t, ep, &traces.Request{InputLength: 30, OutputLength: 6})
	require.Nil(t, rec.Error)
	require.NotNil(t, rec.Usage)
	assert.Equal(t, results.Usage{PromptTokens: 30, CompletionTokens: 6, TotalTokens: 36}, *rec.Usage)
	assert.Equal(t, 30, rec.InputTokens)
	assert.Equal(t, 6, rec.OutputTokens)
	opts := srv.Requests()[0].Body["stream_options"].(map[string]any)
	assert.Equal(t, true, opts["include_usage"])
}

func TestClientOllamaQuirks(t *testing.T) {
	t.Parallel()
	srv := &openaitest.Server{Ollama: true, Token: " x"}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	ep := chatEndpoint(ts.URL)
	ep.Type, ep.ServerTokenCount, ep.LegacyMaxTokens = EndpointCompletions, true, true
	rec := doOne(t, ep, &traces.Request{InputLength: 12, OutputLength: 5})
	require.Nil(t, rec.Error)
	assert.Len(t, rec.Chunks, 5)
	require.NotNil(t, rec.Usage, "the real usage after the zero ones")
	assert.Equal(t, 5, rec.Usage.CompletionTokens)

	ep.Type = EndpointChat
	rec = doOne(t, ep, &traces.Request{InputLength: 12, OutputLength: 4})
	require.Nil(t, rec.Error)
	assert.Len(t, rec.Chunks, 4, "the role repeated in each delta does not add chunks")
}

func TestClientNonStreaming(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(&openaitest.Server{TTFT: 10 * time.Millisecond, ITL: time.Millisecond})
	defer ts.Close()
	ep := chatEndpoint(ts.URL)
	ep.Streaming = false
	rec := doOne(t, ep, &traces.Request{InputLength: 5, OutputLength: 4})
	require.Nil(t, rec.Error)
	assert.True(t, rec.NonStreaming)
	require.Len(t, rec.Chunks, 1)
	assert.Equal(t, 4, rec.OutputTokens)
	m := results.ComputeMetrics(rec)
	_, hasTTFT := m.Get(results.TagTTFT)
	assert.False(t, hasTTFT, "no TTFT without streaming (AIPerf)")
	lat, _ := m.Get(results.TagRequestLatency)
	assert.GreaterOrEqual(t, lat, 12.0)
}

func TestClientRedactsKeyFromErrors(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "bad key: "+r.Header.Get("Authorization"), http.StatusUnauthorized)
	}))
	defer ts.Close()
	rec := doOne(t, chatEndpoint(ts.URL), &traces.Request{InputLength: 5, OutputLength: 8})
	require.NotNil(t, rec.Error)
	assert.Equal(t, 401, rec.Error.Code)
	assert.Equal(t, "Unauthorized", rec.Error.Type)
	assert.NotContains(t, rec.Error.Message, testKey)
	assert.Contains(t, rec.Error.Message, "[redacted]")
}

// TestClientStampsEventsWithTheirRead scripts the reads: two events in one
// write share its time; an event split over two writes gets the second's.
func TestClientStampsEventsWithTheirRead(t *testing.T) {
	t.Parallel()
	const gap = 40 * time.Millisecond
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		f := w.(http.Flusher)
		write := func(s string) { _, _ = w.Write([]byte(s)); f.Flush() }
		write(": keep-alive\n\n" + `data: {"choices":[{"delta":{"content":"a"}}]}` + "\n\n" + `data: {"choices":[{"delta":{"content":"b"}}]}` + "\n\n")
		time.Sleep(gap)
		write(`data: {"choices":[{"delta":{"con`)
		time.Sleep(gap)
		write(`tent":"c"}}]}` + "\n\n" + `data: {"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":3,"total_tokens":4}}` + "\n\ndata: [DONE]\n\n")
	}))
	defer ts.Close()
	rec := doOne(t, chatEndpoint(ts.URL), &traces.Request{InputLength: 1, OutputLength: 3})
	require.Nil(t, rec.Error)
	require.Len(t, rec.Chunks, 3)
	assert.Equal(t, rec.Chunks[0].AtNs, rec.Chunks[1].AtNs, "one read, one time")
	assert.GreaterOrEqual(t, ms64(rec.Chunks[2].AtNs-rec.Chunks[1].AtNs), gap.Seconds()*1e3,
		"the split event is stamped by the read that completed it")
	assert.Equal(t, rec.Chunks[2].AtNs, rec.EndNs, "usage and [DONE] came in the same read")
	assert.NotNil(t, rec.Usage)
}

func TestClientReadsFastServer(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	go (&openaitest.FastServer{TTFT: 2 * time.Millisecond, ITL: time.Millisecond, Tokens: 5}).Serve(l) //nolint:errcheck
	ep := chatEndpoint(l.Addr().String())
	for range 2 { // the second request reuses the connection
		rec := doOne(t, ep, &traces.Request{InputLength: 5, OutputLength: 5})
		require.Nil(t, rec.Error)
		assert.Len(t, rec.Chunks, 5)
	}
}

// TestClientDoesNotFollowRedirects: a redirect, to another port of the
// same host or to another host, is an error record naming the Location
// (without its credentials); the target never sees the request or the key.
func TestClientDoesNotFollowRedirects(t *testing.T) {
	t.Parallel()
	target := &openaitest.Server{Record: true}
	ts := httptest.NewServer(target)
	defer ts.Close()
	for _, code := range []int{http.StatusTemporaryRedirect, http.StatusMovedPermanently, http.StatusFound} {
		loc := strings.Replace(ts.URL, "http://", "http://u:pw-in-location@", 1) + "/v1/chat/completions"
		redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, loc, code)
		}))
		rec := doOne(t, chatEndpoint(redirect.URL), &traces.Request{InputLength: 5, OutputLength: 3})
		redirect.Close()
		require.NotNil(t, rec.Error, "status %d", code)
		assert.Equal(t, code, rec.Error.Code)
		assert.Contains(t, rec.Error.Message, "redirect to "+strings.Replace(loc, "u:pw-in-location@", "redacted@", 1)+" not followed")
		assert.NotContains(t, rec.Error.Message, "pw-in-location")
		assert.Empty(t, rec.Chunks)
	}
	assert.Empty(t, target.Requests(), "the redirect's target got no request (and no API key)")
}

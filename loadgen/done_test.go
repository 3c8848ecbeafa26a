package loadgen

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/simbench/simbench/internal/warning"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/traces"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const contentEvent = `data: {"choices":[{"index":0,"delta":{"content":" tok"}}]}` + "\n\n"

// cutServer streams 3 of the 20 tokens asked for and ends the body cleanly
// without data: [DONE], as a server that goes away mid-answer does:
//   - "close": HTTP/1.1 with Connection: close and no length, the body
//     ended by closing the connection;
//   - "chunked": a chunked body whose terminating chunk arrives;
//   - "finish": chunked, the last chunk with finish_reason "length";
//   - "done": the whole answer, for contrast.
func cutServer(t *testing.T, mode string) *httptest.Server {
	ts := httptest.NewServer(cutHandler(t, func() string { return mode }))
	t.Cleanup(ts.Close)
	return ts
}

// cutHandler answers each request in the mode next returns.
func cutHandler(t *testing.T, next func() string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		mode := next()
		if mode == "close" {
			conn, rw, err := http.NewResponseController(w).Hijack()
			if err != nil {
				t.Error(err)
				return
			}
			defer conn.Close()
			fmt.Fprint(rw, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n")
			fmt.Fprint(rw, strings.Repeat(contentEvent, 3))
			_ = rw.Flush()
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, strings.Repeat(contentEvent, 3))
		switch mode {
		case "finish":
			fmt.Fprint(w, `data: {"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}`+"\n\n")
		case "done":
			fmt.Fprint(w, `data: {"choices":[{"index":0,"delta":{},"finish_reason":null}]}`+"\n\ndata: [DONE]\n\n")
		}
	}
}

func TestStreamWithoutDoneIsAnError(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"close", "chunked"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			ts := cutServer(t, mode)
			rec := doOne(t, chatEndpoint(ts.URL), &traces.Request{InputLength: 8, OutputLength: 20})
			require.NotNil(t, rec.Error, "3 of 20 tokens and no [DONE] is not a success")
			assert.Equal(t, results.ErrorDetails{Type: "ServerDisconnectedError",
				Message: "stream ended before [DONE] after 3 content chunks"}, *rec.Error)
			assert.Len(t, rec.Chunks, 3, "the chunks that came are kept")
		})
	}
}

func TestStreamWithFinishReasonButNoDoneSucceeds(t *testing.T) {
	t.Parallel()
	ts := cutServer(t, "finish")
	ep := chatEndpoint(ts.URL)
	start := time.Now()
	c, err := newClient(&ep, 1, func() int64 { return start.UnixNano() + int64(time.Since(start)) })
	require.NoError(t, err)
	defer c.close()
	for _, mode := range []string{"finish", "done"} {
		c.url = cutServer(t, mode).URL + "/v1/chat/completions"
		rec := &results.Record{ID: "r"}
		st := newStream()
		noDone := c.do(context.Background(), st, rec, newBody(&ep).build(&traces.Request{InputLength: 8, OutputLength: 20}))
		c.finish(st, rec)
		require.Nil(t, rec.Error, mode)
		assert.Equal(t, 3, rec.OutputTokens, mode)
		assert.Equal(t, mode == "finish", noDone, mode)
	}
}

// TestRunCountsStreamsCutBeforeDone: in a run, cut streams are error
// records in error_summary; finished ones without [DONE] are successes and
// one warning.
func TestRunCountsStreamsCutBeforeDone(t *testing.T) {
	t.Parallel()
	modes := []string{"chunked", "finish", "done", "close"}
	var n atomic.Int64
	front := httptest.NewServer(cutHandler(t, func() string { return modes[(n.Add(1)-1)%int64(len(modes))] }))
	defer front.Close()
	wl := everyMs(8, 5, 20)
	wl.Concurrency = 1 // in order: request n gets modes[n%4]
	for i := range wl.Requests {
		wl.Requests[i].HasTimestamp = false
	}
	agg := results.NewAggregator(nil)
	var mu sync.Mutex // a sink is called from several workers at once
	rep, err := Run(context.Background(), wl, Config{Endpoint: chatEndpoint(front.URL)}, func(r *results.Record) (results.RecordMetrics, error) {
		m := results.ComputeMetrics(r)
		mu.Lock()
		agg.Add(&m)
		mu.Unlock()
		return m, nil
	})
	require.NoError(t, err)
	assert.Equal(t, 4, rep.Errors, "chunked and close cuts, twice each")
	assert.Equal(t, 2, rep.NoDone)
	assert.Equal(t, []results.ErrorCount{{Details: results.ErrorDetails{Type: "ServerDisconnectedError",
		Message: "stream ended before [DONE] after 3 content chunks"}, Count: 4}}, agg.Profile().ErrorSummary)
	var warned []string
	for _, w := range warning.Messages(rep.Warnings()) {
		if strings.Contains(w, "[DONE]") {
			warned = append(warned, w)
		}
	}
	assert.Equal(t, []string{"2 of 4 successful streams ended after a finish_reason but without data: [DONE]: " +
		"counted as successes (the server closed the stream early)"}, warned)
}

// TestRunWarnsWhenTheServerIgnoresStream: a 200 JSON body to a request
// that asked for a stream was counted ok, without TTFT or ITL and without
// a word; the run now says how many.
func TestRunWarnsWhenTheServerIgnoresStream(t *testing.T) {
	t.Parallel()
	var n atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%2 == 0 { // every other answer streams
			cutHandler(t, func() string { return "done" })(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":"a b c"},"finish_reason":"stop"}]}`)
	}))
	defer ts.Close()
	rep := runInOrder(t, ts.URL, 4, 20)
	assert.Zero(t, rep.Errors)
	assert.Equal(t, 2, rep.NotStreamed)
	assert.Contains(t, warning.Messages(rep.Warnings()), `2 of 4 successful responses came as one JSON body although the request asked for a stream ("stream": true): `+
		`counted as successes without TTFT, ITL or token gaps (the server ignores "stream")`)
}

// TestRunWarnsAboutAnswersThatAreNotWhatWasAsked: finish_reason abort
// after 1 of 50 tokens, usage 999 against 4 streamed chunks and an OSL
// −98 % off the requested 50 passed without a word.
func TestRunWarnsAboutAnswersThatAreNotWhatWasAsked(t *testing.T) {
	t.Parallel()
	var n atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		if n.Add(1)%2 == 1 { // aborted after one token
			fmt.Fprint(w, contentEvent+`data: {"choices":[{"index":0,"delta":{},"finish_reason":"abort"}]}`+"\n\ndata: [DONE]\n\n")
			return
		}
		// four chunks, and a usage far beyond them
		fmt.Fprint(w, strings.Repeat(contentEvent, 4)+`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],`+
			`"usage":{"prompt_tokens":8,"completion_tokens":999,"total_tokens":1007}}`+"\n\ndata: [DONE]\n\n")
	}))
	defer ts.Close()
	rep := runInOrder(t, ts.URL, 4, 50)
	require.Zero(t, rep.Errors)
	assert.Equal(t, []string{
		"2 of 4 successful responses ended with a finish_reason other than stop or length (abort ×2): counted as successes",
		"4 of 4 successful responses have an OSL off the requested max tokens by more than min(5%, 50 tokens) " +
			"(osl_mismatch_diff_pct -98% to -92%): the server stopped early or ignored the limit; " +
			"--extra-inputs ignore_eos:true (or min_tokens) holds it to the trace",
		"2 of 4 successful responses have a server usage.completion_tokens beyond twice or under half " +
			"the client's count of what was streamed (first: 999 against 4)",
	}, warning.Messages(rep.answerWarnings()))
	var all strings.Builder
	for _, w := range warning.Messages(rep.Warnings()) {
		all.WriteString(w + "\n")
	}
	assert.Contains(t, all.String(), "abort ×2", "the warnings reach the run summary")
}

// runInOrder sends n closed-loop requests of osl tokens one after another
// to url and returns the run's report.
func runInOrder(t *testing.T, url string, n, osl int) *Report {
	t.Helper()
	wl := everyMs(n, 5, osl)
	wl.Concurrency = 1
	for i := range wl.Requests {
		wl.Requests[i].HasTimestamp = false
	}
	rep, err := Run(context.Background(), wl, Config{Endpoint: chatEndpoint(url)}, func(r *results.Record) (results.RecordMetrics, error) {
		return results.ComputeMetrics(r), nil
	})
	require.NoError(t, err)
	return rep
}

// TestRunSaysWhatIsWrongWithUsage: usage 3.5 was cut to 3 and usage 0
// after content chunks gave OSL 0, both silently; the run summary now
// names the invalid usage and the client's counts stay.
func TestRunSaysWhatIsWrongWithUsage(t *testing.T) {
	t.Parallel()
	var n atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		completion := []string{"3.5", "0"}[(n.Add(1)-1)%2]
		fmt.Fprint(w, strings.Repeat(contentEvent, 3)+`data: {"choices":[],"usage":{"prompt_tokens":8,"completion_tokens":`+
			completion+`,"total_tokens":11}}`+"\n\ndata: [DONE]\n\n")
	}))
	defer ts.Close()
	var oslMu sync.Mutex
	var osl []int
	wl := everyMs(2, 5, 3)
	wl.Concurrency = 1
	ep := chatEndpoint(ts.URL)
	ep.ServerTokenCount = true
	rep, err := Run(context.Background(), wl, Config{Endpoint: ep}, func(r *results.Record) (results.RecordMetrics, error) {
		oslMu.Lock()
		osl = append(osl, r.OSL())
		oslMu.Unlock()
		return results.ComputeMetrics(r), nil
	})
	require.NoError(t, err)
	assert.Equal(t, []int{3, 3}, osl, "the client's counts, not 3.5 cut to 3 by luck or 0")
	assert.Equal(t, 2, rep.UsageInvalid)
	assert.Zero(t, rep.UsageFar, "an invalid usage is said once, as invalid")
	assert.Contains(t, warning.Messages(rep.Warnings()), "2 of 2 successful responses carried an invalid usage "+
		"(first: usage.completion_tokens is 3.5, not a whole number of tokens): their token counts are the client's")

	// without a valid prompt count anywhere, the ISL line says why
	only := &Report{Finished: 1, UsageInvalid: 1, firstBadUsage: "usage.prompt_tokens is -1, not a whole number of tokens"}
	var b strings.Builder
	only.writeSchedule(&b)
	assert.Contains(t, b.String(), "ISL:       the server's usage was invalid (usage.prompt_tokens is -1, not a whole number of tokens): prompt lengths unchecked")
	assert.NotContains(t, b.String(), "reported no usage")
}

// TestRunWarnsWhenTheHeuristicIsOffTheServersUsage: a stub streaming
// " t12" (two words to the heuristic) with usage one token per chunk
// halved ITL without a word (issue 41 item 7). Beyond 20 % the summary now
// says so once and names the remedies; a server whose usage agrees, or a
// run that takes the server's counts, says nothing.
func TestRunWarnsWhenTheHeuristicIsOffTheServersUsage(t *testing.T) {
	t.Parallel()
	stub := func(chunk string, completion int) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			ev := `data: {"choices":[{"index":0,"delta":{"content":"` + chunk + `"}}]}` + "\n\n"
			fmt.Fprintf(w, "%s"+`data: {"choices":[{"index":0,"delta":{},"finish_reason":"length"}],`+
				`"usage":{"prompt_tokens":8,"completion_tokens":%d,"total_tokens":%d}}`+"\n\ndata: [DONE]\n\n",
				strings.Repeat(ev, 5), completion, 8+completion)
		}))
	}
	const warn = "the word heuristic counted 40 output tokens where the server's usage counts 20 (+100%): " +
		"OSL, ITL and the token throughputs rest on the heuristic; --tokenizer PATH (the model's tokenizer.json or its directory) " +
		"counts as AIPerf does, --use-server-token-count takes the server's counts"
	tests := []struct {
		name        string
		chunk       string
		completion  int
		serverCount bool
		want        []string
	}{
		{"off by 100 %", " t12", 5, false, []string{warn}},
		{"off by 20 %, not more", " tok", 6, false, nil}, // 5 counted, 6 in usage: −16.7 %
		{"the server's counts taken", " t12", 5, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := stub(tt.chunk, tt.completion)
			defer ts.Close()
			wl := everyMs(4, 5, 5)
			wl.Concurrency = 1
			for i := range wl.Requests {
				wl.Requests[i].HasTimestamp = false
			}
			ep := chatEndpoint(ts.URL)
			ep.ServerTokenCount = tt.serverCount
			rep, err := Run(context.Background(), wl, Config{Endpoint: ep}, func(r *results.Record) (results.RecordMetrics, error) {
				return results.ComputeMetrics(r), nil
			})
			require.NoError(t, err)
			var got []string
			for _, w := range warning.Messages(rep.Warnings()) {
				if strings.Contains(w, "word heuristic") {
					got = append(got, w)
				}
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestReportFirstBadUsageIsTheFirstSent: requests finish, and are
// accounted, out of send order; the invalid usage and the far usage the
// summary quotes are the first sent's, whatever order they arrive in (the
// CI once quoted the second request's under -race).
func TestReportFirstBadUsageIsTheFirstSent(t *testing.T) {
	t.Parallel()
	far := func(start int64, server, client int) job {
		return job{rec: &results.Record{StartNs: start, Usage: &results.Usage{CompletionTokens: server}}, clientOSL: client}
	}
	for _, order := range [][]int64{{100, 200, 300}, {300, 200, 100}, {200, 300, 100}} {
		rep := &Report{}
		for _, at := range order {
			rep.add(job{rec: &results.Record{StartNs: at}, badUsage: fmt.Sprintf("bad %d", at)}, &results.RecordMetrics{})
			rep.add(far(at+1, int(at), 1), &results.RecordMetrics{})
		}
		assert.Equal(t, 3, rep.UsageInvalid)
		assert.Equal(t, "bad 100", rep.firstBadUsage, "accounted in order %v", order)
		assert.Equal(t, 3, rep.UsageFar)
		assert.Equal(t, 100, rep.usageFarServer, "accounted in order %v", order)
	}
}

// Package openaitest is a scripted OpenAI-compatible streaming server for
// tests and benchmarks of the load generator: exact time to first token and
// per-token pacing (deadlines from the request's arrival, so no drift), and
// injectable faults (HTTP errors, cut streams, SSE error events, malformed
// JSON, empty responses, stalls).
package openaitest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Fault is what goes wrong with one request.
type Fault int

// Faults a Server can inject.
const (
	None          Fault = iota
	HTTP500             // 500 with a JSON error body
	HTTP429             // 429 Too Many Requests
	CutStream           // the connection is dropped after CutAfter tokens
	SSEError            // "event: error" after CutAfter tokens
	JSONError           // a data: {"error":{...}} chunk after CutAfter tokens
	MalformedJSON       // a data line that is not JSON after CutAfter tokens
	NoContent           // only a role chunk, then [DONE]
	Stall               // headers, then nothing for StallFor
)

// Server is an http.Handler for /v1/chat/completions and /v1/completions.
type Server struct {
	TTFT time.Duration // first token this long after the request arrived
	ITL  time.Duration // then one token every ITL (deadlines, not sleeps)
	// Tokens is the output length when the request has no max tokens
	// (default 16). MaxTokensField picks which request field is honoured:
	// "" = max_completion_tokens, else max_tokens.
	Tokens int
	// Token is each token's text (default " tok", one token by
	// tokenizer.Approx).
	Token string
	// Ollama reproduces Ollama's quirks: the role in every chat delta, a
	// zero usage object in every completions chunk, and max_completion_tokens
	// ignored (max_tokens only).
	Ollama bool
	// FaultFor picks the fault of the n-th request (0-based arrival order).
	FaultFor func(n int) Fault
	CutAfter int           // tokens sent before a mid-stream fault
	StallFor time.Duration // Stall's silence
	// Slots > 0 serves at most Slots requests at once, as an engine with
	// that many batch slots: the others wait in arrival order (FIFO), and
	// TTFT counts from when a slot frees.
	Slots int
	// Record keeps every request's headers and body (see Requests).
	Record bool
	// Metrics, when set, is served at GET /metrics and observes every
	// request (see NewMetrics).
	Metrics *Metrics

	n     atomic.Int64
	slots chan struct{}
	once  sync.Once
	mu    sync.Mutex
	reqs  []Received
	open  atomic.Int64
	peak  atomic.Int64
}

// Received is one recorded request.
type Received struct {
	Path   string
	Header http.Header
	Body   map[string]any
}

// Requests returns the recorded requests.
func (s *Server) Requests() []Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Received(nil), s.reqs...)
}

// PeakOpen is the largest number of requests handled at once.
func (s *Server) PeakOpen() int64 { return s.peak.Load() }

// ServeHTTP streams (or returns) a scripted completion.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.serveMetrics(w, r) {
		return
	}
	if !s.acquire(r) {
		return
	}
	defer s.release()
	arrived := time.Now()
	s.trackOpen(1)
	defer s.trackOpen(-1)
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		http.Error(w, `{"error":{"message":"bad JSON body"}}`, http.StatusBadRequest)
		return
	}
	n := int(s.n.Add(1) - 1)
	if s.Record {
		s.mu.Lock()
		s.reqs = append(s.reqs, Received{Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
		s.mu.Unlock()
	}
	fault := None
	if s.FaultFor != nil {
		fault = s.FaultFor(n)
	}
	rs := &response{s: s, w: w, chat: strings.HasSuffix(r.URL.Path, "/chat/completions"), body: body,
		arrived: arrived, fault: fault, done: r.Context().Done()}
	defer rs.track(r.URL.Path)()
	rs.serve()
}

func (s *Server) trackOpen(d int64) {
	v := s.open.Add(d)
	for {
		p := s.peak.Load()
		if v <= p || s.peak.CompareAndSwap(p, v) {
			return
		}
	}
}

type response struct {
	s       *Server
	w       http.ResponseWriter
	chat    bool
	body    map[string]any
	arrived time.Time
	fault   Fault
	buf     []byte
	tokEv   []byte // the token event, built once per response
	timer   *time.Timer
	done    <-chan struct{} // the client went away
}

func (rs *response) serve() {
	switch rs.fault {
	case HTTP500:
		http.Error(rs.w, `{"error":{"message":"scripted failure","type":"server_error"}}`, http.StatusInternalServerError)
		return
	case HTTP429:
		http.Error(rs.w, "slow down", http.StatusTooManyRequests)
		return
	}
	if stream, _ := rs.body["stream"].(bool); !stream {
		rs.whole()
		return
	}
	rs.w.Header().Set("Content-Type", "text/event-stream")
	rs.w.Header().Set("Cache-Control", "no-cache")
	rs.w.WriteHeader(http.StatusOK)
	rs.flush()
	rs.stream()
}

// tokens is the output length the request asks for.
func (rs *response) tokens() int {
	keys := []string{"max_completion_tokens", "max_tokens"}
	if rs.s.Ollama {
		keys = []string{"max_tokens"}
	}
	for _, k := range keys {
		if v, ok := rs.body[k].(float64); ok && v > 0 {
			return int(v)
		}
	}
	if rs.s.Tokens > 0 {
		return rs.s.Tokens
	}
	return 16
}

func (rs *response) token() string {
	if rs.s.Token != "" {
		return rs.s.Token
	}
	return " tok"
}

// promptTokens counts the prompt's words (or token ids), as the server's
// usage.prompt_tokens.
func (rs *response) promptTokens() int {
	if rs.chat {
		msgs, _ := rs.body["messages"].([]any)
		n := 0
		for _, m := range msgs {
			mm, _ := m.(map[string]any)
			c, _ := mm["content"].(string)
			n += len(strings.Fields(c))
		}
		return n
	}
	switch p := rs.body["prompt"].(type) {
	case string:
		return len(strings.Fields(p))
	case []any:
		return len(p)
	}
	return 0
}

func (rs *response) stream() {
	n := rs.tokens()
	if rs.fault == Stall {
		rs.sleepUntil(time.Now().Add(rs.s.StallFor))
		return
	}
	if rs.chat {
		rs.event(`{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`)
	}
	if rs.fault == NoContent {
		rs.finish()
		return
	}
	for k := 0; k < n; k++ {
		if rs.fault != None && k == rs.s.CutAfter {
			rs.midStreamFault()
			return
		}
		if !rs.sleepUntil(rs.arrived.Add(rs.s.TTFT + time.Duration(k)*rs.s.ITL)) {
			return
		}
		rs.tokenEvent()
		if k == 0 {
			rs.firstTokenWritten()
		}
	}
	if include, _ := rs.body["stream_options"].(map[string]any); include["include_usage"] == true {
		rs.event(rs.usage(n, `"choices":[],`))
	}
	rs.finish()
}

func (rs *response) midStreamFault() {
	switch rs.fault {
	case CutStream:
		panic(http.ErrAbortHandler) // drops the connection mid-body
	case SSEError:
		rs.write("event: error\n: scripted SSE error\ndata: {}\n\n")
	case JSONError:
		rs.event(`{"error":{"message":"scripted JSON error","code":500}}`)
	case MalformedJSON:
		rs.write("data: {\"choices\": [\n\n")
	}
	rs.finish()
}

func (rs *response) tokenEvent() {
	if rs.tokEv == nil {
		rs.tokEv = []byte("data: " + rs.tokenJSON() + "\n\n")
	}
	_, _ = rs.w.Write(rs.tokEv)
	rs.flush()
}

func (rs *response) tokenJSON() string {
	tok, _ := json.Marshal(rs.token())
	var b strings.Builder
	switch {
	case rs.chat && rs.s.Ollama:
		fmt.Fprintf(&b, `{"choices":[{"index":0,"delta":{"role":"assistant","content":%s}}]}`, tok)
	case rs.chat:
		fmt.Fprintf(&b, `{"choices":[{"index":0,"delta":{"content":%s}}]}`, tok)
	case rs.s.Ollama:
		fmt.Fprintf(&b, `{"choices":[{"index":0,"text":%s}],"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}}`, tok)
	default:
		fmt.Fprintf(&b, `{"choices":[{"index":0,"text":%s}]}`, tok)
	}
	return b.String()
}

func (rs *response) usage(n int, prefix string) string {
	p := rs.promptTokens()
	return fmt.Sprintf(`{%s"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`, prefix, p, n, p+n)
}

func (rs *response) finish() { rs.write("data: [DONE]\n\n") }

func (rs *response) event(data string) { rs.write("data: " + data + "\n\n") }

func (rs *response) write(s string) {
	rs.buf = append(rs.buf[:0], s...)
	_, _ = rs.w.Write(rs.buf)
	rs.flush()
}

func (rs *response) flush() {
	if f, ok := rs.w.(http.Flusher); ok {
		f.Flush()
	}
}

// whole answers a non-streaming request after TTFT + (n−1)·ITL.
func (rs *response) whole() {
	n := rs.tokens()
	if !rs.sleepUntil(rs.arrived.Add(rs.s.TTFT + time.Duration(max(n-1, 0))*rs.s.ITL)) {
		return
	}
	text, _ := json.Marshal(strings.Repeat(rs.token(), n))
	choice := `{"index":0,"text":` + string(text) + `}`
	if rs.chat {
		choice = `{"index":0,"message":{"role":"assistant","content":` + string(text) + `}}`
	}
	rs.w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(rs.w, rs.usage(n, `"choices":[`+choice+`],`))
	rs.firstTokenWritten()
}

// sleepUntil waits for t; false when the client went away first.
func (rs *response) sleepUntil(t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return true
	}
	if rs.timer == nil {
		rs.timer = time.NewTimer(d)
	} else {
		rs.timer.Reset(d)
	}
	select {
	case <-rs.timer.C:
		return true
	case <-rs.done:
		rs.timer.Stop()
		return false
	}
}

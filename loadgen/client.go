package loadgen

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/simbench/simbench/results"
)

// readBufSize is each worker's body read buffer. Lines longer than it are
// joined across reads (no line-length limit: the aiohttp trap of vLLM
// #39963), so it only needs to hold a typical burst of events.
const readBufSize = 4 << 10

// client sends requests to one endpoint and turns responses into records.
type client struct {
	hc   *http.Client
	url  string
	auth string // "Bearer <key>", "" without a key
	// extra are the --header headers; secrets the values redacted from
	// error messages (the key's and the credential headers').
	extra   http.Header
	secrets []string
	ep      *Endpoint
	now     func() int64 // wall ns on the run's monotonic clock
}

// newTransport returns a keep-alive pool for pool concurrent streams to one
// host: no cap on connections, idle ones kept for reuse, no compression
// (it would buffer the stream), no proxy (a load generator talks to the
// server directly).
func newTransport(pool int) *http.Transport {
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	return &http.Transport{
		DialContext:         d.DialContext,
		MaxIdleConns:        0,
		MaxIdleConnsPerHost: max(pool, 1),
		MaxConnsPerHost:     0,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		ReadBufferSize:      4 << 10,
		WriteBufferSize:     8 << 10,
	}
}

func newClient(ep *Endpoint, pool int, now func() int64) (*client, error) {
	u, err := ep.RequestURL()
	if err != nil {
		return nil, err
	}
	hc := &http.Client{Transport: newTransport(pool), CheckRedirect: noRedirects}
	c := &client{hc: hc, url: u, ep: ep, now: now, extra: ep.header()}
	if ep.APIKey != "" {
		c.auth = "Bearer " + ep.APIKey
		c.secrets = append(c.secrets, ep.APIKey)
	}
	for _, h := range ep.Headers {
		if h.Value != "" && Credential(h) {
			c.secrets = append(c.secrets, h.Value)
		}
	}
	return c, nil
}

// noRedirects keeps a benchmark request at its URL: a redirect's response
// is returned as it is (statusError records it), so the API key never goes
// to another host or port and no result is recorded as --url's that another
// server produced.
func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// close releases idle connections.
func (c *client) close() { c.hc.CloseIdleConnections() }

// stream is one worker's reusable read state.
type stream struct {
	buf   []byte
	sse   sseParser
	ch    chunk
	whole bytes.Buffer
	tally tally
	// reason is the response's last finish_reason, "" without one.
	reason []byte
	// badUsage says what was wrong with the response's usage, "" when
	// nothing was (see chunk.badUsage and client.finish).
	badUsage string
}

func newStream() *stream { return &stream{buf: make([]byte, readBufSize)} }

// exchange is one request in progress.
type exchange struct {
	c        *client
	st       *stream
	rec      *results.Record
	run, req context.Context // the run's context and this request's (with its timeout)
	at       int64           // time of the read being parsed
	done     bool            // [DONE] seen
	streamed bool            // an SSE body was read to its end
	finished bool            // a chunk had a finish_reason
	failed   bool
}

// do sends body and fills rec but for its token counts (finish sets them).
// It never returns an error: failures are recorded in rec. It reports
// whether rec is a success whose stream ended without data: [DONE] after a
// finish_reason (see endStream).
func (c *client) do(run context.Context, st *stream, rec *results.Record, body []byte) (noDone bool) {
	ctx, cancel := run, context.CancelFunc(func() {})
	if c.ep.Timeout > 0 {
		ctx, cancel = context.WithTimeout(run, c.ep.Timeout)
	}
	defer cancel()
	x := &exchange{c: c, st: st, rec: rec, run: run, req: ctx}
	st.tally.reset()
	st.reason, st.badUsage = st.reason[:0], ""
	x.send(body)
	c.redact(rec)
	return rec.Error == nil && !rec.NonStreaming && x.streamed && !x.done
}

func (x *exchange) send(body []byte) {
	hreq, err := http.NewRequestWithContext(x.req, http.MethodPost, x.c.url, bytes.NewReader(body))
	if err != nil {
		x.failNow(0, "ClientError", err.Error())
		return
	}
	x.c.setHeaders(hreq, x.rec)
	x.rec.StartNs = x.c.now()
	resp, err := x.c.hc.Do(hreq)
	if err != nil {
		x.transportError(err)
		return
	}
	defer resp.Body.Close()
	x.rec.AckNs = x.c.now()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		x.statusError(resp)
		return
	}
	if strings.HasPrefix(strings.ToLower(resp.Header.Get("Content-Type")), "text/event-stream") {
		x.readStream(resp.Body)
	} else {
		x.readWhole(resp.Body)
	}
}

func (c *client) setHeaders(r *http.Request, rec *results.Record) {
	h := r.Header
	h.Set("Content-Type", "application/json")
	if c.ep.Streaming {
		h.Set("Accept", "text/event-stream")
	} else {
		h.Set("Accept", "application/json")
	}
	h.Set("User-Agent", "simbench-loadgen")
	h.Set("X-Request-ID", rec.ID)
	if rec.CorrelationID != "" {
		h.Set("X-Correlation-ID", rec.CorrelationID)
	}
	if c.auth != "" {
		h.Set("Authorization", c.auth)
	}
	for name, values := range c.extra {
		h[name] = values
	}
}

// readStream reads the SSE body incrementally, stamping every event with
// the time of the read that completed it.
func (x *exchange) readStream(body io.Reader) {
	st := x.st
	st.sse.reset()
	for {
		n, err := body.Read(st.buf)
		if n > 0 {
			x.at = x.c.now()
			if !x.feed(st.buf[:n]) {
				return
			}
		}
		if err == io.EOF {
			x.flush()
			x.endStream()
			return
		}
		if err != nil {
			x.readError(err)
			return
		}
	}
}

func (x *exchange) feed(b []byte) bool {
	cont, err := x.st.sse.feed(b, x.onEvent)
	if err != nil {
		x.fail(0, "SSEResponseError", err.Error())
	}
	return cont && !x.failed
}

// endStream checks a stream that ended cleanly (Connection: close, or the
// chunked body's end) without data: [DONE]: with a finish_reason the answer
// is complete and stays a success (do reports it for the run's warning);
// without one the server went away mid-answer, an error.
func (x *exchange) endStream() {
	x.streamed = true
	if x.done || x.failed || x.finished {
		return
	}
	x.failNow(0, "ServerDisconnectedError", "stream ended before [DONE] after "+
		strconv.Itoa(len(x.rec.Chunks))+" content chunks")
}

func (x *exchange) flush() {
	if _, err := x.st.sse.flush(x.onEvent); err != nil {
		x.fail(0, "SSEResponseError", err.Error())
	}
}

// onEvent handles one SSE event; it returns false to stop reading.
func (x *exchange) onEvent(ev *sseEvent) bool {
	x.rec.EndNs = x.at
	if x.done {
		return true // after [DONE]: read on to the end so the connection is reused
	}
	if bytes.EqualFold(ev.Name, []byte("error")) {
		x.fail(502, "SSEResponseError", sseErrorText(ev))
		return false
	}
	if !ev.HasData {
		return true
	}
	data := bytes.TrimSpace(ev.Data)
	if string(data) == "[DONE]" {
		x.done = true
		return true
	}
	return x.onJSON(data)
}

func sseErrorText(ev *sseEvent) string {
	switch {
	case len(ev.Comment) > 0:
		return string(ev.Comment)
	case len(bytes.TrimSpace(ev.Data)) > 0:
		return string(bytes.TrimSpace(ev.Data))
	}
	return "Unknown error in SSE response"
}

// onJSON handles one response object (a chunk, or a whole response).
func (x *exchange) onJSON(data []byte) bool {
	ch := &x.st.ch
	if !ch.decode(data) {
		x.fail(0, "JSONDecodeError", "invalid JSON in response: "+clip(data, 200))
		return false
	}
	if ch.hasError {
		msg := string(ch.errMsg)
		if msg == "" {
			msg = string(data)
		}
		x.fail(502, "SSEResponseError", msg)
		return false
	}
	if ch.hasUsage {
		u := ch.usage
		x.rec.Usage = &u
	}
	if ch.badUsage != "" && x.st.badUsage == "" {
		x.st.badUsage = ch.badUsage
	}
	if ch.finished {
		x.finished, x.st.reason = true, append(x.st.reason[:0], ch.reason...)
	}
	if len(ch.content) == 0 && len(ch.reasoning) == 0 {
		return true // role-only, usage-only or finish chunk: not content
	}
	n := x.st.tally.add(ch, x.c.ep.Prompts.Tokenizer)
	x.rec.Chunks = append(x.rec.Chunks, results.Chunk{AtNs: x.at, Tokens: n})
	return true
}

// readWhole reads a non-streaming (or non-SSE) response: its content is one
// chunk at the end of the body.
func (x *exchange) readWhole(body io.Reader) {
	w := &x.st.whole
	w.Reset()
	_, err := w.ReadFrom(body)
	x.at = x.c.now()
	x.rec.EndNs = x.at
	if err != nil {
		x.readError(err)
		return
	}
	x.rec.NonStreaming = true
	x.onJSON(bytes.TrimSpace(w.Bytes()))
}

// spreadTokens re-weights chunk token counts so they add up to total (the
// server's count), keeping at least one per chunk and the client's
// estimates as weights.
func spreadTokens(chunks []results.Chunk, total int) {
	n := len(chunks)
	if n == 0 {
		return
	}
	extra, weight := total-n, 0
	for _, c := range chunks {
		weight += c.Tokens - 1
	}
	if extra <= 0 || weight == 0 {
		extraEven(chunks, max(extra, 0))
		return
	}
	cum, given := 0, 0
	for i := range chunks {
		cum += chunks[i].Tokens - 1
		share := extra * cum / weight
		chunks[i].Tokens = 1 + share - given
		given = share
	}
}

// extraEven gives every chunk one token and spreads extra evenly.
func extraEven(chunks []results.Chunk, extra int) {
	n, given := len(chunks), 0
	for i := range chunks {
		share := extra * (i + 1) / n
		chunks[i].Tokens = 1 + share - given
		given = share
	}
}

// maxMessage bounds error messages (an error page can be large).
const maxMessage = 2000

// fail records an error (the first one wins). Failures found while parsing
// keep EndNs at the read that delivered them; failNow stamps the current
// time.
func (x *exchange) fail(code int, typ, msg string) {
	if x.failed {
		return
	}
	x.failed = true
	if x.rec.EndNs == 0 {
		x.rec.EndNs = x.c.now()
	}
	x.rec.Error = &results.ErrorDetails{Code: code, Type: typ, Message: clip([]byte(msg), maxMessage)}
}

func (x *exchange) failNow(code int, typ, msg string) {
	if !x.failed {
		x.rec.EndNs = x.c.now()
	}
	x.fail(code, typ, msg)
}

// statusError records a non-2xx response: code = status, type = reason
// phrase, message = body text (AIPerf's shape).
func (x *exchange) statusError(resp *http.Response) {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxMessage+1))
	reason := strings.TrimSpace(strings.TrimPrefix(resp.Status, resp.Status[:min(3, len(resp.Status))]))
	if reason == "" {
		reason = http.StatusText(resp.StatusCode)
	}
	msg := strings.TrimSpace(string(b))
	if msg == "" {
		msg = resp.Status
	}
	if loc := resp.Header.Get("Location"); loc != "" && resp.StatusCode >= 300 && resp.StatusCode <= 399 {
		msg = "redirect to " + results.RedactURL(loc) + " not followed (benchmark requests go to --url only): " + msg
	}
	x.failNow(resp.StatusCode, reason, msg)
}

// transportError records a failure before any response.
func (x *exchange) transportError(err error) {
	if x.interrupted() {
		return
	}
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) && ue.Unwrap() != nil {
		err = ue.Unwrap() // drop url.Error's "Post <url>:" prefix
	}
	var op *net.OpError
	switch {
	case errors.As(err, &op) && op.Op == "dial":
		x.failNow(0, "ClientConnectorError", "cannot connect to host: "+err.Error())
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		x.failNow(0, "ServerDisconnectedError", "server disconnected: "+err.Error())
	default:
		x.failNow(0, "ClientError", err.Error())
	}
}

// readError records a failure while reading the body: a cut stream.
func (x *exchange) readError(err error) {
	if x.interrupted() {
		return
	}
	x.failNow(0, "ClientPayloadError", "response payload is not completed: "+err.Error()+
		" (after "+strconv.Itoa(len(x.rec.Chunks))+" content chunks)")
}

// interrupted records a run cancellation (code 499) or a request timeout
// and reports whether it did.
func (x *exchange) interrupted() bool {
	now := x.c.now()
	secs := float64(now-x.rec.StartNs) / 1e9
	switch {
	case x.run.Err() != nil:
		x.failNow(499, "RequestCancellationError", "Request was cancelled after "+strconv.FormatFloat(secs, 'f', 3, 64)+" seconds")
		x.rec.Cancelled, x.rec.CancelledNs = true, now
	case x.req.Err() != nil:
		x.failNow(0, "TimeoutError", "request timed out after "+strconv.FormatFloat(secs, 'f', 3, 64)+" seconds")
	default:
		return false
	}
	return true
}

// redact removes the API key and the credential headers' values from the
// record's error message, in case a server echoes its request headers.
func (c *client) redact(rec *results.Record) {
	if rec.Error == nil {
		return
	}
	for _, s := range c.secrets {
		rec.Error.Message = strings.ReplaceAll(rec.Error.Message, s, "[redacted]")
	}
}

// clip returns b as valid UTF-8 text of at most n bytes (plus "…").
func clip(b []byte, n int) string {
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// newUUID returns a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:], b[10:])
	return string(s[:])
}

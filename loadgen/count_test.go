package loadgen

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/simbench/simbench/internal/warning"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/loadgen/openaitest"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/tokenizer"
	"github.com/simbench/simbench/tokenizer/tokenizertest"
	"github.com/simbench/simbench/traces"
)

// scripted streams, for each request (by X-Request-ID), its chunks: content
// and reasoning texts, and with usage the cumulative completion_tokens of
// each chunk (vLLM's continuous_usage_stats).
type scripted struct {
	mu      sync.Mutex
	streams map[string]script
	bodies  []map[string]any
}

type script struct {
	content, reasoning []string
	usage              []int // cumulative completion_tokens per chunk; nil = none
	total              int   // final usage chunk's completion_tokens (with usage)
}

func (s *scripted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	_ = json.NewDecoder(r.Body).Decode(&body)
	s.mu.Lock()
	sc := s.streams[r.Header.Get("X-Request-ID")]
	s.bodies = append(s.bodies, body)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	for i := range sc.content {
		delta := map[string]string{}
		if sc.content[i] != "" {
			delta["content"] = sc.content[i]
		}
		if i < len(sc.reasoning) && sc.reasoning[i] != "" {
			delta["reasoning_content"] = sc.reasoning[i]
		}
		ev := map[string]any{"choices": []any{map[string]any{"index": 0, "delta": delta}}}
		if sc.usage != nil {
			ev["usage"] = map[string]int{"prompt_tokens": 7, "completion_tokens": sc.usage[i], "total_tokens": 7 + sc.usage[i]}
		}
		b, _ := json.Marshal(ev)
		fmt.Fprintf(w, "data: %s\n\n", b)
		fl.Flush()
	}
	if sc.usage != nil {
		fmt.Fprintf(w, `data: {"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":%d,"total_tokens":%d}}`+"\n\n", sc.total, 7+sc.total)
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// stream sends one request whose response is sc and returns its record.
func (s *scripted) stream(t *testing.T, c *client, st *stream, id string, sc script) *results.Record {
	t.Helper()
	s.mu.Lock()
	s.streams[id] = sc
	s.mu.Unlock()
	rec := &results.Record{ID: id}
	c.do(context.Background(), st, rec, newBody(c.ep).build(&traces.Request{InputLength: 3, OutputLength: 10}))
	c.finish(st, rec)
	require.Nil(t, rec.Error, "%+v", rec.Error)
	return rec
}

func newScripted(t *testing.T, ep Endpoint) (*scripted, *client) {
	t.Helper()
	s := &scripted{streams: map[string]script{}}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	ep.URL = ts.URL
	start := time.Now()
	c, err := newClient(&ep, 4, func() int64 { return start.UnixNano() + int64(time.Since(start)) })
	require.NoError(t, err)
	t.Cleanup(c.close)
	return s, c
}

type goldenCase struct {
	Text string  `json:"text"`
	IDs  []int32 `json:"ids"`
}

// oracle returns the texts and token ids of the Qwen3 package's JavaScript
// tokenizer (tokenizer/testdata/qwen3_golden.json).
func oracle(t *testing.T) []goldenCase {
	t.Helper()
	data, err := os.ReadFile("../tokenizer/testdata/qwen3_golden.json")
	require.NoError(t, err)
	var g struct{ Cases []goldenCase }
	require.NoError(t, json.Unmarshal(data, &g))
	var out []goldenCase
	for _, c := range g.Cases {
		if c.Text != "" && utf8.ValidString(c.Text) {
			out = append(out, c)
		}
	}
	return out
}

// chunkings splits text as servers stream it: whole, per rune, per token
// (holding back a partial UTF-8 character, as detokenizers do), in random
// pieces, and per 7 bytes at rune boundaries.
func chunkings(tk *tokenizer.Tokenizer, text string, ids []int32, rng *rand.Rand) map[string][]string {
	out := map[string][]string{"whole": {text}}
	for _, r := range text {
		out["rune"] = append(out["rune"], string(r))
	}
	var pending []byte
	for _, id := range ids {
		pending, _ = tk.Decode(pending, []int32{id})
		if utf8.Valid(pending) {
			out["token"] = append(out["token"], string(pending))
			pending = nil
		}
	}
	if len(pending) > 0 {
		out["token"] = append(out["token"], string(pending))
	}
	out["random"] = splitRunes(text, func() int { return 1 + rng.IntN(12) })
	out["7 bytes"] = splitRunes(text, func() int { return 7 })
	return out
}

// splitRunes cuts text into pieces of about size() bytes at rune boundaries.
func splitRunes(text string, size func() int) []string {
	var out []string
	for len(text) > 0 {
		n := min(size(), len(text))
		for n < len(text) && !utf8.RuneStart(text[n]) {
			n++
		}
		out = append(out, text[:n])
		text = text[n:]
	}
	return out
}

// TestTokenizerOSLWhateverTheChunking: with the real Qwen3 tokenizer, OSL
// is the JavaScript oracle's token count of the streamed text however the
// server chunks it, and the chunk counts add up to it.
func TestTokenizerOSLWhateverTheChunking(t *testing.T) {
	tk := tokenizertest.Qwen3(t)
	ep := chatEndpoint("")
	require.NoError(t, ep.Prompts.UseTokenizer(tk))
	s, c := newScripted(t, ep)
	st := newStream()
	rng := rand.New(rand.NewPCG(1, 2))
	n := 0
	for i, g := range oracle(t) {
		for name, chunks := range chunkings(tk, g.Text, g.IDs, rng) {
			if i >= 60 && name != "random" && name != "token" {
				continue // the 300 seeded random texts: two chunkings each
			}
			rec := s.stream(t, c, st, fmt.Sprintf("c%d-%s", i, name), script{content: chunks})
			require.Equal(t, len(g.IDs), rec.OutputTokens, "%s chunking of %q", name, g.Text)
			require.Len(t, rec.Chunks, len(chunks))
			sum := 0
			for _, ch := range rec.Chunks {
				require.GreaterOrEqual(t, ch.Tokens, 1)
				sum += ch.Tokens
			}
			if len(g.IDs) >= len(chunks) {
				require.Equal(t, rec.OutputTokens, sum, "%s chunking of %q: chunk counts add up to OSL", name, g.Text)
			}
			n++
		}
	}
	assert.Greater(t, n, 850)
}

// TestTokenizerChunkCounts: a chunk counts the tokens whose last byte it
// delivered; reasoning is counted apart, as AIPerf does.
func TestTokenizerChunkCounts(t *testing.T) {
	tk := tokenizertest.Qwen3(t)
	ep := chatEndpoint("")
	require.NoError(t, ep.Prompts.UseTokenizer(tk))
	s, c := newScripted(t, ep)
	st := newStream()
	// " the" " quick" " brown" are one token each; "你好" is one token.
	rec := s.stream(t, c, st, "a", script{content: []string{"Hello the quick", " brown", " fox 你", "好"}})
	assert.Equal(t, tk.Count([]byte("Hello the quick brown fox 你好")), rec.OutputTokens)
	assert.Equal(t, []int{3, 1, 2, 1}, tokensOf(rec.Chunks), "\"你\" ends no token: it counts in the chunk that completed \"你好\", the first kept at one")

	rec = s.stream(t, c, st, "b", script{content: []string{"", "", "The answer", " is 42."},
		reasoning: []string{"Let me", " think.", "", ""}})
	assert.Equal(t, tk.Count([]byte("Let me think.")), rec.ReasoningTokens)
	assert.Equal(t, tk.Count([]byte("The answer is 42.")), rec.OutputTokens)
	assert.Equal(t, rec.OSL(), sumTokens(rec.Chunks))
}

func tokensOf(chunks []results.Chunk) []int {
	out := make([]int, len(chunks))
	for i, c := range chunks {
		out[i] = c.Tokens
	}
	return out
}

func sumTokens(chunks []results.Chunk) int {
	n := 0
	for _, c := range chunks {
		n += c.Tokens
	}
	return n
}

// TestPerChunkUsage: with usage on every chunk and --use-server-token-count,
// a chunk carrying k tokens counts k (its completion_tokens delta), and
// token_gap holds its k−1 zero gaps.
func TestPerChunkUsage(t *testing.T) {
	ep := chatEndpoint("")
	ep.ServerTokenCount, ep.PerChunkUsage = true, true
	s, c := newScripted(t, ep)
	st := newStream()
	rec := s.stream(t, c, st, "mtp", script{content: []string{"a", "b c d", "e f", "g"}, usage: []int{1, 4, 6, 7}, total: 9})
	assert.Equal(t, []int{1, 3, 2, 3}, tokensOf(rec.Chunks), "the 2 tokens after the last content chunk count in it")
	assert.Equal(t, 9, rec.OutputTokens)
	for i := range rec.Chunks { // one read delivered them all: space them 10 ms apart
		rec.Chunks[i].AtNs = rec.StartNs + int64(i+1)*10e6
	}
	rec.EndNs = rec.Chunks[3].AtNs
	m := results.ComputeMetrics(rec)
	assert.Equal(t, []float64{10, 0, 0, 10, 0, 10, 0, 0}, m.TokenGaps(),
		"osl − 1 gaps: each chunk's gap once, then k−1 zeros (its tokens arrived together)")
	opts := s.bodies[0]["stream_options"].(map[string]any)
	assert.Equal(t, true, opts["continuous_usage_stats"])

	// Usage on the last chunk only: the old spread by client counts.
	rec = s.stream(t, c, st, "final-only", script{content: []string{"a", "b c d", "e f", "g"}, usage: []int{0, 0, 0, 0}, total: 8})
	assert.Equal(t, 8, rec.OutputTokens)
	assert.Equal(t, 8, sumTokens(rec.Chunks))

	// A falling count is not trusted: spread instead.
	rec = s.stream(t, c, st, "falling", script{content: []string{"a", "b"}, usage: []int{3, 2}, total: 4})
	assert.Equal(t, []int{2, 2}, tokensOf(rec.Chunks))
}

func TestPerChunkUsageNeedsServerCount(t *testing.T) {
	ep := chatEndpoint("http://127.0.0.1:1")
	ep.PerChunkUsage = true
	assert.ErrorContains(t, ep.Validate(), "--per-chunk-usage needs --use-server-token-count")
}

// TestTokenizerPromptsExact: with the Qwen3 tokenizer every synthesised
// prompt the server receives is exactly its ISL tokens, and equal hash_ids
// give equal token blocks.
func TestTokenizerPromptsExact(t *testing.T) {
	tk := tokenizertest.Qwen3(t)
	srv := &openaitest.Server{Record: true}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	wl, err := traces.Synthesize(traces.SynthSpec{Concurrency: 4, RequestCount: 40, ISL: 700, ISLStddev: 300, OSL: 2,
		SharedPrefixTokens: 256, NumPrefixGroups: 2, BlockSize: 64, Seed: 9})
	require.NoError(t, err)
	ep := chatEndpoint(ts.URL)
	ep.Prompts.BlockSize = 64
	require.NoError(t, ep.LoadTokenizer(tokenizertest.Dir(t)))
	var mu sync.Mutex
	recs := map[string]*results.Record{}
	rep, err := Run(context.Background(), wl, Config{Endpoint: ep}, func(r *results.Record) (results.RecordMetrics, error) {
		mu.Lock()
		recs[r.ID] = r
		mu.Unlock()
		return results.ComputeMetrics(r), nil
	})
	require.NoError(t, err)
	assert.True(t, rep.ExactISL)
	assert.Contains(t, rep.Counting, "tokenizer "+tokenizertest.Dir(t))
	got := srv.Requests()
	require.Len(t, got, 40)
	blocks := map[int64][]int32{}
	for _, g := range got {
		content := g.Body["messages"].([]any)[0].(map[string]any)["content"].(string)
		ids := tk.Encode(nil, []byte(content))
		rec := recs[g.Header.Get("X-Request-ID")]
		require.NotNil(t, rec)
		require.Equal(t, rec.InputTokens, len(ids), "ISL of %s", rec.ID)
		req := &wl.Requests[rec.TraceRow]
		require.Equal(t, req.InputLength, len(ids))
		for j, h := range req.HashIDs[:len(req.HashIDs)-1] { // the last block may be short
			blk := ids[j*64 : (j+1)*64]
			if prev, ok := blocks[h]; ok {
				require.Equal(t, prev, blk, "hash id %d", h)
			}
			blocks[h] = blk
		}
	}
	assert.NotEmpty(t, blocks)
}

func TestUseTokenizerCountsLiteralPrompts(t *testing.T) {
	tk := tokenizertest.Qwen3(t)
	p := Prompts{BlockSize: 8}
	require.NoError(t, p.UseTokenizer(tk))
	text := "你好，世界！ Hello"
	assert.Equal(t, tk.Count([]byte(text)), p.Tokens(&traces.Request{TextInput: text}))
	assert.Greater(t, len(p.words), 200, "most of the 256 words are single Qwen3 tokens")
}

// TestImplausibleUsageKeepsClientCount: a usage completion_tokens beyond
// both the max tokens asked for and the text streamed, final or per chunk,
// is not used (the client's count stays, finish reports it), so neither the
// counts nor the record's token gaps depend on the number the server sent.
func TestImplausibleUsageKeepsClientCount(t *testing.T) {
	tests := []struct {
		name     string
		perChunk bool
		sc       script
	}{
		{"final 1e6", false, script{content: []string{"a", "b", "c", "d"}, usage: []int{0, 0, 0, 0}, total: 1_000_000}},
		{"final 1e8", false, script{content: []string{"a", "b", "c", "d"}, usage: []int{0, 0, 0, 0}, total: 100_000_000}},
		{"final 2^32+1", false, script{content: []string{"a", "b", "c", "d"}, usage: []int{0, 0, 0, 0}, total: 1<<32 + 1}},
		{"per-chunk deltas", true, script{content: []string{"a", "b", "c", "d"}, usage: []int{1, 1e8, 1e8 + 1, 1e8 + 2}, total: 1e8 + 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ep := chatEndpoint("")
			ep.ServerTokenCount, ep.PerChunkUsage = true, tt.perChunk
			s, c := newScripted(t, ep)
			s.streams["r"] = tt.sc
			st := newStream()
			rec := &results.Record{ID: "r", RequestedOutputTokens: 10}
			c.do(context.Background(), st, rec, newBody(c.ep).build(&traces.Request{InputLength: 3, OutputLength: 10}))
			require.Nil(t, rec.Error)
			assert.True(t, c.finish(st, rec), "reported")
			assert.Equal(t, 4, rec.OutputTokens, "the client's count")
			assert.Equal(t, []int{1, 1, 1, 1}, tokensOf(rec.Chunks))
			m := results.ComputeMetrics(rec)
			assert.Len(t, m.TokenGaps(), 3, "osl − 1 token gaps, whatever the server claimed")
		})
	}

	// Up to the max tokens asked, or beyond it within the streamed text, a
	// count is used as it is.
	ep := chatEndpoint("")
	ep.ServerTokenCount = true
	s, c := newScripted(t, ep)
	for total, content := range map[int][]string{10: {"a", "b"}, 14: {"abcdefgh", "ijklmnop"}} {
		s.streams["ok"] = script{content: content, usage: []int{0, 0}, total: total}
		st := newStream()
		rec := &results.Record{ID: "ok", RequestedOutputTokens: 10}
		c.do(context.Background(), st, rec, newBody(c.ep).build(&traces.Request{InputLength: 3, OutputLength: 10}))
		assert.False(t, c.finish(st, rec))
		assert.Equal(t, total, rec.OutputTokens)
	}
}

func TestReportWarnsOfImplausibleUsage(t *testing.T) {
	rep := &Report{}
	for _, bad := range []bool{true, false, true} {
		rec := &results.Record{StartNs: 1, EndNs: 5e6, OutputTokens: 1, Chunks: []results.Chunk{{AtNs: 2e6, Tokens: 1}}}
		m := results.ComputeMetrics(rec)
		rep.add(job{rec: rec, req: &traces.Request{}, implausibleUsage: bad}, &m)
	}
	assert.Equal(t, 2, rep.ImplausibleUsage)
	assert.Contains(t, warning.Messages(rep.Warnings()), "2 of 3 successful requests reported a usage completion_tokens beyond both the max tokens "+
		"asked and the text streamed: the server's count was not used, the client's count kept")
}

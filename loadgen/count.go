package loadgen

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/tokenizer"
)

// tally collects what one response's token counts are made from, as its
// content chunks arrive; finish turns it into counts. Its buffers are
// reused from one request to the next.
//
// Three sources, AIPerf's rules for each:
//   - no tokenizer: ApproxTokens of each chunk (an approximation, said so
//     in the run summary);
//   - a tokenizer (--tokenizer): output tokens are the tokenizer's count of
//     all content text joined, reasoning tokens of all reasoning text
//     joined (AIPerf's "".join(texts) then encode). A chunk's count is the
//     number of tokens whose last byte it delivered, so the chunk counts add
//     up to OSL whatever the chunking; see chunkCounts;
//   - --use-server-token-count with usage on every content chunk (vLLM's
//     stream_options.continuous_usage_stats, --per-chunk-usage): a chunk's
//     count is its completion_tokens delta, so a chunk carrying k tokens
//     (multi-token prediction, stream intervals) counts k.
type tally struct {
	out, rsn  int    // approximate counts, without a tokenizer
	text      int    // bytes of content and reasoning text received
	content   []byte // content text, with a tokenizer
	reasoning []byte // reasoning text, with a tokenizer
	marks     []mark // per content chunk
	usageAll  bool   // every content chunk so far carried usage
	ends      []int  // scratch: token end offsets
	cum       []int  // scratch: cumulative counts
}

// mark is where a content chunk ended in the text and the server's
// cumulative completion_tokens at it.
type mark struct {
	content, reasoning int
	completion         int
}

func (t *tally) reset() {
	t.out, t.rsn, t.text = 0, 0, 0
	t.content, t.reasoning, t.marks = t.content[:0], t.reasoning[:0], t.marks[:0]
	t.usageAll = true
}

// add accounts one content chunk and returns its provisional token count
// (final without a tokenizer and server counts).
func (t *tally) add(ch *chunk, tk *tokenizer.Tokenizer) int {
	t.usageAll = t.usageAll && ch.hasUsage
	t.text += len(ch.content) + len(ch.reasoning)
	if !t.usageAll && tk == nil {
		return t.approx(ch) // no per-chunk usage to attribute, no text to keep
	}
	t.marks = append(t.marks, mark{completion: ch.usage.CompletionTokens})
	if tk != nil {
		t.content = append(t.content, ch.content...)
		t.reasoning = append(t.reasoning, ch.reasoning...)
		m := &t.marks[len(t.marks)-1]
		m.content, m.reasoning = len(t.content), len(t.reasoning)
		return 1
	}
	return t.approx(ch)
}

// approx counts ch with the word heuristic.
func (t *tally) approx(ch *chunk) int {
	out, rsn := 0, 0
	if len(ch.content) > 0 {
		out = tokenizer.Approx(ch.content)
	}
	if len(ch.reasoning) > 0 {
		rsn = tokenizer.Approx(ch.reasoning)
	}
	t.out += out
	t.rsn += rsn
	return out + rsn
}

// tokenize counts the text with tk and gives each chunk the tokens whose
// last byte it delivered.
func (t *tally) tokenize(tk *tokenizer.Tokenizer, chunks []results.Chunk) {
	t.cum = slices.Grow(t.cum[:0], len(chunks))[:len(chunks)]
	clear(t.cum)
	t.ends = tk.AppendEnds(t.ends[:0], t.content)
	t.out = len(t.ends)
	t.attribute(func(m mark) int { return m.content })
	t.ends = tk.AppendEnds(t.ends[:0], t.reasoning)
	t.rsn = len(t.ends)
	t.attribute(func(m mark) int { return m.reasoning })
	for i := 1; i < len(t.cum); i++ {
		t.cum[i] += t.cum[i-1]
	}
	setCumulative(chunks, t.cum)
}

// attribute adds to t.cum[i] (per chunk, not yet cumulative) the tokens of
// t.ends that chunk i completed: the first chunk whose text end reaches the
// token's end.
func (t *tally) attribute(end func(mark) int) {
	i := 0
	for _, e := range t.ends {
		for i < len(t.marks)-1 && end(t.marks[i]) < e {
			i++
		}
		t.cum[i]++
	}
}

// perChunkUsage sets chunk counts from the completion_tokens deltas and
// reports whether it could: usage on every content chunk, never falling,
// and not above the final total. Tokens reported after the last content
// chunk go to it.
func (t *tally) perChunkUsage(chunks []results.Chunk, total int) bool {
	if !t.usageAll || len(t.marks) != len(chunks) || len(chunks) == 0 {
		return false
	}
	t.cum = t.cum[:0]
	prev := 0
	for _, m := range t.marks {
		if m.completion < prev {
			return false
		}
		prev = m.completion
		t.cum = append(t.cum, m.completion)
	}
	if prev > total {
		return false
	}
	t.cum[len(t.cum)-1] = total
	setCumulative(chunks, t.cum)
	return true
}

// setCumulative sets chunk counts from cumulative counts, keeping at least
// one token per chunk (a content chunk carries at least one; a token split
// across chunks counts where it ended) while the total allows: cumulative
// count i is kept within [previous+1, total−(n−1−i)]. With fewer tokens than
// chunks (the tokenizer merged the text of several chunks into fewer
// tokens) every chunk counts one, and the chunk counts then exceed OSL;
// OSL itself is never changed here.
func setCumulative(chunks []results.Chunk, cum []int) {
	n := len(chunks)
	if n == 0 {
		return
	}
	total := cum[n-1]
	if total < n {
		for i := range chunks {
			chunks[i].Tokens = 1
		}
		return
	}
	prev := 0
	for i := range chunks {
		c := min(max(cum[i], prev+1), total-(n-1-i))
		chunks[i].Tokens = c - prev
		prev = c
	}
}

// finish sets rec's token counts from st's tally once the response is read
// (after its times are stamped, so counting costs no measured time): the
// client's counts, or the server's usage with --use-server-token-count
// (AIPerf's rules: output = completion − reasoning), per chunk from the
// usage deltas when every content chunk carried usage, else spread over the
// chunks by the client's counts.
//
// A usage count no answer could have (see plausibleOutput) is not used: the
// client's counts stay, and finish reports it (implausible) for the run's
// warning. So no count, and no memory (a token gap per token), depends on a
// number the server sends.
func (c *client) finish(st *stream, r *results.Record) (implausible bool) {
	if r.Error != nil {
		return false
	}
	t := &st.tally
	if tk := c.ep.Prompts.Tokenizer; tk != nil {
		t.tokenize(tk, r.Chunks)
	}
	r.OutputTokens, r.ReasoningTokens = t.out, t.rsn
	if !c.ep.ServerTokenCount || r.Usage == nil {
		return false
	}
	if r.Usage.CompletionTokens > t.plausibleOutput(r) {
		return true
	}
	if r.Usage.CompletionTokens == 0 && len(r.Chunks) > 0 { // the client's counts stay
		st.badUsage = "usage.completion_tokens is 0 after " + strconv.Itoa(len(r.Chunks)) + " content chunks"
		return
	}
	r.InputTokens = r.Usage.PromptTokens
	r.ReasoningTokens = min(r.Usage.ReasoningTokens, r.Usage.CompletionTokens)
	r.OutputTokens = r.Usage.CompletionTokens - r.ReasoningTokens
	if !t.usageAll || !t.perChunkUsage(r.Chunks, r.OSL()) {
		spreadTokens(r.Chunks, r.OSL())
	}
	return false
}

// plausibleOutput bounds the completion tokens an answer can have: the
// max tokens it asked for, or more when the server streamed more, every
// token decoding to at least a byte of text, plus one per content chunk
// for tokens without text (an end-of-sequence token, a reasoning marker).
func (t *tally) plausibleOutput(r *results.Record) int {
	return max(r.RequestedOutputTokens, t.text+len(r.Chunks))
}

// LoadTokenizer loads --tokenizer PATH (a tokenizer.json, or a directory
// holding it and tokenizer_config.json) for e's prompts and token counts;
// "" leaves the approximations.
func (e *Endpoint) LoadTokenizer(path string) error {
	if path == "" {
		return nil
	}
	tk, err := tokenizer.Load(path)
	if err != nil {
		return fmt.Errorf("--tokenizer: %w", err)
	}
	return e.Prompts.UseTokenizer(tk)
}

// Counting says how the run counts tokens, for its summary.
func (e *Endpoint) Counting() string {
	src := "approximate: a word heuristic, not the model's tokenizer (--tokenizer PATH counts exactly, as AIPerf does)"
	if tk := e.Prompts.Tokenizer; tk != nil {
		src = "tokenizer " + tk.Name() + " (exact prompt lengths; output counted as AIPerf counts it)"
	}
	if e.ServerTokenCount {
		return "server usage (--use-server-token-count); client side " + src
	}
	return src
}

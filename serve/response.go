package serve

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/simbench/simbench/internal/promptwords"
)

// chunk is one streamed event, or (Object chat.completion or
// text_completion) a whole answer, in OpenAI's shapes as vLLM writes them.
type chunk struct {
	ID      string   `json:"id"`
	Object  string   `json:"object"`
	Created int64    `json:"created"`
	Model   string   `json:"model"`
	Choices []choice `json:"choices"`
	Usage   *usage   `json:"usage,omitempty"`
}

type choice struct {
	Index        int      `json:"index"`
	Text         *string  `json:"text,omitempty"`
	Delta        *message `json:"delta,omitempty"`
	Message      *message `json:"message,omitempty"`
	FinishReason *string  `json:"finish_reason"`
}

type message struct {
	Role    string `json:"role,omitempty"`
	Content string `json:"content"`
}

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// finishLength is every answer's finish reason: the simulated engine stops
// at max_tokens.
var finishLength = "length"

// tokenText is output token k (0-based): a word of the prompt word list,
// one token in common vocabularies and by the word-count rule.
func tokenText(k int) string { return " " + promptwords.Word(byte(k%promptwords.Count)) }

// answer builds one request's chunks.
type answer struct {
	p       parsed
	sent    []int64 // wall ns each streamed token's write began
	isl     int     // prompt tokens as the simulator counts them (with the template's)
	id      string
	created int64
	model   string
	fault   fault // what goes wrong with it on purpose
}

func (a *answer) base(object string) chunk {
	return chunk{ID: a.id, Object: object, Created: a.created, Model: a.model}
}

func (a *answer) streamObject() string {
	if a.p.chat {
		return "chat.completion.chunk"
	}
	return "text_completion"
}

// roleChunk is a chat stream's first event: the role, no content.
func (a *answer) roleChunk() chunk {
	c := a.base(a.streamObject())
	c.Choices = []choice{{Delta: &message{Role: "assistant"}}}
	return c
}

// tokenChunk is output token k (0-based) of n; with per-chunk usage it
// carries the counts so far.
func (a *answer) tokenChunk(k, n, isl int) chunk {
	c := a.base(a.streamObject())
	ch := choice{}
	text := tokenText(k)
	if a.p.chat {
		ch.Delta = &message{Content: text}
	} else {
		ch.Text = &text
	}
	if k == n-1 {
		ch.FinishReason = &finishLength
	}
	c.Choices = []choice{ch}
	if a.p.usageEach {
		c.Usage = newUsage(isl, k+1)
	}
	return c
}

// usageChunk is the stream's last event before [DONE] with
// stream_options.include_usage: no choices, the counts.
func (a *answer) usageChunk(isl, osl int) chunk {
	c := a.base(a.streamObject())
	c.Choices = []choice{}
	c.Usage = newUsage(isl, osl)
	return c
}

// whole is a non-streamed answer of osl tokens.
func (a *answer) whole(isl, osl int) chunk {
	var b strings.Builder
	for k := range osl {
		b.WriteString(tokenText(k))
	}
	text := b.String()
	ch := choice{FinishReason: &finishLength}
	object := "text_completion"
	if a.p.chat {
		object = "chat.completion"
		ch.Message = &message{Role: "assistant", Content: text}
	} else {
		ch.Text = &text
	}
	c := a.base(object)
	c.Choices = []choice{ch}
	c.Usage = newUsage(isl, osl)
	return c
}

func newUsage(isl, osl int) *usage {
	return &usage{PromptTokens: isl, CompletionTokens: osl, TotalTokens: isl + osl}
}

// sseEvent appends c as one SSE event to dst.
func sseEvent(dst []byte, c chunk) ([]byte, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return dst, fmt.Errorf("serve: chunk: %w", err)
	}
	dst = append(dst, "data: "...)
	dst = append(dst, b...)
	return append(dst, "\n\n"...), nil
}

// sseDone ends a stream.
const sseDone = "data: [DONE]\n\n"

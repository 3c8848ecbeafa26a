package loadgen

import (
	"bytes"
	"math"

	"github.com/simbench/simbench/internal/jsonlex"
	"github.com/simbench/simbench/results"
)

// chunk is what the client needs from one OpenAI response object (a
// streamed chunk or a whole non-streaming response). Its buffers are reused
// from one decode to the next, so decoding allocates nothing once warm.
type chunk struct {
	content   []byte // delta.content / message.content / text, decoded
	reasoning []byte // reasoning_content, else reasoning, decoded
	usage     results.Usage
	hasUsage  bool // a valid usage object with a non-zero count (Ollama sends zeros)
	// badUsage says what was wrong with an invalid usage object (a count
	// that is negative, a fraction or not a number); "" when valid.
	badUsage string
	hasError bool // an "error" member
	errMsg   []byte
	finished bool   // choices[0] has a finish_reason (a string, not null)
	reason   []byte // that finish_reason

	altReasoning []byte // "reasoning" while "reasoning_content" is preferred
	s            jsonlex.Lexer
}

// decode parses one JSON document. It reports false when data is not valid
// JSON (or not an object).
func (c *chunk) decode(data []byte) bool {
	c.content, c.reasoning, c.altReasoning, c.errMsg = c.content[:0], c.reasoning[:0], c.altReasoning[:0], c.errMsg[:0]
	c.usage, c.hasUsage, c.hasError, c.finished, c.reason = results.Usage{}, false, false, false, c.reason[:0]
	c.badUsage = ""
	c.s.Reset(data)
	s := &c.s
	ok := s.Object(func(key []byte) bool {
		switch string(key) {
		case "choices":
			return s.Peek() != '[' && s.Skip() || s.Array(c.choice)
		case "usage":
			return s.Peek() != '{' && s.Skip() || c.decodeUsage()
		case "error":
			if s.Null() {
				return true
			}
			c.hasError = true
			return c.decodeError()
		}
		return s.Skip()
	}) && s.End()
	if len(c.reasoning) == 0 {
		c.reasoning = append(c.reasoning, c.altReasoning...)
	}
	return ok
}

// choice reads choices[0]; later choices (n > 1) are skipped.
func (c *chunk) choice(i int) bool {
	s := &c.s
	if i > 0 {
		return s.Skip()
	}
	return s.Peek() != '{' && s.Skip() || s.Object(func(key []byte) bool {
		switch string(key) {
		case "delta", "message":
			return s.Peek() != '{' && s.Skip() || s.Object(c.message)
		case "text":
			return c.text(&c.content)
		case "finish_reason":
			if s.Peek() == '"' {
				c.finished = true
				return c.text(&c.reason)
			}
		}
		return s.Skip()
	})
}

func (c *chunk) message(key []byte) bool {
	switch string(key) {
	case "content":
		return c.text(&c.content)
	case "reasoning_content":
		return c.text(&c.reasoning)
	case "reasoning":
		return c.text(&c.altReasoning)
	}
	return c.s.Skip()
}

// text appends a string value to dst, decoded as encoding/json decodes it;
// null and non-strings (e.g. content parts) add nothing.
func (c *chunk) text(dst *[]byte) bool {
	s := &c.s
	if s.Peek() != '"' {
		return s.Skip()
	}
	body, plain, ok := s.String()
	if plain {
		*dst = append(*dst, body...)
	} else {
		*dst = jsonlex.AppendUnescaped(*dst, body)
	}
	return ok
}

func (c *chunk) decodeUsage() bool {
	s := &c.s
	var u results.Usage
	ok := s.Object(func(key []byte) bool {
		switch string(key) {
		case "prompt_tokens":
			return c.count(&u.PromptTokens, "prompt_tokens")
		case "completion_tokens":
			return c.count(&u.CompletionTokens, "completion_tokens")
		case "total_tokens":
			return c.count(&u.TotalTokens, "total_tokens")
		case "completion_tokens_details":
			return s.Peek() != '{' && s.Skip() || s.Object(func(k []byte) bool {
				if string(k) == "reasoning_tokens" {
					return c.count(&u.ReasoningTokens, "completion_tokens_details.reasoning_tokens")
				}
				return s.Skip()
			})
		}
		return s.Skip()
	})
	if ok && c.badUsage == "" && (u.PromptTokens > 0 || u.CompletionTokens > 0 || u.TotalTokens > 0) {
		c.usage, c.hasUsage = u, true
	}
	return ok
}

// maxCount bounds a count read from a response.
const maxCount = 1 << 40

// count reads a non-negative whole count; null is 0, and a count beyond
// maxCount saturates. Anything else (a negative number, a fraction, a
// string) makes the usage object invalid, said in badUsage.
func (c *chunk) count(dst *int, name string) bool {
	s := &c.s
	start := s.Pos()
	if s.Null() {
		return true
	}
	if p := s.Peek(); p != '-' && p-'0' > 9 {
		ok := s.Skip()
		c.invalidCount(name, s.From(start))
		return ok
	}
	if v, ok := s.Float(); ok {
		if v < 0 || v != math.Trunc(v) {
			c.invalidCount(name, s.From(start))
		}
		*dst = int(min(max(v, 0), maxCount))
		return true
	}
	s.SetPos(start)
	tok, ok := s.Number() // beyond float64's range
	if ok && tok[0] != '-' {
		*dst = maxCount
	} else if ok {
		c.invalidCount(name, tok)
	}
	return ok
}

// invalidCount notes the first invalid count of the usage object.
func (c *chunk) invalidCount(name string, raw []byte) {
	if c.badUsage == "" {
		c.badUsage = "usage." + name + " is " + clip(bytes.TrimSpace(raw), 40) + ", not a whole number of tokens"
	}
}

// decodeError reads an OpenAI error member: an object with a message, or a
// bare string.
func (c *chunk) decodeError() bool {
	s := &c.s
	switch s.Peek() {
	case '"':
		return c.text(&c.errMsg)
	case '{':
		return s.Object(func(key []byte) bool {
			if string(key) == "message" {
				return c.text(&c.errMsg)
			}
			return s.Skip()
		})
	}
	return s.Skip()
}

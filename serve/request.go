package serve

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/simbench/simbench/tokenizer"
)

// apiRequest is what serve reads of a /v1/chat/completions or
// /v1/completions body. Other fields (sampling parameters and the like) are
// accepted and have no effect: the simulator models timing, not text.
type apiRequest struct {
	Model               string          `json:"model"`
	Messages            []chatMessage   `json:"messages"`
	Prompt              json.RawMessage `json:"prompt"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	Stream              bool            `json:"stream"`
	StreamOptions       *streamOptions  `json:"stream_options"`
	// IgnoreEOS is accepted: the simulated engine has no end-of-sequence
	// token and always generates max_tokens, as with ignore_eos true.
	IgnoreEOS bool `json:"ignore_eos"`
}

type streamOptions struct {
	IncludeUsage         bool `json:"include_usage"`
	ContinuousUsageStats bool `json:"continuous_usage_stats"`
}

type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// contentPart is one part of a message's content given as a list.
type contentPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// parsed is a request as the simulator takes it.
type parsed struct {
	chat      bool
	model     string
	isl       int // prompt tokens: token ids, or the word-count rule on the text
	osl       int // tokens to generate
	stream    bool
	usage     bool // a usage chunk at the end of the stream
	usageEach bool // usage on every content chunk
}

// parseRequest reads body; chat says which endpoint it came to. Its errors
// name the field at fault.
func parseRequest(body []byte, chat bool) (parsed, error) {
	var r apiRequest
	if err := json.Unmarshal(body, &r); err != nil {
		return parsed{}, fmt.Errorf("request body: %w", err)
	}
	p := parsed{chat: chat, model: r.Model, stream: r.Stream}
	if so := r.StreamOptions; so != nil {
		if !r.Stream {
			return parsed{}, errors.New("stream_options: only with stream true")
		}
		p.usage, p.usageEach = so.IncludeUsage, so.ContinuousUsageStats
	}
	var err error
	if p.osl, err = maxTokens(r, chat); err != nil {
		return parsed{}, err
	}
	if chat {
		p.isl, err = chatTokens(r.Messages)
	} else {
		p.isl, err = promptTokens(r.Prompt)
	}
	if err != nil {
		return parsed{}, err
	}
	return p, nil
}

// maxTokens is the output length asked for: max_completion_tokens (chat)
// or max_tokens. The simulator generates exactly that many tokens, so it
// is required.
func maxTokens(r apiRequest, chat bool) (int, error) {
	key, n := "max_tokens", r.MaxTokens
	if chat && r.MaxCompletionTokens != nil {
		key, n = "max_completion_tokens", r.MaxCompletionTokens
	}
	switch {
	case n == nil:
		return 0, errors.New("max_tokens: required (the simulated engine generates exactly max_tokens tokens)")
	case *n <= 0:
		return 0, fmt.Errorf("%s: %d, want > 0", key, *n)
	}
	return *n, nil
}

// promptTokens counts a completion prompt: a text by the word-count rule
// (tokenizer.Approx), or a list of token ids.
func promptTokens(raw json.RawMessage) (int, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, errors.New("prompt: required")
	}
	var text string
	if err := json.Unmarshal(raw, &text); err == nil {
		if text == "" {
			return 0, errors.New("prompt: empty")
		}
		return tokenizer.Approx([]byte(text)), nil
	}
	var ids []int64
	if err := json.Unmarshal(raw, &ids); err != nil {
		return 0, errors.New("prompt: want a string or a list of token ids (one prompt a request)")
	}
	if len(ids) == 0 {
		return 0, errors.New("prompt: empty list of token ids")
	}
	return len(ids), nil
}

// chatTokens counts the messages' text by the word-count rule; the chat
// template's tokens are the simulator's frontend.template_tokens.
func chatTokens(msgs []chatMessage) (int, error) {
	if len(msgs) == 0 {
		return 0, errors.New("messages: required")
	}
	n := 0
	for i, m := range msgs {
		text, err := messageText(m.Content)
		if err != nil {
			return 0, fmt.Errorf("messages[%d].content: %w", i, err)
		}
		n += tokenizer.Approx(text)
	}
	if n == 0 {
		return 0, errors.New("messages: no text")
	}
	return n, nil
}

// messageText is a message's content: a string, or the text of its parts.
func messageText(raw json.RawMessage) ([]byte, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return []byte(s), nil
	}
	var parts []contentPart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return nil, errors.New("want a string or a list of parts")
	}
	var text []byte
	for j, p := range parts {
		if p.Type != "text" {
			return nil, fmt.Errorf("part %d: type %q, only text is simulated", j, p.Type)
		}
		text = append(text, p.Text...)
	}
	return text, nil
}

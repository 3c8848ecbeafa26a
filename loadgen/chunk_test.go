package loadgen

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/simbench/simbench/results"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestChunkDecode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name               string
		in                 string
		content, reasoning string
		usage              *results.Usage
		errMsg             string
		isErr              bool
	}{
		{name: "chat delta", in: `{"id":"x","choices":[{"index":0,"delta":{"content":"Hi \"you\"\n\u00e9\ud83d\ude00"},"finish_reason":null}]}`,
			content: "Hi \"you\"\né😀"},
		{name: "role-only first chunk", in: `{"choices":[{"delta":{"role":"assistant","content":""}}]}`},
		{name: "ollama repeats the role", in: `{"choices":[{"delta":{"role":"assistant","content":" tok"}}]}`, content: " tok"},
		{name: "usage-only chunk", in: `{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":5,"total_tokens":17,"completion_tokens_details":{"reasoning_tokens":2}}}`,
			usage: &results.Usage{PromptTokens: 12, CompletionTokens: 5, TotalTokens: 17, ReasoningTokens: 2}},
		{name: "ollama zero usage is ignored", in: `{"choices":[{"text":"a"}],"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}}`, content: "a"},
		{name: "completions text", in: `{"choices":[{"text":" world","index":0}]}`, content: " world"},
		{name: "null content", in: `{"choices":[{"delta":{"content":null,"reasoning_content":null}}],"usage":null}`},
		{name: "reasoning_content", in: `{"choices":[{"delta":{"reasoning_content":"think"}}]}`, reasoning: "think"},
		{name: "reasoning (newer vLLM)", in: `{"choices":[{"delta":{"reasoning":"hmm"}}]}`, reasoning: "hmm"},
		{name: "both reasoning fields: reasoning_content wins", in: `{"choices":[{"delta":{"reasoning":"a","reasoning_content":"b"}}]}`, reasoning: "b"},
		{name: "non-streaming message", in: `{"choices":[{"message":{"role":"assistant","content":"done"}}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`,
			content: "done", usage: &results.Usage{PromptTokens: 3, CompletionTokens: 1, TotalTokens: 4}},
		{name: "second choice ignored", in: `{"choices":[{"delta":{"content":"a"}},{"delta":{"content":"b"}}]}`, content: "a"},
		{name: "error object", in: `{"error":{"message":"boom","type":"server_error","code":500}}`, isErr: true, errMsg: "boom"},
		{name: "error string", in: `{"error":"bad"}`, isErr: true, errMsg: "bad"},
		{name: "error null is no error", in: `{"error":null,"choices":[{"text":"a"}]}`, content: "a"},
		{name: "odd types are skipped", in: `{"choices":{"a":1},"usage":"x"}`},
		{name: "invalid UTF-8 is replaced as encoding/json does", in: "{\"choices\":[{\"text\":\"a\xff\xfeb\\ud800\"}]}", content: "a\uFFFD\uFFFDb\uFFFD"},
		{name: "counts: exponents, null, saturation", in: `{"usage":{"prompt_tokens":1e3,"completion_tokens":2,"total_tokens":1e400,"completion_tokens_details":{"reasoning_tokens":null}}}`,
			usage: &results.Usage{PromptTokens: 1000, CompletionTokens: 2, TotalTokens: maxCount}},
		{name: "content parts are not text", in: `{"choices":[{"delta":{"content":[{"type":"text","text":"x"}]}}]}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var c chunk
			require.True(t, c.decode([]byte(tc.in)))
			assert.Equal(t, tc.content, string(c.content))
			assert.Equal(t, tc.reasoning, string(c.reasoning))
			assert.Equal(t, tc.isErr, c.hasError)
			assert.Equal(t, tc.errMsg, string(c.errMsg))
			if tc.usage == nil {
				assert.False(t, c.hasUsage)
			} else {
				assert.True(t, c.hasUsage)
				assert.Equal(t, *tc.usage, c.usage)
			}
		})
	}
}

func TestChunkDecodeRejectsInvalidJSON(t *testing.T) {
	t.Parallel()
	for _, in := range []string{``, `{`, `{"choices":[{"delta":{"content":"x"}}]`, `{"a":1}}`, `[1]`, `"s"`,
		`{"a":01}`, `{"a":1.}`, `{"a":"\x"}`, "{\"a\":\"\x01\"}", `{"a" 1}`, `{"a":tru}`, `{"a":1,}`} {
		var c chunk
		assert.False(t, c.decode([]byte(in)), in)
	}
}

func TestChunkDecodeAllocatesNothingWhenWarm(t *testing.T) {
	var c chunk
	in := []byte(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":" token"},"logprobs":null,"finish_reason":null}],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`)
	require.True(t, c.decode(in))
	assert.Zero(t, testing.AllocsPerRun(100, func() { c.decode(in) }))
}

// FuzzChunk: the decoder accepts exactly the JSON objects encoding/json
// accepts, and decodes the same content.
func FuzzChunk(f *testing.F) {
	for _, s := range []string{`{"choices":[{"delta":{"content":"a\u00e9"}}]}`, `{"usage":{"prompt_tokens":1e3}}`,
		`{"error":{"message":"x"}}`, `{"a":[1,-2.5e-3,true,false,null,{"b":"c"}]}`, `{"choices":[{"text":"\ud800"}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var c chunk
		ok := c.decode(in)
		valid := json.Valid(in) && bytes.HasPrefix(bytes.TrimLeft(in, " \t\r\n"), []byte("{"))
		require.Equal(t, valid, ok, "%q", in)
		if !ok {
			return
		}
		var v struct {
			Choices []struct {
				Delta struct{ Content any } `json:"delta"`
				Text  any                   `json:"text"`
			} `json:"choices"`
		}
		if json.Unmarshal(in, &v) != nil || len(v.Choices) == 0 {
			return
		}
		if s, isStr := v.Choices[0].Delta.Content.(string); isStr && v.Choices[0].Text == nil {
			assert.Equal(t, s, string(c.content))
		}
	})
}

// TestChunkDecodeSaysWhatIsWrongWithUsage: a negative, fractional or
// string count was read as 0 or cut, and the run then said "the server
// reported no usage"; the usage object is now invalid, and says why.
func TestChunkDecodeSaysWhatIsWrongWithUsage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ usage, want string }{
		{`{"prompt_tokens":5,"completion_tokens":-1,"total_tokens":4}`, "usage.completion_tokens is -1, not a whole number of tokens"},
		{`{"prompt_tokens":"5","completion_tokens":3,"total_tokens":8}`, `usage.prompt_tokens is "5", not a whole number of tokens`},
		{`{"prompt_tokens":5,"completion_tokens":3.5,"total_tokens":8.5}`, "usage.completion_tokens is 3.5, not a whole number of tokens"},
		{`{"prompt_tokens":5,"completion_tokens":3,"completion_tokens_details":{"reasoning_tokens":-1e400}}`,
			"usage.completion_tokens_details.reasoning_tokens is -1e400, not a whole number of tokens"},
		{`{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8}`, ""},
	} {
		var c chunk
		require.True(t, c.decode([]byte(`{"choices":[],"usage":`+tc.usage+`}`)), tc.usage)
		assert.Equal(t, tc.want, c.badUsage, tc.usage)
		assert.Equal(t, tc.want == "", c.hasUsage, tc.usage)
	}
}

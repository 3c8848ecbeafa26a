package loadgen

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/traces"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPromptsSameHashIDSameBlock(t *testing.T) {
	t.Parallel()
	p := Prompts{BlockSize: 4, Seed: 7}
	a := &traces.Request{Row: 0, InputLength: 10, HashIDs: []int64{1, 2, 3}}
	b := &traces.Request{Row: 1, InputLength: 9, HashIDs: []int64{1, 2, 9}}
	ta, tb := strings.Fields(string(p.AppendText(nil, a))), strings.Fields(string(p.AppendText(nil, b)))
	require.Len(t, ta, 10, "one word per token")
	require.Len(t, tb, 9)
	assert.Equal(t, ta[:8], tb[:8], "shared hash ids, identical prefix")
	assert.NotEqual(t, ta[8:], tb[8:9])
	assert.Equal(t, string(p.AppendText(nil, a)), string(p.AppendText(nil, a)), "deterministic")
	assert.False(t, strings.HasPrefix(string(p.AppendText(nil, a)), " "))

	// A partial block is a prefix of the same hash id's full block.
	c := &traces.Request{Row: 2, InputLength: 6, HashIDs: []int64{1, 2}}
	assert.Equal(t, ta[:6], strings.Fields(string(p.AppendText(nil, c))))

	other := Prompts{BlockSize: 4, Seed: 8}
	assert.NotEqual(t, string(p.AppendText(nil, a)), string(other.AppendText(nil, a)), "--seed changes prompts")
}

func TestPromptsTokenIDs(t *testing.T) {
	t.Parallel()
	p := Prompts{TokenIDs: true, VocabSize: 150, BlockSize: 512, Seed: 1}
	r := &traces.Request{Row: 0, InputLength: 700, HashIDs: []int64{5, 6}}
	var ids []int
	require.NoError(t, json.Unmarshal(p.AppendTokenIDs(nil, r), &ids))
	require.Len(t, ids, 700)
	for _, id := range ids {
		assert.True(t, id >= 100 && id < 150, id)
	}
	r2 := &traces.Request{Row: 1, InputLength: 512, HashIDs: []int64{5}}
	var ids2 []int
	require.NoError(t, json.Unmarshal(p.AppendTokenIDs(nil, r2), &ids2))
	assert.Equal(t, ids[:512], ids2)

	// No hash ids: a block of the request's own.
	r3 := &traces.Request{Row: 3, InputLength: 5}
	r4 := &traces.Request{Row: 4, InputLength: 5}
	assert.NotEqual(t, p.AppendTokenIDs(nil, r3), p.AppendTokenIDs(nil, r4))
	assert.Equal(t, "[]", string(p.AppendTokenIDs(nil, &traces.Request{})))
}

func TestPromptsValidate(t *testing.T) {
	t.Parallel()
	require.Error(t, Prompts{}.Validate())
	require.Error(t, Prompts{BlockSize: 1, TokenIDs: true, VocabSize: 100}.Validate())
	require.NoError(t, Prompts{BlockSize: 1, TokenIDs: true, VocabSize: 32000}.Validate())
	assert.Equal(t, 4, Prompts{}.Tokens(&traces.Request{TextInput: "Hello there, you", InputLength: 99}))
	assert.Equal(t, 99, Prompts{}.Tokens(&traces.Request{InputLength: 99}))
}

func TestBodyShapes(t *testing.T) {
	t.Parallel()
	r := &traces.Request{InputLength: 3, OutputLength: 7, TextInput: "say \"hi\"\n"}
	ep := func(mod func(*Endpoint)) string {
		e := Endpoint{Type: EndpointChat, Model: "m", Streaming: true, Prompts: Prompts{BlockSize: 512}}
		mod(&e)
		return string(newBody(&e).build(r))
	}
	assert.Equal(t, `{"messages":[{"role":"user","name":"text","content":"say \"hi\"\n"}],"model":"m","stream":true,"max_completion_tokens":7}`,
		ep(func(*Endpoint) {}))
	assert.Equal(t, `{"messages":[{"role":"user","name":"text","content":"say \"hi\"\n"}],"model":"m","stream":true,"max_tokens":7}`,
		ep(func(e *Endpoint) { e.LegacyMaxTokens = true }))
	assert.Equal(t, `{"prompt":"say \"hi\"\n","model":"m","stream":false,"max_tokens":7}`,
		ep(func(e *Endpoint) { e.Type, e.Streaming = EndpointCompletions, false }))
	extra := func(s string) Extra { x, err := ParseExtra(s); require.NoError(t, err); return x }
	assert.Equal(t, `{"messages":[{"role":"user","name":"text","content":"say \"hi\"\n"}],"model":"m","stream":true,"max_completion_tokens":200,"stream_options":{"include_usage":true},"ignore_eos":true,"note":"a b"}`,
		ep(func(e *Endpoint) {
			e.ServerTokenCount = true
			e.Extra = []Extra{extra("ignore_eos:true"), extra("max_completion_tokens:200"), extra("note:a b")}
		}))
	rNoOSL := &traces.Request{InputLength: 2, HashIDs: []int64{1}}
	e := Endpoint{Type: EndpointCompletions, Model: "m", Streaming: true, Prompts: Prompts{TokenIDs: true, VocabSize: 1000, BlockSize: 512}}
	var v map[string]any
	require.NoError(t, json.Unmarshal(newBody(&e).build(rNoOSL), &v))
	assert.Len(t, v["prompt"], 2)
	assert.NotContains(t, v, "max_tokens", "no OSL: the server's default")
}

func TestParseExtra(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"ignore_eos:true": "true", "min_tokens:200": "200", "temperature:0.5": "0.5",
		"stop:END": `"END"`, `obj:{"a":1}`: `{"a":1}`, "url:http://x:1": `"http://x:1"`} {
		x, err := ParseExtra(in)
		require.NoError(t, err, in)
		assert.JSONEq(t, want, string(x.Value), in)
	}
	for _, bad := range []string{"novalue", ":x"} {
		_, err := ParseExtra(bad)
		assert.Error(t, err, bad)
	}
}

func TestRequestURL(t *testing.T) {
	t.Parallel()
	check := func(url, path, typ, want string) {
		t.Helper()
		got, err := (&Endpoint{URL: url, Path: path, Type: typ}).RequestURL()
		require.NoError(t, err)
		assert.Equal(t, want, got)
	}
	check("localhost:8000", "", EndpointChat, "http://localhost:8000/v1/chat/completions")
	check("https://h/", "", EndpointCompletions, "https://h/v1/completions")
	check("http://h:1/prefix", "v2/generate", EndpointChat, "http://h:1/prefix/v2/generate")
	for _, bad := range []string{"", "ftp://x", "http://"} {
		_, err := (&Endpoint{URL: bad}).RequestURL()
		assert.Error(t, err, bad)
	}
}

func TestSpreadTokens(t *testing.T) {
	t.Parallel()
	mk := func(n ...int) []results.Chunk {
		out := make([]results.Chunk, len(n))
		for i, v := range n {
			out[i].Tokens = v
		}
		return out
	}
	tokens := func(cs []results.Chunk) (out []int) {
		for _, c := range cs {
			out = append(out, c.Tokens)
		}
		return out
	}
	c := mk(1, 1, 1)
	spreadTokens(c, 3)
	assert.Equal(t, []int{1, 1, 1}, tokens(c))
	c = mk(1, 3, 1)
	spreadTokens(c, 7)
	assert.Equal(t, []int{1, 5, 1}, tokens(c))
	c = mk(1, 1, 1, 1)
	spreadTokens(c, 6)
	assert.Equal(t, []int{1, 2, 1, 2}, tokens(c))
	c = mk(2, 2)
	spreadTokens(c, 1) // the server says fewer tokens than chunks: one each
	assert.Equal(t, []int{1, 1}, tokens(c))
}

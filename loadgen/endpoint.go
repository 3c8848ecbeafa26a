package loadgen

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/net/http/httpguts"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/traces"
)

// Endpoint types (AIPerf's --endpoint-type).
const (
	EndpointChat        = "chat"
	EndpointCompletions = "completions"
)

// Endpoint is the server and how each request is shaped.
type Endpoint struct {
	URL  string // base URL; the scheme is optional (http:// is assumed)
	Path string // request path; "" = the type's default (/v1/chat/completions, /v1/completions)
	Type string // EndpointChat or EndpointCompletions
	// Model is sent as "model".
	Model string
	// APIKey is sent as "Authorization: Bearer <key>" and never written
	// anywhere: error messages containing it are redacted.
	APIKey    string
	Streaming bool
	// LegacyMaxTokens sends max_tokens instead of max_completion_tokens on
	// chat (AIPerf's --use-legacy-max-tokens; needed by servers that ignore
	// max_completion_tokens, such as Ollama).
	LegacyMaxTokens bool
	// ServerTokenCount asks for stream_options.include_usage and takes
	// token counts from usage (AIPerf's --use-server-token-count).
	ServerTokenCount bool
	// PerChunkUsage also asks for usage on every chunk
	// (stream_options.continuous_usage_stats, a vLLM/SGLang/TRT-LLM
	// extension; AIPerf's --per-chunk-usage): chunk token counts are then
	// the usage deltas. Needs ServerTokenCount and Streaming.
	PerChunkUsage bool
	// Extra members are merged into every body last (AIPerf's
	// --extra-inputs), replacing members of the same name.
	Extra []Extra
	// Headers are sent on every request after simbench's own (AIPerf's
	// -H/--header); a credential's value is never written anywhere (see
	// Credential).
	Headers []Header
	Timeout time.Duration // per request; 0 = none
	Prompts Prompts
}

// Extra is one --extra-inputs member: a key and its JSON value.
type Extra struct {
	Key   string
	Value json.RawMessage
}

// ParseExtra parses AIPerf's "key:value" syntax. The value is JSON when it
// parses as JSON (true, 200, 0.5, "s", {"a":1}), else a string.
func ParseExtra(s string) (Extra, error) {
	key, val, ok := strings.Cut(s, ":")
	key = strings.TrimSpace(key)
	if !ok || key == "" {
		return Extra{}, fmt.Errorf("--extra-inputs %q: want key:value", s)
	}
	val = strings.TrimSpace(val)
	if json.Valid([]byte(val)) {
		return Extra{Key: key, Value: json.RawMessage(val)}, nil
	}
	b, _ := json.Marshal(val)
	return Extra{Key: key, Value: b}, nil
}

// RequestURL returns the full request URL: the base URL's path, then the
// endpoint path, then the base URL's query.
func (e *Endpoint) RequestURL() (string, error) {
	base := strings.TrimSpace(e.URL)
	if base == "" {
		return "", errors.New("--url is required")
	}
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	u, err := url.Parse(base)
	if err != nil || u.Hostname() == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", fmt.Errorf("--url %q: want [http[s]://]host[:port][/prefix]", results.RedactURL(e.URL))
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return "", fmt.Errorf("--url %q: port %s is not in 1..65535", results.RedactURL(e.URL), p)
		}
	}
	path := e.Path
	if path == "" {
		path = defaultPath(e.Type)
	}
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	// The path goes before a query (Azure-style ?api-version=…), which is kept.
	u.Path = strings.TrimRight(u.Path, "/") + path
	u.RawPath, u.Fragment, u.RawFragment = "", "", ""
	return u.String(), nil
}

func defaultPath(typ string) string {
	if typ == EndpointCompletions {
		return "/v1/completions"
	}
	return "/v1/chat/completions"
}

// Validate checks the endpoint settings.
func (e *Endpoint) Validate() error {
	var errs []error
	if e.Type != EndpointChat && e.Type != EndpointCompletions {
		errs = append(errs, fmt.Errorf("--endpoint-type must be chat or completions, got %q", e.Type))
	}
	if e.Model == "" {
		errs = append(errs, errors.New("--model is required"))
	}
	if e.PerChunkUsage && (!e.ServerTokenCount || !e.Streaming) {
		errs = append(errs, errors.New("--per-chunk-usage needs --use-server-token-count and --streaming"))
	}
	if e.Prompts.TokenIDs && e.Type != EndpointCompletions {
		errs = append(errs, errors.New("--prompt-token-ids needs --endpoint-type completions"))
	}
	if _, err := e.RequestURL(); err != nil {
		errs = append(errs, err)
	}
	if e.APIKey != "" && !httpguts.ValidHeaderFieldValue(e.APIKey) {
		errs = append(errs, errors.New("--api-key holds a control character (CR, LF, …): it cannot be sent in an HTTP header"))
	}
	errs = append(errs, e.validateHeaders()...)
	for _, x := range e.Extra {
		if by, ok := coreMembers[x.Key]; ok {
			errs = append(errs, fmt.Errorf("--extra-inputs %s: %q is set by %s and recorded in input_config; "+
				"an override would send what the run does not record", x.Key, x.Key, by))
		}
	}
	return errors.Join(append(errs, e.Prompts.Validate())...)
}

// coreMembers are the body members simbench sets from its own settings (and
// records in input_config), with what sets each.
var coreMembers = map[string]string{
	"model": "--model", "stream": "--streaming", "messages": "the workload", "prompt": "the workload",
	"stream_options": "--use-server-token-count and --per-chunk-usage",
}

// body builds request bodies. Member order follows AIPerf: the prompt
// (messages or prompt), model, stream, the max-tokens member, then
// stream_options and --extra-inputs; an extra input replaces a member of the
// same name in place.
type body struct {
	members []member
	prompts Prompts
	chat    bool
	ids     bool
	scratch []byte // prompt text before JSON quoting
}

type member struct {
	key string
	raw []byte // fixed JSON value; nil for the per-request ones below
	dyn int
}

const (
	dynNone = iota
	dynPrompt
	dynMaxTokens
)

func newBody(e *Endpoint) *body {
	b := &body{prompts: e.Prompts, chat: e.Type == EndpointChat, ids: e.Prompts.TokenIDs}
	model, _ := json.Marshal(e.Model)
	promptKey, maxKey := "prompt", "max_tokens"
	if b.chat {
		promptKey = "messages"
		if !e.LegacyMaxTokens {
			maxKey = "max_completion_tokens"
		}
	}
	b.members = []member{{key: promptKey, dyn: dynPrompt}, {key: "model", raw: model},
		{key: "stream", raw: []byte(strconv.FormatBool(e.Streaming))}, {key: maxKey, dyn: dynMaxTokens}}
	if e.ServerTokenCount && e.Streaming {
		opts := `{"include_usage":true}`
		if e.PerChunkUsage {
			opts = `{"include_usage":true,"continuous_usage_stats":true}`
		}
		b.members = append(b.members, member{key: "stream_options", raw: []byte(opts)})
	}
	for _, x := range e.Extra {
		b.set(x.Key, x.Value)
	}
	return b
}

func (b *body) set(key string, raw []byte) {
	for i := range b.members {
		if b.members[i].key == key {
			b.members[i] = member{key: key, raw: raw}
			return
		}
	}
	b.members = append(b.members, member{key: key, raw: raw})
}

// build returns the JSON body for r (a new slice: it lives until the
// request is sent).
func (b *body) build(r *traces.Request) []byte {
	out := make([]byte, 0, 64+r.InputLength*8)
	out = append(out, '{')
	for _, m := range b.members {
		if m.dyn == dynMaxTokens && r.OutputLength <= 0 {
			continue
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = appendJSONString(out, m.key)
		out = append(out, ':')
		switch m.dyn {
		case dynPrompt:
			out = b.appendPrompt(out, r)
		case dynMaxTokens:
			out = strconv.AppendInt(out, int64(r.OutputLength), 10)
		default:
			out = append(out, m.raw...)
		}
	}
	return append(out, '}')
}

func (b *body) appendPrompt(out []byte, r *traces.Request) []byte {
	if b.ids && r.TextInput == "" {
		return b.prompts.AppendTokenIDs(out, r)
	}
	b.scratch = b.prompts.AppendText(b.scratch[:0], r)
	if !b.chat {
		return appendJSONString(out, string(b.scratch))
	}
	out = append(out, `[{"role":"user","name":"text","content":`...)
	out = appendJSONString(out, string(b.scratch))
	return append(out, "}]"...)
}

// appendJSONString appends s as a JSON string (invalid UTF-8 becomes U+FFFD).
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			dst = append(dst, c)
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			dst = utf8.AppendRune(dst, r)
			i += size
			continue
		}
		dst = appendControl(dst, c)
		i++
	}
	return append(dst, '"')
}

func appendControl(dst []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(dst, '\\', c)
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	}
	const hexDigits = "0123456789abcdef"
	return append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
}

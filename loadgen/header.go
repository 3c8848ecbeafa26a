package loadgen

import (
	"fmt"
	"net/http"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// Header is one extra HTTP header sent on every request (AIPerf's
// -H/--header "Name:Value").
type Header struct {
	Name, Value string
}

// ParseHeader parses AIPerf's "Name:Value" syntax (spaces around either
// part are dropped).
func ParseHeader(s string) (Header, error) {
	name, value, ok := strings.Cut(s, ":")
	h := Header{Name: strings.TrimSpace(name), Value: strings.TrimSpace(value)}
	switch {
	case !ok || h.Name == "":
		return Header{}, fmt.Errorf("--header %q: want Name:Value", Redacted(h, s))
	case !httpguts.ValidHeaderFieldName(h.Name):
		return Header{}, fmt.Errorf("--header %q: %q is not a header name", Redacted(h, s), h.Name)
	case !httpguts.ValidHeaderFieldValue(h.Value):
		return Header{}, fmt.Errorf("--header %s: the value holds a control character (CR, LF, …): it cannot be sent", h.Name)
	}
	return h, nil
}

// ownHeaders are the headers simbench sets on every request, with what
// sets each: an --header may not replace them.
var ownHeaders = map[string]string{
	"Content-Type": "the request body (JSON)", "Content-Length": "the request body", "Accept": "--streaming",
	"X-Request-Id": "the record's id", "X-Correlation-Id": "the record's correlation id", "Host": "--url",
	"Transfer-Encoding": "the HTTP client",
}

// validateHeaders checks e.Headers against what simbench sets itself.
func (e *Endpoint) validateHeaders() []error {
	var errs []error
	for _, h := range e.Headers {
		name := http.CanonicalHeaderKey(h.Name)
		if by, ok := ownHeaders[name]; ok {
			errs = append(errs, fmt.Errorf("--header %s: set by %s, not replaceable", h.Name, by))
		}
		if name == "Authorization" && e.APIKey != "" {
			errs = append(errs, fmt.Errorf("--header Authorization and --api-key (or $SIMBENCH_API_KEY) both set the Authorization header: give one"))
		}
	}
	return errs
}

// header is e.Headers as an http.Header, each name's values in order.
func (e *Endpoint) header() http.Header {
	h := http.Header{}
	for _, x := range e.Headers {
		h.Add(x.Name, x.Value)
	}
	return h
}

// Credential reports whether h looks like a credential: an authentication
// or cookie header, a name that speaks of a key, token, secret or password,
// or a value in an authorization scheme. Such a value is never written to a
// file or a log (see Redacted).
func Credential(h Header) bool {
	name := strings.ToLower(h.Name)
	for _, w := range []string{"auth", "cookie", "key", "token", "secret", "passw", "session", "credential", "signature"} {
		if strings.Contains(name, w) {
			return true
		}
	}
	value := strings.ToLower(h.Value)
	for _, scheme := range []string{"bearer ", "basic ", "digest ", "token "} {
		if strings.HasPrefix(value, scheme) {
			return true
		}
	}
	return false
}

// Redacted is s with h's value replaced by "[redacted]" when h is a
// credential.
func Redacted(h Header, s string) string {
	if h.Value == "" || !Credential(h) {
		return s
	}
	return strings.ReplaceAll(s, h.Value, "[redacted]")
}

// RecordedHeaders are e.Headers as input_config records them ([name,
// value] pairs, AIPerf's input.headers), credentials' values redacted.
func (e *Endpoint) RecordedHeaders() [][2]string {
	out := make([][2]string, 0, len(e.Headers))
	for _, h := range e.Headers {
		v := h.Value
		if Credential(h) {
			v = "[redacted]"
		}
		out = append(out, [2]string{h.Name, v})
	}
	return out
}

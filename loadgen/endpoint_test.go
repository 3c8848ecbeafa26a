package loadgen

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestEndpointRefusesBadPorts: --url 127.0.0.1:99999 ran, every request an
// error; it is a usage error now.
func TestEndpointRefusesBadPorts(t *testing.T) {
	for _, u := range []string{"127.0.0.1:99999", "http://127.0.0.1:0", "localhost:65536/v1", "http://:8000"} {
		ep := chatEndpoint(u)
		assert.Error(t, ep.Validate(), u)
	}
	for _, u := range []string{"127.0.0.1:65535", "https://h/prefix", "[::1]:8000"} {
		ep := chatEndpoint(u)
		assert.NoError(t, ep.Validate(), u)
	}
	ep := chatEndpoint("127.0.0.1:99999")
	assert.EqualError(t, ep.Validate(), `--url "127.0.0.1:99999": port 99999 is not in 1..65535`)
}

// TestRequestURLKeepsQuery: an Azure-style --url with ?api-version=… got the
// endpoint path appended after the query; the path goes before it now.
func TestRequestURLKeepsQuery(t *testing.T) {
	for _, tc := range []struct{ url, path, want string }{
		{"https://h/openai/deployments/d?api-version=2024-02-01", "",
			"https://h/openai/deployments/d/v1/chat/completions?api-version=2024-02-01"},
		{"h:8000/?api-version=1", "/chat/completions", "http://h:8000/chat/completions?api-version=1"},
		{"h:8000?a=1&b=2", "", "http://h:8000/v1/chat/completions?a=1&b=2"},
		{"http://h:8000/prefix/", "", "http://h:8000/prefix/v1/chat/completions"},
	} {
		ep := chatEndpoint(tc.url)
		ep.Path = tc.path
		got, err := ep.RequestURL()
		assert.NoError(t, err, tc.url)
		assert.Equal(t, tc.want, got, tc.url)
	}
}

// TestEndpointRefusesWhatItCannotSendOrRecord: an API key with CR/LF failed
// every request at send time; --extra-inputs model:other or stream:false
// sent a body that input_config (model m, streaming true) misstated.
func TestEndpointRefusesWhatItCannotSendOrRecord(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Endpoint)
		err  string
	}{
		{"CRLF key", func(e *Endpoint) { e.APIKey = "sk\r\nX-Injected: 1" }, "--api-key holds a control character"},
		{"LF key", func(e *Endpoint) { e.APIKey = "sk\n" }, "--api-key holds a control character"},
		{"model", func(e *Endpoint) { e.Extra = []Extra{{Key: "model", Value: []byte(`"other"`)}} },
			`--extra-inputs model: "model" is set by --model and recorded in input_config`},
		{"stream", func(e *Endpoint) { e.Extra = []Extra{{Key: "stream", Value: []byte(`false`)}} },
			`--extra-inputs stream: "stream" is set by --streaming`},
		{"messages", func(e *Endpoint) { e.Extra = []Extra{{Key: "messages", Value: []byte(`[]`)}} },
			`"messages" is set by the workload`},
		{"stream_options", func(e *Endpoint) { e.Extra = []Extra{{Key: "stream_options", Value: []byte(`{}`)}} },
			`"stream_options" is set by --use-server-token-count`},
		{"ignore_eos", func(e *Endpoint) { e.Extra = []Extra{{Key: "ignore_eos", Value: []byte(`true`)}} }, ""},
		{"plain key", func(e *Endpoint) { e.APIKey = "sk-abc_123.+/=" }, ""},
	}
	for _, tc := range tests {
		ep := chatEndpoint("127.0.0.1:8000")
		tc.edit(&ep)
		if tc.err == "" {
			assert.NoError(t, ep.Validate(), tc.name)
			continue
		}
		assert.ErrorContains(t, ep.Validate(), tc.err, tc.name)
	}
}

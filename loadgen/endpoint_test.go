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

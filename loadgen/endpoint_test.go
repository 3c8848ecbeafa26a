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

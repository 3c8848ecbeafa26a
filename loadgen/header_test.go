package loadgen

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/traces"
)

func TestParseHeader(t *testing.T) {
	tests := []struct {
		in   string
		want Header
		err  string
	}{
		{"X-Tenant: a, b", Header{"X-Tenant", "a, b"}, ""},
		{"Authorization:Bearer sk-1", Header{"Authorization", "Bearer sk-1"}, ""},
		{"X-Empty:", Header{"X-Empty", ""}, ""},
		{"no colon", Header{}, `--header "no colon": want Name:Value`},
		{"Bad Name: v", Header{}, `--header "Bad Name: v": "Bad Name" is not a header name`},
		{"X-Token: \x01", Header{}, "--header X-Token: the value holds a control character"},
		{"X Token: sk-9", Header{}, `--header "X Token: [redacted]": "X Token" is not a header name`},
	}
	for _, tt := range tests {
		got, err := ParseHeader(tt.in)
		if tt.err != "" {
			assert.ErrorContains(t, err, tt.err, tt.in)
			continue
		}
		require.NoError(t, err, tt.in)
		assert.Equal(t, tt.want, got, tt.in)
	}
}

func TestCredentialHeaders(t *testing.T) {
	for _, h := range []Header{{"Authorization", "x"}, {"X-Api-Key", "x"}, {"Cookie", "a=b"}, {"X-Auth-Token", "x"},
		{"X-Secret", "x"}, {"Proxy-Authorization", "x"}, {"X-Whatever", "Bearer abc"}, {"X-Whatever", "basic Zm9v"}} {
		assert.True(t, Credential(h), h)
	}
	for _, h := range []Header{{"X-Tenant", "team-a"}, {"User-Agent", "bench"}, {"X-Priority", "high"}} {
		assert.False(t, Credential(h), h)
	}
	ep := Endpoint{Headers: []Header{{"X-Tenant", "team-a"}, {"X-Api-Key", "k-123"}}}
	assert.Equal(t, [][2]string{{"X-Tenant", "team-a"}, {"X-Api-Key", "[redacted]"}}, ep.RecordedHeaders())
}

func TestHeadersThatSimbenchSetsAreRefused(t *testing.T) {
	ep := chatEndpoint("localhost:8000")
	ep.Headers = []Header{{"content-type", "text/plain"}, {"X-Request-ID", "mine"}, {"Authorization", "Bearer other"}}
	err := ep.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--header content-type: set by the request body (JSON), not replaceable")
	assert.Contains(t, err.Error(), "--header X-Request-ID: set by the record's id, not replaceable")
	assert.Contains(t, err.Error(), "--header Authorization and --api-key (or $SIMBENCH_API_KEY) both set the Authorization header")
	ep.APIKey, ep.Headers = "", []Header{{"Authorization", "Bearer other"}, {"User-Agent", "mine"}}
	assert.NoError(t, ep.Validate(), "without --api-key, -H Authorization is the way to authenticate; User-Agent may be replaced")
}

// TestClientSendsHeadersAndRedactsCredentials: every request carries the
// --header headers (a value with a comma whole, a name given twice with
// both values), and a server that echoes them into an error leaves no
// credential in the record.
func TestClientSendsHeadersAndRedactsCredentials(t *testing.T) {
	t.Parallel()
	var got http.Header
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		http.Error(w, "denied: "+r.Header.Get("X-Api-Key")+" "+r.Header.Get("User-Agent"), http.StatusForbidden)
	}))
	defer ts.Close()
	ep := chatEndpoint(ts.URL)
	ep.Headers = []Header{{"X-Tenant", "a, b"}, {"X-Api-Key", "k-0123456789"}, {"X-Route", "1"}, {"X-Route", "2"}, {"User-Agent", "mine"}}
	rec := doOne(t, ep, &traces.Request{InputLength: 5, OutputLength: 8})
	require.NotNil(t, rec.Error)
	assert.Equal(t, "a, b", got.Get("X-Tenant"))
	assert.Equal(t, []string{"1", "2"}, got.Values("X-Route"))
	assert.Equal(t, []string{"mine"}, got.Values("User-Agent"), "replaced, not added")
	assert.Equal(t, "Bearer "+testKey, got.Get("Authorization"), "the key still goes")
	assert.Equal(t, "req-1", got.Get("X-Request-ID"))
	assert.NotContains(t, rec.Error.Message, "k-0123456789")
	assert.Equal(t, "denied: [redacted] mine", rec.Error.Message)
}

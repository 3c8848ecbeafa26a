package loadgen

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// showBody is an excerpt of Ollama v0.17.4's /api/show for the tiny model.
const showBody = `{"details":{"format":"gguf","family":"llama","quantization_level":"F16"},
"model_info":{"general.architecture":"llama","general.parameter_count":16781824,"llama.attention.head_count":8,
"llama.attention.head_count_kv":4,"llama.block_count":4,"llama.embedding_length":512,"llama.feed_forward_length":1536,
"llama.vocab_size":4096,"tokenizer.ggml.tokens":null,"tokenizer.ggml.model":"llama"},
"parameters":"num_ctx                        4096\nnum_thread                     1"}`

func TestFetchModelInfo(t *testing.T) {
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/show" || r.Method != http.MethodPost {
			http.NotFound(w, r)
			return
		}
		got = r.Header.Get("Authorization")
		_, _ = w.Write([]byte(showBody))
	}))
	defer srv.Close()
	info, ok, err := FetchModelInfo(context.Background(), srv.Client(), &Endpoint{URL: srv.URL + "/v1", Model: "tiny", APIKey: "k"})
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, "Bearer k", got)
	assert.Equal(t, "llama", info.Architecture)
	assert.Equal(t, "F16", info.Quantization)
	assert.Equal(t, 1, info.NumThread)
	v, _ := info.Number("llama.block_count")
	assert.Equal(t, 4.0, v)

	// A server without /api/show (vLLM, SGLang) is not an error.
	plain := httptest.NewServer(http.NotFoundHandler())
	defer plain.Close()
	_, ok, err = FetchModelInfo(context.Background(), plain.Client(), &Endpoint{URL: plain.URL, Model: "m"})
	assert.NoError(t, err)
	assert.False(t, ok)
}

func TestNumThread(t *testing.T) {
	for _, tc := range []struct {
		params, err string
		want        int
	}{
		{"", "", 0},
		{"num_ctx                        4096", "", 0},
		{"stop                           \"<|im_end|>\"\nnum_thread                     8", "", 8},
		{"num_thread                     many", `num_thread "many": want a count of threads`, 0},
		{"num_thread                     -2", `num_thread "-2"`, 0},
	} {
		n, err := numThread(tc.params)
		if tc.err != "" {
			assert.ErrorContains(t, err, tc.err, tc.params)
			continue
		}
		require.NoError(t, err, tc.params)
		assert.Equal(t, tc.want, n, tc.params)
	}
}

package results

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInputConfigReadsAIPerfExport(t *testing.T) {
	p, err := LoadProfileJSON(filepath.Join("..", "testdata", "aiperf", "qwen_concurrency1", ProfileJSONName))
	require.NoError(t, err)
	ic, err := ParseInputConfig(p.InputConfig)
	require.NoError(t, err)

	assert.Equal(t, []string{"Qwen/Qwen3-0.6B"}, ic.Endpoint.ModelNames)
	assert.Equal(t, "/v1/chat/completions", ic.Endpoint.CustomEndpoint)
	assert.Equal(t, 1, ic.Loadgen.Concurrency)
	assert.Equal(t, 64, ic.Loadgen.RequestCount)
	assert.Equal(t, 1, *ic.Loadgen.WarmupRequestCount)
	assert.Equal(t, int64(100), *ic.Input.RandomSeed)
	assert.Equal(t, TokenSpec{Mean: 100}, ic.Input.Prompt.InputTokens)
	assert.Equal(t, TokenSpec{Mean: 200}, ic.Input.Prompt.OutputTokens)
	assert.Equal(t, [][2]any{{"min_tokens", 200.0}, {"ignore_eos", true}}, ic.Input.Extra)
	assert.Contains(t, ic.Unknown, "cli_command")
	assert.Contains(t, ic.Unknown, "gpu_telemetry")
	assert.JSONEq(t, `"shuffle"`, string(ic.Input.Unknown["dataset_sampling_strategy"]))
	assert.Nil(t, ic.Workload)

	again, err := ic.Encode()
	require.NoError(t, err)
	assert.JSONEq(t, string(p.InputConfig), string(again), "every member AIPerf wrote, unknown ones too")
}

func TestInputConfigEncodesInKeyOrder(t *testing.T) {
	seed, warm, late := int64(3), 1, 2.5
	ic := InputConfig{
		Endpoint: &EndpointConfig{CustomEndpoint: "/v1/chat/completions", ModelNames: []string{"M"}, Streaming: true, Type: "chat", URL: "http://h"},
		Input:    &InputSection{Extra: [][2]any{}, File: "t.jsonl", RandomSeed: &seed},
		Loadgen:  &LoadgenConfig{RequestCount: 4, WarmupRequestCount: &warm},
		Output:   &OutputConfig{ArtifactDirectory: "out"},
		Sim:      json.RawMessage(`{"seed":3,"workers":1}`),
		Simbench: &SimbenchInfo{Host: "h", StartAt: "2026-01-01T00:00:00Z", StartLateMs: &late,
			Shard: &ShardInfo{Count: 2, Digest: "s", Index: 1, Requests: 2, Spec: "1/2"}},
		Sweep:    &SweepInfo{Index: 2, Params: map[string]any{"workers": 2}},
		Workload: &WorkloadInfo{BlockSize: 512, Digest: "d", Requests: 4, Source: "t.jsonl"},
		Unknown:  map[string]json.RawMessage{"cli_command": json.RawMessage(`"x"`)},
	}
	b, err := ic.Encode()
	require.NoError(t, err)
	assert.Equal(t, `{"cli_command":"x",`+
		`"endpoint":{"custom_endpoint":"/v1/chat/completions","model_names":["M"],"streaming":true,"type":"chat","url":"http://h"},`+
		`"input":{"extra":[],"file":"t.jsonl","random_seed":3},`+
		`"loadgen":{"request_count":4,"warmup_request_count":1},`+
		`"output":{"artifact_directory":"out"},`+
		`"sim":{"seed":3,"workers":1},`+
		`"simbench":{"host":"h","shard":{"count":2,"digest":"s","index":1,"requests":2,"spec":"1/2"},"start_at":"2026-01-01T00:00:00Z","start_late_ms":2.5},`+
		`"sweep":{"index":2,"params":{"workers":2}},`+
		`"workload":{"block_size":512,"concurrency":0,"digest":"d","requests":4,"source":"t.jsonl"}}`, string(b))

	back, err := ParseInputConfig(b)
	require.NoError(t, err)
	again, err := back.Encode()
	require.NoError(t, err)
	assert.Equal(t, string(b), string(again))
}

// Runs written before the workload section kept the workload under
// simbench; reading moves it.
func TestInputConfigReadsOlderRuns(t *testing.T) {
	tests := []struct {
		name     string
		raw      string
		want     WorkloadInfo
		shard    int // the shard's requests
		recorded int // a merged run's records
	}{
		{"run", `{"simbench":{"host":"h","requests":15,"workload_digest":"d","workload_source":"t"}}`,
			WorkloadInfo{Source: "t", Digest: "d", Requests: 15}, 0, 0},
		{"shard", `{"simbench":{"requests":8,"workload_digest":"d","workload_source":"t",` +
			`"shard":{"count":2,"digest":"s","index":0,"spec":"0/2","workload_requests":15}}}`,
			WorkloadInfo{Source: "t", Digest: "d", Requests: 15}, 8, 0},
		{"merged", `{"simbench":{"requests":15,"workload_digest":"d","workload_source":"t","merged":{"count":2,"shards":[]}}}`,
			WorkloadInfo{Source: "t", Digest: "d"}, 0, 15},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ic, err := ParseInputConfig(json.RawMessage(tc.raw))
			require.NoError(t, err)
			require.NotNil(t, ic.Workload)
			assert.Equal(t, tc.want, *ic.Workload)
			if ic.Simbench.Shard != nil {
				assert.Equal(t, tc.shard, ic.Simbench.Shard.Requests)
			}
			if ic.Simbench.Merged != nil {
				assert.Equal(t, tc.recorded, ic.Simbench.Merged.Records)
			}
			b, err := ic.Encode()
			require.NoError(t, err)
			assert.NotContains(t, string(b), "workload_digest", "the digest under one key")
		})
	}
}

func TestInputConfigAbsentAndInvalid(t *testing.T) {
	for _, raw := range []string{"", "null", "{}"} {
		ic, err := ParseInputConfig(json.RawMessage(raw))
		require.NoError(t, err, raw)
		assert.Equal(t, InputConfig{}, ic, raw)
	}
	_, err := ParseInputConfig(json.RawMessage(`{"loadgen":{"concurrency":"two"}}`))
	assert.ErrorContains(t, err, "input_config")
}

func TestRedactURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"http://user:pass@host:8000/v1", "http://redacted@host:8000/v1"},
		{"https://token@host", "https://redacted@host"},
		{"user:pass@localhost:8000", "redacted@localhost:8000"},
		{"http://u:p@a@host/x?q=a@b#f@g", "http://redacted@host/x?q=a@b#f@g"},
		{"http://host:8000/v1?key=a@b", "http://host:8000/v1?key=a@b"},
		{"localhost:8000", "localhost:8000"},
		{"", ""},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, RedactURL(tt.in), tt.in)
	}
}

// TestInputConfigRedactsEndpointURL: whoever builds input_config, its
// endpoint URL is written without credentials.
func TestInputConfigRedactsEndpointURL(t *testing.T) {
	ic := InputConfig{Endpoint: &EndpointConfig{URL: "http://user:s3cret@host:8000", ModelNames: []string{"m"}}}
	b, err := ic.Encode()
	require.NoError(t, err)
	assert.NotContains(t, string(b), "s3cret")
	assert.Contains(t, string(b), `"url":"http://redacted@host:8000"`)
}

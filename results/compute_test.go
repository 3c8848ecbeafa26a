package results

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const ms = int64(1_000_000)

// rec builds a streaming record sent at t0 whose chunks arrive at the given
// ms offsets, one token each unless tokens says otherwise.
func rec(t0 int64, isl int, offsetsMs []int64, tokens ...int) *Record {
	r := &Record{StartNs: t0, InputTokens: isl, TraceRow: -1}
	for i, off := range offsetsMs {
		n := 1
		if i < len(tokens) {
			n = tokens[i]
		}
		r.Chunks = append(r.Chunks, Chunk{AtNs: t0 + off*ms, Tokens: n})
		r.OutputTokens += n
	}
	if len(r.Chunks) > 0 {
		r.EndNs = r.Chunks[len(r.Chunks)-1].AtNs
	}
	return r
}

func value(t *testing.T, m RecordMetrics, tag string) float64 {
	t.Helper()
	v, ok := m.Get(tag)
	require.True(t, ok, "%s absent", tag)
	return v
}

func TestComputeMetricsHandComputed(t *testing.T) {
	r := rec(1_000*ms, 100, []int64{40, 50, 60, 70, 80})
	r.IntendedNs = 1_000*ms - 2*ms
	m := ComputeMetrics(r)
	require.Nil(t, m.Error)
	assert.Equal(t, 40.0, value(t, m, TagTTFT))
	assert.Equal(t, 10.0, value(t, m, TagTTST))
	assert.Equal(t, 80.0, value(t, m, TagRequestLatency))
	assert.Equal(t, 10.0, value(t, m, TagITL)) // (80−40)/(5−1)
	assert.Equal(t, 100.0, value(t, m, TagOTPU))
	assert.Equal(t, 2500.0, value(t, m, TagPrefillPerUser)) // 100 tokens / 0.04 s
	assert.Equal(t, 5.0, value(t, m, TagOSL))
	assert.Equal(t, []float64{10, 10, 10, 10}, m.ICL)
	assert.Nil(t, m.TokenGap, "one token per chunk: token_gap equals ICL")
	assert.Equal(t, 2.0, value(t, m, TagSendLag))
	assert.Equal(t, 42.0, value(t, m, TagTTFTFromIntended))
	assert.Equal(t, 82.0, value(t, m, TagLatencyIntended))
}

func TestComputeMetricsEdges(t *testing.T) {
	t.Run("osl 1 has no ITL, TTST or ICL", func(t *testing.T) {
		m := ComputeMetrics(rec(0, 10, []int64{30}))
		assert.Equal(t, 30.0, value(t, m, TagRequestLatency))
		for _, tag := range []string{TagITL, TagOTPU, TagTTST} {
			_, ok := m.Get(tag)
			assert.False(t, ok, tag)
		}
		assert.Nil(t, m.ICL)
	})
	t.Run("all tokens in one chunk: ITL 0 kept, no per-user throughput", func(t *testing.T) {
		m := ComputeMetrics(rec(0, 10, []int64{30}, 4))
		assert.Equal(t, 0.0, value(t, m, TagITL))
		_, ok := m.Get(TagOTPU)
		assert.False(t, ok)
		assert.Equal(t, []float64{0, 0, 0}, m.TokenGaps())
	})
	t.Run("multi-token chunks give osl−1 token gaps", func(t *testing.T) {
		m := ComputeMetrics(rec(0, 10, []int64{30, 50}, 2, 3))
		assert.Equal(t, []float64{20}, m.ICL)
		assert.Equal(t, []float64{0, 20, 0, 0}, m.TokenGap)
		assert.Equal(t, 5.0, value(t, m, TagITL)) // (50−30)/(5−1) = mean token gap
	})
	t.Run("no content is an invalid-result error", func(t *testing.T) {
		m := ComputeMetrics(&Record{InputTokens: 7})
		require.NotNil(t, m.Error)
		assert.Equal(t, "InvalidInferenceResultError", m.Error.Type)
		assert.Equal(t, 7, m.ErrorISL)
	})
	t.Run("non-streaming has latency only", func(t *testing.T) {
		r := rec(0, 10, []int64{90}, 5)
		r.NonStreaming = true
		m := ComputeMetrics(r)
		assert.Equal(t, 90.0, value(t, m, TagRequestLatency))
		_, ok := m.Get(TagTTFT)
		assert.False(t, ok)
	})
	t.Run("osl mismatch", func(t *testing.T) {
		r := rec(0, 10, []int64{1, 2, 3, 4})
		r.RequestedOutputTokens = 5
		assert.Equal(t, -20.0, value(t, ComputeMetrics(r), TagOSLMismatch))
	})
}

func TestAggregatorExcludesWarmupAndErrors(t *testing.T) {
	agg := NewAggregator(nil)
	ok1 := rec(0, 100, []int64{40, 50, 60})
	ok2 := rec(1000*ms, 100, []int64{20, 30, 40})
	warm := rec(0, 100, []int64{1, 2})
	warm.Warmup = true
	failed := &Record{StartNs: 500 * ms, InputTokens: 55, Error: &ErrorDetails{Code: 500, Type: "Internal Server Error", Message: "boom"}}
	cancelled := &Record{StartNs: 600 * ms, Cancelled: true, Error: &ErrorDetails{Code: 499, Type: "RequestCancellationError", Message: "cancelled"}}
	for _, r := range []*Record{ok1, warm, failed, ok2, cancelled} {
		m := ComputeMetrics(r)
		agg.Add(&m)
	}
	p := agg.Profile()
	assertScalar(t, p, TagRequestCount, 2)
	assertScalar(t, p, TagErrorRequestCount, 2)
	assertScalar(t, p, TagTotalISL, 200)
	assertScalar(t, p, TagTotalOSL, 6)
	assertScalar(t, p, TagTotalErrorISL, 55)
	assertScalar(t, p, TagBenchmarkDuration, 1.04) // first start 0 → last content at 1040 ms
	assertScalar(t, p, TagRequestThroughput, 2/1.04)
	assertScalar(t, p, TagOutputThroughput, 6/1.04)
	assertScalar(t, p, TagTotalThroughput, 206/1.04)
	v, _ := p.Value(TagTTFT, "avg")
	assert.Equal(t, 30.0, v)
	require.Len(t, p.ErrorSummary, 2)
	assert.Equal(t, 1, p.ErrorSummary[0].Count)
	_, ok := p.Metric(TagGoodput)
	assert.False(t, ok, "goodput only with SLOs")
}

func TestGoodput(t *testing.T) {
	slos, err := ParseGoodput("time_to_first_token:30 output_token_throughput_per_user:50")
	require.NoError(t, err)
	agg := NewAggregator(slos)
	for _, r := range []*Record{
		rec(0, 10, []int64{20, 30, 40}),       // ttft 20 ok, 100 tok/s ok
		rec(0, 10, []int64{40, 50, 60}),       // ttft 40 fails
		rec(0, 10, []int64{10, 100, 190}),     // 11.1 tok/s fails
		rec(2000*ms, 10, []int64{10, 15, 20}), // ok
	} {
		m := ComputeMetrics(r)
		agg.Add(&m)
	}
	p := agg.Profile()
	assertScalar(t, p, TagGoodRequestCount, 2)
	assertScalar(t, p, TagGoodput, 2/2.02)
	assertScalar(t, p, TagAttainment, 0.5)
	a, ok := p.Attainment()
	assert.True(t, ok)
	assert.Equal(t, 0.5, a, "good / all requests (none failed)")
	p.Metrics = slices.DeleteFunc(p.Metrics, func(m MetricResult) bool { return m.Tag == TagAttainment })
	a, ok = p.Attainment()
	assert.True(t, ok)
	assert.Equal(t, 0.5, a, "an AIPerf file without slo_attainment: from its counts")

	for _, bad := range []string{"ttft", "time_to_first_token:x", "request_count:3",
		"time_to_first_token:30 time_to_first_token:40", ","} {
		_, err := ParseGoodput(bad)
		assert.Error(t, err, bad)
	}
}

// TestExtensionJSONMatchesTags checks the hand-written "simbench" object
// against encoding/json on the same struct.
func TestExtensionJSONMatchesTags(t *testing.T) {
	exts := []*Extension{
		{TraceRow: -1},
		{TraceRow: 3, IntendedSendNs: 12, Worker: "worker-\"1\"", RequestedOutputTokens: 5,
			Usage: &Usage{PromptTokens: 1, CompletionTokens: 2, TotalTokens: 3},
			Sim: &SimDetail{QueueWaitNs: 4, PrefillStartNs: 5, PrefillEndNs: 6, CachedTokens: 7, Preemptions: 1,
				TTFTBreakdown: []Stage{{Name: "queue_wait", Ns: 4}, {Name: "prefill", Ns: 2}},
				PrefillWorker: "prefill-\"0\"", DecodeWorker: "decode-1", KVTransferStartNs: 8, KVTransferEndNs: 9, KVTransferBytes: 10}},
		{TraceRow: 0, Usage: &Usage{ReasoningTokens: 9}, Sim: &SimDetail{}},
		{TraceRow: 1, ChunkNs: []int64{5, 7, -1}},
	}
	for _, e := range exts {
		want, err := json.Marshal(e)
		require.NoError(t, err)
		assert.JSONEq(t, string(want), string(appendExtension(nil, e)))
	}
}

// TestChunkTimesExact: a written line keeps every chunk time in exact ns
// (simbench.chunk_ns), ChunkTimesNs reads them back unchanged, and the
// reconstruction from the ms values that AIPerf's files need agrees.
func TestChunkTimesExact(t *testing.T) {
	recs := genRecords(200, 40)
	recs = append(recs,
		Record{StartNs: 10, EndNs: 50, Chunks: []Chunk{{AtNs: 40, Tokens: 3}}, OutputTokens: 3},
		Record{StartNs: 10, EndNs: 50, Chunks: []Chunk{{AtNs: 40, Tokens: 1}, {AtNs: 30, Tokens: 1}}, OutputTokens: 2},
		Record{StartNs: 10, EndNs: 50, NonStreaming: true, Chunks: []Chunk{{AtNs: 40, Tokens: 5}}, OutputTokens: 5})
	for i := range recs {
		r := &recs[i]
		m := ComputeMetrics(r)
		read, err := ReadJSONL(bytes.NewReader(AppendJSONL(nil, &m)), "t")
		require.NoError(t, err)
		require.Len(t, read, 1)
		got := read[0].ChunkTimesNs()
		switch {
		case r.Error != nil || r.NonStreaming:
			assert.Nil(t, got, "record %d", i)
			assert.Nil(t, read[0].Ext.ChunkNs, "record %d", i)
			continue
		case i == len(recs)-2: // a negative gap drops inter_chunk_latency and chunk_ns
			assert.Nil(t, read[0].Ext.ChunkNs)
			assert.Equal(t, []int64{40}, got)
			continue
		}
		want := make([]int64, len(r.Chunks))
		for c, ch := range r.Chunks {
			want[c] = ch.AtNs
		}
		assert.Equal(t, want, got, "record %d", i)
		read[0].Ext.ChunkNs = nil
		assert.Equal(t, want, read[0].ChunkTimesNs(), "record %d reconstructed from ms", i)
	}
}

func TestGoodputConfigRoundTrip(t *testing.T) {
	slos, err := ParseGoodput("time_to_first_token:200, inter_token_latency:10")
	require.NoError(t, err)
	m := GoodputConfig(slos)
	assert.Equal(t, map[string]float64{"time_to_first_token": 200, "inter_token_latency": 10}, m)
	assert.Equal(t, []SLO{{Tag: "inter_token_latency", Threshold: 10}, {Tag: "time_to_first_token", Threshold: 200}}, GoodputSLOs(m))
	assert.Nil(t, GoodputSLOs(nil))
}

// TestParseGoodputRefusesNegativeThresholds: an SLO below zero on a metric
// that is never negative can never pass (or always passes); only a signed
// metric (the OSL mismatch, a difference) takes one.
func TestParseGoodputRefusesNegativeThresholds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		spec, err string
	}{
		{"time_to_first_token:-5", `goodput "time_to_first_token:-5": threshold -5 is negative, and time_to_first_token never is`},
		{"inter_token_latency:10 output_token_throughput_per_user:-0.5", "threshold -0.5 is negative"},
		{"osl_mismatch_diff_pct:-10", ""},
		{"time_to_first_token:0", ""},
	}
	for _, tc := range tests {
		_, err := ParseGoodput(tc.spec)
		if tc.err == "" {
			assert.NoError(t, err, tc.spec)
			continue
		}
		assert.ErrorContains(t, err, tc.err, tc.spec)
	}
}

package results

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tokens_per_chunk is a request's OSL over its content chunks, and the
// aggregate summarizes one value per request; non-streaming requests have
// none, and the JSONL carries it and reads it back.
func TestTokensPerChunk(t *testing.T) {
	cases := []struct {
		name string
		r    *Record
		want float64
		ok   bool
	}{
		{"one token a chunk", rec(0, 10, []int64{10, 20, 30}), 1, true},
		{"multi-token chunks", rec(0, 10, []int64{10, 20, 30}, 1, 3, 4), 8.0 / 3, true},
		{"one chunk of five", rec(0, 10, []int64{10}, 5), 5, true},
		{"non-streaming", func() *Record { r := rec(0, 10, []int64{10}, 7); r.NonStreaming = true; return r }(), 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := ComputeMetrics(tc.r)
			v, ok := m.Get(TagTokensPerChunk)
			require.Equal(t, tc.ok, ok)
			if tc.ok {
				assert.InEpsilon(t, tc.want, v, 1e-12)
			}
		})
	}

	agg := NewAggregator(nil)
	for _, r := range []*Record{rec(0, 10, []int64{10, 20}), rec(0, 10, []int64{10, 20}, 3, 3)} {
		m := ComputeMetrics(r)
		agg.Add(&m)
	}
	p := agg.Profile()
	avg, _ := p.Value(TagTokensPerChunk, "avg")
	assert.Equal(t, 2.0, avg) // requests of 1 and 3 tokens a chunk
	maxV, _ := p.Value(TagTokensPerChunk, "max")
	assert.Equal(t, 3.0, maxV)
	d, known := Lookup(TagTokensPerChunk)
	assert.True(t, known && d.Extension && d.Streaming, "a simbench extension of the aggregate, not an AIPerf metric")

	m := ComputeMetrics(rec(0, 10, []int64{10, 20}, 2, 2))
	line := AppendJSONL(nil, &m)
	var doc struct {
		Metrics map[string]json.RawMessage `json:"metrics"`
	}
	require.NoError(t, json.Unmarshal(line, &doc))
	assert.JSONEq(t, `{"value":2.0,"unit":"tokens/chunk"}`, string(doc.Metrics[TagTokensPerChunk]))
}

package results

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSessionOf(t *testing.T) {
	const ms = int64(1e6)
	tests := []struct {
		name  string
		spans []Span
		want  SessionStats
	}{
		{"empty", nil, SessionStats{}},
		{"one request", []Span{{5 * ms, 9 * ms}}, SessionStats{LatencyMs: 4, ServerWaitMs: 4, Turns: 1}},
		{"chain with tool waits", []Span{{0, 10 * ms}, {15 * ms, 25 * ms}, {40 * ms, 41 * ms}},
			SessionStats{LatencyMs: 41, ServerWaitMs: 21, ToolWaitMs: 20, Turns: 3}},
		{"two branches overlap, then a join (any order)", []Span{{30 * ms, 40 * ms}, {15 * ms, 25 * ms}, {0, 10 * ms}, {17 * ms, 27 * ms}},
			SessionStats{LatencyMs: 40, ServerWaitMs: 32, ToolWaitMs: 8, Turns: 4}},
		{"a branch inside another", []Span{{0, 50 * ms}, {10 * ms, 20 * ms}, {60 * ms, 70 * ms}},
			SessionStats{LatencyMs: 70, ServerWaitMs: 60, ToolWaitMs: 10, Turns: 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, SessionOf(tc.spans))
		})
	}
}

// TestAggregatorSessionMetrics: one value per session (warmup left out,
// failed requests in), only once some session has more than one request.
func TestAggregatorSessionMetrics(t *testing.T) {
	rec := func(conv string, startMs, endMs int64, phase string, failed bool) *RecordMetrics {
		m := &RecordMetrics{Meta: Metadata{ConversationID: conv, RequestStartNs: startMs * 1e6, RequestEndNs: endMs * 1e6,
			BenchmarkPhase: phase}}
		if failed {
			m.Error = &ErrorDetails{Code: 500, Type: "x", Message: "boom"}
		}
		return m
	}
	single := NewAggregator(nil)
	single.Add(rec("a", 0, 10, "profiling", false))
	single.Add(rec("b", 0, 10, "profiling", false))
	_, ok := single.Profile().Metric(TagSessionLatency)
	assert.False(t, ok, "single-turn sessions: no session metrics")

	a := NewAggregator(nil)
	a.Add(rec("w", 0, 1000, "warmup", false))
	a.Add(rec("a", 0, 10, "profiling", false))
	a.Add(rec("a", 30, 50, "profiling", true))
	a.Add(rec("b", 5, 15, "profiling", false))
	p := a.Profile()
	for tag, want := range map[string]map[string]float64{
		TagSessionLatency:    {"count": 2, "min": 10, "max": 50},
		TagSessionTurns:      {"count": 2, "min": 1, "max": 2},
		TagSessionServerWait: {"min": 10, "max": 30},
		TagSessionToolWait:   {"min": 0, "max": 20},
	} {
		m, ok := p.Metric(tag)
		require.True(t, ok, tag)
		for st, v := range want {
			assert.Equal(t, v, m.Stats[st], "%s.%s", tag, st)
		}
	}
}

package results

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The spec-decode values are derived from the counters, written after
// AIPerf's keys in profile_export_aiperf.json, and read back to the same
// counters.
func TestSpecDecodeInTheAggregate(t *testing.T) {
	s := SpecDecode{Drafts: 100, DraftTokens: 400, AcceptedTokens: 176, AcceptedPerPos: []float64{70, 50, 36, 20}}
	assert.InDelta(t, 0.44, s.AcceptanceRate(), 1e-12)
	assert.InDelta(t, 2.76, s.MeanAcceptedLength(), 1e-12)
	assert.InDeltaSlice(t, []float64{0.7, 0.5, 0.36, 0.2}, s.PositionRates(), 1e-12)
	assert.InDeltaSlice(t, []float64{0.7, 50.0 / 70, 36.0 / 50, 20.0 / 36}, s.ConditionalRates(), 1e-12)

	agg := NewAggregator(nil)
	m := ComputeMetrics(rec(0, 10, []int64{10, 20}))
	agg.Add(&m)
	p := agg.Profile()
	p.AddSpecDecode(s)
	p.AddSpecDecode(s) // replaces, never doubles
	var buf bytes.Buffer
	require.NoError(t, WriteProfileJSON(&buf, p))
	out := buf.String()
	assert.Equal(t, 1, strings.Count(out, `"spec_decode_acceptance_rate":`))
	endTime, pos0, pos3 := strings.Index(out, `"error_summary"`), strings.Index(out, `"spec_decode_acceptance_rate_pos_0"`), strings.Index(out, `"spec_decode_acceptance_rate_pos_3"`)
	assert.True(t, endTime < pos0 && pos0 < pos3, "simbench's section, after AIPerf's keys, positions in order")

	back, err := ReadProfileJSON(&buf)
	require.NoError(t, err)
	got, ok := back.SpecDecode()
	require.True(t, ok)
	assert.Equal(t, s.Drafts, got.Drafts)
	assert.InDeltaSlice(t, s.AcceptedPerPos, got.AcceptedPerPos, 1e-9)
	d, known := Lookup(SpecPosTag(3))
	assert.True(t, known && d.Extension)
	assert.Equal(t, "Spec Decode Acceptance Rate At Position 3", d.Header)

	noDrafts := &Profile{}
	noDrafts.AddSpecDecode(SpecDecode{DraftTokens: 5})
	assert.Empty(t, noDrafts.Metrics, "no drafts: no rates")
	_, ok = noDrafts.SpecDecode()
	assert.False(t, ok)
}

func TestSpecPosition(t *testing.T) {
	for tag, want := range map[string]int{"spec_decode_acceptance_rate_pos_0": 0, "spec_decode_acceptance_rate_pos_12": 12} {
		got, ok := SpecPosition(tag)
		assert.True(t, ok, tag)
		assert.Equal(t, want, got)
	}
	for _, tag := range []string{"spec_decode_acceptance_rate_pos_", "spec_decode_acceptance_rate_pos_-1",
		"spec_decode_acceptance_rate_pos_+1", "spec_decode_acceptance_rate_pos_x", "spec_decode_acceptance_rate"} {
		_, ok := SpecPosition(tag)
		assert.False(t, ok, tag)
	}
}

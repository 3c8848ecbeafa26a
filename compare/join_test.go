package compare

import (
	"testing"

	"github.com/simbench/simbench/results"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGrade(t *testing.T) {
	t.Parallel()
	f := func(v float64) *float64 { return &v }
	tests := []struct {
		mape, r *float64
		want    string
	}{
		{f(5), f(0.99), "excellent"},
		{f(5), f(0.90), "good"}, // r caps the grade
		{f(15), f(0.99), "good"},
		{f(25), f(0.99), "fair"}, // MAPE caps the grade
		{f(5), f(0.72), "fair"},
		{f(5), f(0.70), "poor"}, // bounds are strict
		{f(10), f(0.99), "good"},
		{f(40), f(0.99), "poor"},
		{f(5), nil, "excellent"}, // r undefined: MAPE alone
		{f(30), nil, "fair"},
		{nil, f(0.99), "n/a"},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, Grade(tc.mape, tc.r), "MAPE %v r %v", tc.mape, tc.r)
	}
}

// joinRecords builds a digest of n requests whose TTFT is ttft(i).
func joinRecords(n int, ttft func(i int) int64, mutate func(i int, r *results.Record)) *Digest {
	var recs []*results.Record
	for i := 0; i < n; i++ {
		r := req(i, "w0", int64(i)*100, ttft(i), gaps(4, 10), 1)
		if mutate != nil {
			mutate(i, r)
		}
		recs = append(recs, r)
	}
	return digestOf(DefaultStallOptions, recs...)
}

func TestJoinByTraceRow(t *testing.T) {
	t.Parallel()
	ref := joinRecords(10, func(i int) int64 { return 20 + int64(i) }, nil)
	// candidate: reversed order, TTFT 10 % higher, one extra request
	cand := joinRecords(11, func(i int) int64 { return 20 + int64(10-i) }, func(i int, r *results.Record) {
		r.TraceRow, r.SessionNum = 10-i, i
	})
	for i := range cand.Requests {
		cand.Requests[i].vals[0] *= 1.1
	}
	j := JoinRequests(ref, cand)
	assert.Equal(t, JoinByTraceRow, j.Key)
	assert.Equal(t, 10, j.Matched)
	assert.Equal(t, 0, j.UnmatchedReference)
	assert.Equal(t, 1, j.UnmatchedCandidate)
	ttft := j.Metrics[0]
	require.Equal(t, results.TagTTFT, ttft.Metric)
	assert.InDelta(t, 10, *ttft.MAPEPct, 1e-9)
	assert.InDelta(t, 10, *ttft.MeanErrorPct, 1e-9)
	assert.InDelta(t, 1, *ttft.PearsonR, 1e-12)
	assert.Equal(t, "over-predict", ttft.Bias)
	assert.Equal(t, "good", ttft.Grade, "MAPE 10 % is not below 10 %")
	assert.Contains(t, warningText(j.Warnings), "1 candidate requests have no partner")
}

func TestJoinFallsBackToCorrelationThenOrder(t *testing.T) {
	t.Parallel()
	noRow := func(i int, r *results.Record) {
		r.TraceRow = -1
		r.CorrelationID, r.Turn = "session-"+string(rune('a'+i)), 0
	}
	ref := joinRecords(5, func(int) int64 { return 30 }, noRow)
	cand := joinRecords(5, func(int) int64 { return 30 }, noRow)
	assert.Equal(t, JoinByCorrelation, JoinRequests(ref, cand).Key)

	// correlation ids that never match (AIPerf's random UUIDs): by order
	other := joinRecords(5, func(int) int64 { return 30 }, func(i int, r *results.Record) {
		r.TraceRow, r.CorrelationID = -1, "uuid-"+string(rune('k'+i))
	})
	j := JoinRequests(ref, other)
	assert.Equal(t, JoinBySession, j.Key)
	assert.Equal(t, 5, j.Matched)
}

func TestJoinTokenMismatches(t *testing.T) {
	t.Parallel()
	ref := joinRecords(4, func(int) int64 { return 30 }, nil)
	cand := joinRecords(4, func(int) int64 { return 30 }, func(i int, r *results.Record) {
		if i == 2 {
			r.OutputTokens++
		}
		if i == 3 {
			r.InputTokens++
		}
	})
	j := JoinRequests(ref, cand)
	assert.Equal(t, 1, j.OSLMismatches)
	assert.Equal(t, 1, j.ISLMismatches)
	assert.Contains(t, warningText(j.Warnings), "1 pairs differ in output tokens and 1 in input tokens")
	ttft := j.Metrics[0]
	assert.Nil(t, ttft.PearsonR, "constant TTFT: r undefined")
	assert.Equal(t, "excellent", ttft.Grade)
}

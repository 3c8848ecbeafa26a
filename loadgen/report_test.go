package loadgen

import (
	"strings"
	"testing"
	"time"

	"github.com/simbench/simbench/internal/warning"
	"github.com/simbench/simbench/pacer"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/traces"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// reportOf builds a Report from hand-made records: n sends 10 ms apart,
// each lagMs late, with a server ISL of 110 for an intended 100.
func reportOf(t *testing.T, lagsMs []float64, failEvery int) (*Report, *results.Profile) {
	t.Helper()
	agg := results.NewAggregator(nil)
	rep := &Report{OpenLoop: true, StartNs: 1e18, EndNs: 1e18 + int64(len(lagsMs))*1e7}
	for i, lag := range lagsMs {
		intended := int64(1e18) + int64(i)*1e7
		start := intended + int64(lag*1e6)
		rec := &results.Record{IntendedNs: intended, StartNs: start, EndNs: start + 5e6, InputTokens: 100, OutputTokens: 2,
			Chunks: []results.Chunk{{AtNs: start + 2e6, Tokens: 1}, {AtNs: start + 4e6, Tokens: 1}},
			Usage:  &results.Usage{PromptTokens: 110, CompletionTokens: 2, TotalTokens: 112}}
		if failEvery > 0 && i%failEvery == 0 {
			rec.Error = &results.ErrorDetails{Code: 500, Type: "Internal Server Error", Message: "x"}
		}
		s := pacer.Send{Intended: time.Duration(i) * 10 * time.Millisecond}
		s.At = s.Intended
		rep.noteSend(s, 0)
		m := results.ComputeMetrics(rec)
		rep.add(job{rec: rec, req: &traces.Request{InputLength: 100}}, &m)
		agg.Add(&m)
	}
	return rep, agg.Profile()
}

func TestReportOnSchedule(t *testing.T) {
	t.Parallel()
	rep, p := reportOf(t, []float64{0.1, 0.2, 0.1, 0.3, 0.2}, 0)
	req, ok := rep.RequestedRate()
	require.True(t, ok)
	assert.InDelta(t, 100, req, 1e-9)
	s, late, ok := rep.SendLag()
	require.True(t, ok)
	assert.Zero(t, late)
	assert.InDelta(t, 0.3, s.Max, 1e-9)
	in, srv, pct, ok := rep.ISLError()
	require.True(t, ok)
	assert.Equal(t, []float64{100, 110}, []float64{in, srv})
	assert.InDelta(t, 10, pct, 1e-9)
	assert.Empty(t, warning.Messages(rep.Warnings()))
	var b strings.Builder
	require.NoError(t, rep.WriteSummary(&b, p))
	out := b.String()
	assert.Contains(t, out, "requested 100.00 req/s")
	assert.Contains(t, out, "0.00% of sends > 1 ms late")
	assert.Contains(t, out, "intended 100.0 tokens avg (approximate), server usage.prompt_tokens 110.0 avg (+10.00%")
	assert.Contains(t, out, "Time to First Token (ms)")
	assert.NotContains(t, out, "warning")

	rep.ExactISL, rep.Counting = true, (&Endpoint{}).Counting()
	b.Reset()
	require.NoError(t, rep.WriteSummary(&b, p))
	out = b.String()
	assert.Contains(t, out, "tokens:    approximate: a word heuristic")
	assert.Contains(t, out, "intended 100.0 tokens avg (exact), server usage.prompt_tokens 110.0 avg: +10.0 tokens per request added by the server (its chat template)")
}

func TestReportWarnsWhenBehind(t *testing.T) {
	t.Parallel()
	lags := make([]float64, 100)
	for i := range lags {
		lags[i] = 0.1
		if i%10 == 0 {
			lags[i] = 3 // 10 % of sends 3 ms late
		}
	}
	rep, p := reportOf(t, lags, 25)
	warns := warning.Messages(rep.Warnings())
	require.NotEmpty(t, warns)
	assert.Contains(t, warns[0], "fell behind")
	_, late, _ := rep.SendLag()
	assert.Equal(t, 8, late, "send_lag exists for the 96 successful requests only (0 and 50 failed)")
	var b strings.Builder
	require.NoError(t, rep.WriteSummary(&b, p))
	assert.Contains(t, b.String(), "errors: 4 × code 500 Internal Server Error")
	assert.Contains(t, b.String(), "warning: the client fell behind")
}

// TestReportRateAfterInterrupt: 4 sends that left at once, then an
// interrupt 2 s in, were "achieved 10263.60 req/s"; the rate is over the
// time the run lasted.
func TestReportRateAfterInterrupt(t *testing.T) {
	rep := &Report{Interrupted: true, StartNs: 1e18, EndNs: 1e18 + 2e9}
	for i := range 4 {
		start := int64(1e18) + int64(i)*1e5 // 0.1 ms apart
		rec := &results.Record{StartNs: start, EndNs: start + 1.9e9, Cancelled: true,
			Error: &results.ErrorDetails{Code: 499, Type: "RequestCancellationError", Message: "x"}}
		rep.noteSend(pacer.Send{}, 0)
		m := results.ComputeMetrics(rec)
		rep.add(job{rec: rec, req: &traces.Request{}}, &m)
	}
	got, ok := rep.AchievedRate()
	require.True(t, ok)
	assert.InDelta(t, 2.0, got, 1e-9, "4 sends in 2 s")
	var b strings.Builder
	rep.writeSchedule(&b)
	assert.Contains(t, b.String(), "rate:      achieved 2.00 req/s over the 2.00 s until the interrupt\n")
}

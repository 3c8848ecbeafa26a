package compare

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const fixtureDir = "../testdata/aiperf/qwen_concurrency1"

func compareDirs(t *testing.T, a, b string, opts Options) *Report {
	t.Helper()
	ref, err := Open(a)
	require.NoError(t, err)
	cand, err := Open(b)
	require.NoError(t, err)
	rep, err := Compare([]*Input{ref}, []*Input{cand}, opts)
	require.NoError(t, err)
	return rep
}

func TestFixtureSelfCompareIsZero(t *testing.T) {
	t.Parallel()
	rep := compareDirs(t, fixtureDir, fixtureDir, Options{Stall: DefaultStallOptions, Thresholds: DefaultGate})
	require.NotEmpty(t, rep.Rows)
	for _, r := range rep.Rows {
		require.NotNil(t, r.ErrorPct, "%s.%s", r.Metric, r.Stat)
		assert.Zero(t, *r.ErrorPct, "%s.%s", r.Metric, r.Stat)
		assert.Zero(t, r.Diff, "%s.%s", r.Metric, r.Stat)
	}
	assert.Empty(t, rep.OnlyInReference)
	assert.Empty(t, rep.OnlyInCandidate)
	require.NotNil(t, rep.PerRequest)
	assert.Equal(t, 10, rep.PerRequest.Matched)
	for _, jm := range rep.PerRequest.Metrics {
		require.NotNil(t, jm.MAPEPct, jm.Metric)
		assert.Zero(t, *jm.MAPEPct, jm.Metric)
	}
	assert.Empty(t, rep.Breaches())
	assert.Empty(t, rep.MissingVerdicts())
	for _, w := range rep.Warnings {
		t.Log(w)
	}
	t.Logf("%d rows; join %s; stalls %+v", len(rep.Rows), rep.PerRequest, *rep.RefStalls)
}

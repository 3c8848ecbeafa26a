package compare

import (
	"testing"

	"github.com/simbench/simbench/results"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const dynoDir = "testdata/dynosim/"

func value(t *testing.T, p *results.Profile, tag, stat string) float64 {
	t.Helper()
	v, ok := p.Value(tag, stat)
	require.True(t, ok, "%s.%s", tag, stat)
	return v
}

func TestDynoSimReport(t *testing.T) {
	t.Parallel()
	in, err := Open(dynoDir + "report.json")
	require.NoError(t, err)
	assert.Equal(t, FormatDynoSim, in.Format)
	assert.False(t, in.HasRecords())
	p := in.Profile
	assert.Equal(t, 30.0, value(t, p, results.TagTTFT, "avg"))
	assert.Equal(t, 30.0, value(t, p, results.TagTTFT, "p50"), "median_* is p50")
	assert.Equal(t, 39.8, value(t, p, results.TagTTFT, "p99"))
	assert.Equal(t, 8.16, value(t, p, results.TagTTFT, "std"))
	_, hasP1 := p.Value(results.TagTTFT, "p1")
	assert.False(t, hasP1)
	assert.Equal(t, 12.0, value(t, p, results.TagITL, "avg"))
	assert.Equal(t, 30.0, value(t, p, results.TagTokenGap, "max"))
	assert.Equal(t, 84.1, value(t, p, results.TagOTPU, "avg"))
	assert.Equal(t, 66.0, value(t, p, results.TagRequestLatency, "avg"))
	assert.Equal(t, 1.2, value(t, p, results.TagRequestThroughput, "avg"))
	assert.Equal(t, 4.8, value(t, p, results.TagOutputThroughput, "avg"))
	assert.Equal(t, 3.0, value(t, p, results.TagRequestCount, "avg"))
	m, _ := p.Metric(results.TagBenchmarkDuration)
	assert.Equal(t, "ms", m.Unit)
	assert.Equal(t, 2500.0, m.Stats["avg"])
}

func TestDynoSimReportBeforeTokenGap(t *testing.T) {
	t.Parallel()
	in, err := Open(dynoDir + "report_pre12883.json")
	require.NoError(t, err)
	p := in.Profile
	assert.Equal(t, 12.0, value(t, p, results.TagITL, "avg"), "tpot is AIPerf's ITL")
	assert.Equal(t, 11.0, value(t, p, results.TagTokenGap, "avg"), "pooled itl_* is token_gap")
	_, ok := p.Metric(results.TagOTPU)
	assert.False(t, ok, "pooled 1000/gap is not AIPerf's per-user throughput")
	assert.Contains(t, warningText(in.Warnings), "predates token_gap_*")
}

func TestDynoSimPerRequest(t *testing.T) {
	t.Parallel()
	for _, path := range []string{dynoDir + "per_request.jsonl", dynoDir + "report_nested.json"} {
		in, err := Open(path)
		require.NoError(t, err)
		require.True(t, in.HasRecords(), path)
		d, err := Scan(in, DefaultStallOptions)
		require.NoError(t, err)
		require.Len(t, d.Requests, 3, path)
		assert.Equal(t, 1, d.Errors, "the rejected request")
		r := d.Requests[1]
		ttft, _ := r.Value(results.TagTTFT)
		itl, _ := r.Value(results.TagITL)
		ttst, _ := r.Value(results.TagTTST)
		lat, _ := r.Value(results.TagRequestLatency)
		assert.InDelta(t, 30, ttft, 1e-9)
		assert.InDelta(t, 10, ttst, 1e-9)
		assert.InDelta(t, 66, lat, 1e-9)
		assert.InDelta(t, (66.0-30)/3, itl, 1e-9, "AIPerf's ITL from ComputeMetrics")
		assert.Equal(t, "worker-1", d.Workers[r.Worker])
		assert.Empty(t, d.TokenGaps, "DynoSim exports no token times")
		assert.Nil(t, d.Stalls())
	}
}

func TestDynoSimJSONLAloneGetsAProfile(t *testing.T) {
	t.Parallel()
	in, err := Open(dynoDir + "per_request.jsonl")
	require.NoError(t, err)
	assert.Equal(t, FormatDynoSimJSONL, in.Format)
	_, err = Scan(in, DefaultStallOptions)
	require.NoError(t, err)
	assert.InDelta(t, 30, value(t, in.Profile, results.TagTTFT, "avg"), 1e-9)
	assert.Equal(t, 1.0, value(t, in.Profile, results.TagErrorRequestCount, "avg"))
}

func TestCompareAIPerfWithDynoSim(t *testing.T) {
	t.Parallel()
	ref, err := Open(fixtureDir)
	require.NoError(t, err)
	cand, err := Open(dynoDir + "report.json")
	require.NoError(t, err)
	require.NoError(t, cand.AttachRecords(dynoDir+"per_request.jsonl"))
	rep, err := Compare([]*Input{ref}, []*Input{cand}, Options{Stall: DefaultStallOptions})
	require.NoError(t, err)
	dur := findRow(t, rep.Rows, results.TagBenchmarkDuration, "avg")
	assert.InDelta(t, 2.5, dur.Candidate, 1e-12, "DynoSim's duration_ms in the reference's sec")
	ttft := findRow(t, rep.Rows, results.TagTTFT, "p50")
	assert.Equal(t, 30.0, ttft.Candidate)
	require.NotNil(t, rep.PerRequest)
	assert.Equal(t, JoinBySession, rep.PerRequest.Key)
	assert.Equal(t, 3, rep.PerRequest.Matched)
	assert.Nil(t, rep.CandStalls)
	assert.Contains(t, warningText(rep.Warnings), "token-gap stalls not compared: only one run has token gaps")
}

func TestOpenErrors(t *testing.T) {
	t.Parallel()
	_, err := Open(dynoDir + "missing.json")
	assert.Error(t, err)
	_, err = Open(dynoDir + "README.md")
	assert.Error(t, err)
	_, err = Open(t.TempDir())
	assert.ErrorContains(t, err, "no profile_export_aiperf.json")
}

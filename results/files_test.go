package results

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite golden files")

func goldenFile(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to create %s", path)
	assert.Equal(t, string(want), string(got))
}

func fixtureProfile(t *testing.T) *Profile {
	t.Helper()
	p, err := SummarizeJSONL(fixtureJSONL, nil)
	require.NoError(t, err)
	p.StartTime, p.EndTime = "2025-11-07T13:38:54.793124", "2025-11-07T13:43:13.730640"
	p.InputConfig = []byte(`{"loadgen":{"concurrency":1,"request_count":10}}`)
	return p
}

func TestProfileJSONGolden(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, WriteProfileJSON(&buf, fixtureProfile(t)))
	goldenFile(t, "profile_export_aiperf.json", buf.Bytes())
}

func TestProfileCSVGolden(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, WriteProfileCSV(&buf, fixtureProfile(t)))
	out := buf.String()
	assert.True(t, strings.HasPrefix(out, "Metric,avg,min,max,sum,p1,p5,p10,p25,p50,p75,p90,p95,p99,std\r\n"))
	assert.Contains(t, out, "\r\n\r\nMetric,Value\r\n")
	assert.Contains(t, out, "\r\nRequest Count,10.00\r\n")
	goldenFile(t, "profile_export_aiperf.csv", buf.Bytes())
}

func TestAppendFloatLikePython(t *testing.T) {
	tests := map[float64]string{
		64: "64.0", 0: "0.0", 0.25: "0.25", 3652.1454372343746: "3652.1454372343746",
		1.7625515347970678e+18: "1.7625515347970678e+18", 1e16: "1e+16", 1e15: "1000000000000000.0",
		0.0001: "0.0001", 0.00001: "1e-05", -2.5: "-2.5", 1.5e-7: "1.5e-07",
	}
	for in, want := range tests {
		assert.Equal(t, want, string(appendFloat(nil, in)), "%v", in)
	}
}

func TestRunWriterWritesEveryFile(t *testing.T) {
	dir := t.TempDir()
	rw, err := CreateRun(dir, RunOptions{})
	require.NoError(t, err)
	for i := range 5 {
		r := rec(int64(i)*100*ms, 10, []int64{10, 20, 30})
		r.SessionNum = i
		_, err := rw.Add(r)
		require.NoError(t, err)
	}
	// Records are on disk before Close.
	b, err := os.ReadFile(filepath.Join(dir, RecordsName))
	require.NoError(t, err)
	assert.Equal(t, 5, bytes.Count(b, []byte("\n")))
	p, err := rw.Close(RunMeta{StartNs: 1, EndNs: 2, InputConfig: &InputConfig{Loadgen: &LoadgenConfig{Concurrency: 1, RequestCount: 5}}})
	require.NoError(t, err)
	assertScalar(t, p, TagRequestCount, 5)

	run, err := LoadRun(dir)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, RecordsName), run.RecordsPath)
	again, err := SummarizeJSONL(run.RecordsPath, nil)
	require.NoError(t, err)
	for _, m := range again.Metrics {
		for st, v := range m.Stats {
			w, ok := run.Profile.Value(m.Tag, st)
			require.True(t, ok, "%s.%s", m.Tag, st)
			assert.InDelta(t, w, v, 1e-9*max(1, abs(w)), "%s.%s", m.Tag, st)
		}
	}
	_, err = os.Stat(filepath.Join(dir, ProfileCSVName))
	assert.NoError(t, err)
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}

// TestRunWriterGoodput: with SLOs, the aggregate JSON and CSV carry
// good_request_count, goodput and slo_attainment, and input_config
// records the SLOs as AIPerf does (input.goodput), without touching the
// caller's InputConfig.
func TestRunWriterGoodput(t *testing.T) {
	dir := t.TempDir()
	slos, err := ParseGoodput("time_to_first_token:15 inter_token_latency:20")
	require.NoError(t, err)
	rw, err := CreateRun(dir, RunOptions{SLOs: slos})
	require.NoError(t, err)
	for i, first := range []int64{10, 20, 10, 10} {
		_, err := rw.Add(rec(int64(i)*100*ms, 10, []int64{first, first + 10, first + 20}))
		require.NoError(t, err)
	}
	ic := &InputConfig{Loadgen: &LoadgenConfig{Concurrency: 1, RequestCount: 4}}
	_, err = rw.Close(RunMeta{StartNs: 1, EndNs: 2, InputConfig: ic})
	require.NoError(t, err)
	assert.Nil(t, ic.Input, "the caller's input_config is not changed")

	run, err := LoadRun(dir)
	require.NoError(t, err)
	assertScalar(t, run.Profile, TagGoodRequestCount, 3)
	assertScalar(t, run.Profile, TagAttainment, 0.75)
	dur, _ := run.Profile.Value(TagBenchmarkDuration, "avg")
	assertScalar(t, run.Profile, TagGoodput, 3/dur)
	got, err := ParseInputConfig(run.Profile.InputConfig)
	require.NoError(t, err)
	require.NotNil(t, got.Input)
	assert.Equal(t, map[string]float64{"time_to_first_token": 15, "inter_token_latency": 20}, got.Input.Goodput)
	var raw struct {
		Input map[string]json.RawMessage `json:"input"`
	}
	require.NoError(t, json.Unmarshal(run.Profile.InputConfig, &raw))
	assert.JSONEq(t, `{"inter_token_latency": 20, "time_to_first_token": 15}`, string(raw.Input["goodput"]))

	csv, err := os.ReadFile(filepath.Join(dir, ProfileCSVName))
	require.NoError(t, err)
	for _, row := range []string{"Good Request Count,3.00\r\n", "Goodput (requests/sec),", "SLO Attainment (ratio),0.75\r\n"} {
		assert.Contains(t, string(csv), row)
	}
}

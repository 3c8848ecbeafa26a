package results

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	fixtureDir   = "../testdata/aiperf/qwen_concurrency1/"
	fixtureJSONL = fixtureDir + RecordsName
	fixtureJSON  = fixtureDir + ProfileJSONName
)

// TestSummarizeAIPerfExportMatchesNumpy recomputes every record metric of a
// real AIPerf per-request export and checks it against numpy to 1e-9.
func TestSummarizeAIPerfExportMatchesNumpy(t *testing.T) {
	b, err := os.ReadFile("testdata/aiperf_fixture_numpy.json")
	require.NoError(t, err)
	var want map[string]map[string]float64
	require.NoError(t, json.Unmarshal(b, &want))

	p, err := SummarizeJSONL(fixtureJSONL, nil)
	require.NoError(t, err)
	for tag, stats := range want {
		m, ok := p.Metric(tag)
		require.True(t, ok, "metric %s missing", tag)
		for stat, w := range stats {
			got, ok := m.Get(stat)
			require.True(t, ok, "%s.%s missing", tag, stat)
			if w == 0 {
				assert.InDelta(t, 0, got, 1e-12, "%s.%s", tag, stat)
				continue
			}
			assert.InEpsilon(t, w, got, 1e-9, "%s.%s", tag, stat)
		}
	}
	assertScalar(t, p, TagRequestCount, 10)
	assertScalar(t, p, TagTotalISL, 1000)
}

func assertScalar(t *testing.T, p *Profile, tag string, want float64) {
	t.Helper()
	got, ok := p.Value(tag, "avg")
	require.True(t, ok, tag)
	assertClose(t, want, got, tag)
}

// TestAIPerfRecordFormulas checks AIPerf's per-record formulas on its own
// export: ITL = (latency − TTFT)/(OSL − 1), per-user throughput = 1/ITL,
// and TTST = the first chunk gap.
func TestAIPerfRecordFormulas(t *testing.T) {
	recs, err := LoadJSONL(fixtureJSONL)
	require.NoError(t, err)
	require.Len(t, recs, 10)
	for _, r := range recs {
		lat, _ := r.Get(TagRequestLatency)
		ttft, _ := r.Get(TagTTFT)
		osl, _ := r.Get(TagOSL)
		itl, ok := r.Get(TagITL)
		require.True(t, ok)
		assert.InEpsilon(t, (lat-ttft)/(osl-1), itl, 1e-12)
		otpu, _ := r.Get(TagOTPU)
		assert.InEpsilon(t, 1000/itl, otpu, 1e-12)
		ttst, _ := r.Get(TagTTST)
		assert.Equal(t, r.ICL[0], ttst)
		times := r.ChunkTimesNs()
		assert.Len(t, times, len(r.ICL)+1)
	}
}

// TestJSONLRoundTrip writes what was read and reads it back unchanged.
func TestJSONLRoundTrip(t *testing.T) {
	recs, err := LoadJSONL(fixtureJSONL)
	require.NoError(t, err)
	var buf bytes.Buffer
	w := NewJSONLWriter(&buf)
	for i := range recs {
		require.NoError(t, w.Write(&recs[i]))
	}
	again, err := ReadJSONL(&buf, "roundtrip")
	require.NoError(t, err)
	require.Len(t, again, len(recs))
	for i := range recs {
		assert.Equal(t, recs[i], again[i], "record %d", i)
	}
}

// TestReadProfileJSONFixture reads a real AIPerf aggregate with explicit
// nulls and round-trips it through simbench's writer.
func TestReadProfileJSONFixture(t *testing.T) {
	p, err := LoadProfileJSON(fixtureJSON)
	require.NoError(t, err)
	v, ok := p.Value(TagRequestLatency, "p99")
	require.True(t, ok)
	assert.Equal(t, 3909.3341161199996, v)
	v, _ = p.Value(TagRequestCount, "avg")
	assert.Equal(t, 64.0, v)
	_, ok = p.Metric(TagGoodput)
	assert.False(t, ok, "null metrics are absent")
	assert.Equal(t, "2025-11-07T13:38:54.793124", p.StartTime)
	assert.NotEmpty(t, p.InputConfig)

	var buf bytes.Buffer
	require.NoError(t, WriteProfileJSON(&buf, p))
	again, err := ReadProfileJSON(&buf)
	require.NoError(t, err)
	assert.ElementsMatch(t, p.Metrics, again.Metrics)
	assert.JSONEq(t, string(p.InputConfig), string(again.InputConfig))
}

func TestReadProfileJSONSchemas(t *testing.T) {
	tests := []struct {
		name, in string
		tag, st  string
		want     float64
	}{
		{"1.0 nulls", `{"request_latency":{"unit":"ms","avg":1.5,"p50":null},"goodput":null}`, TagRequestLatency, "avg", 1.5},
		{"1.1 count sum", `{"schema_version":"1.1","time_to_first_token":{"unit":"ms","avg":2,"count":20,"sum":40}}`, TagTTFT, "count", 20},
		{"1.5 extras ignored", `{"schema_version":"1.5","run_info":{"trial":1},"runtime_submission_invalid_reasons":[],"inter_token_latency":{"unit":"ms","avg":3}}`, TagITL, "avg", 3},
		{"unknown metric kept", `{"decode_duration":{"unit":"ms","avg":7,"p99":9}}`, "decode_duration", "p99", 9},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ReadProfileJSON(bytes.NewBufferString(tc.in))
			require.NoError(t, err)
			got, ok := p.Value(tc.tag, tc.st)
			require.True(t, ok)
			assert.Equal(t, tc.want, got)
		})
	}
	_, err := ReadProfileJSON(bytes.NewBufferString(`[1,2]`))
	assert.Error(t, err)
}

func TestJSONLErrorsNameLineAndField(t *testing.T) {
	in := "{\"metadata\":{\"session_num\":0,\"request_start_ns\":1,\"request_end_ns\":2},\"metrics\":{\"request_latency\":{\"value\":1e-6,\"unit\":\"ms\"}}}\n\n" +
		"{\"metadata\":{\"session_num\":1},\"metrics\":{\"request_latency\":{\"value\":\"x\",\"unit\":\"ms\"}}}\n"
	_, err := ReadJSONL(bytes.NewBufferString(in), "run.jsonl")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "run.jsonl:3")
	assert.Contains(t, err.Error(), `metrics.request_latency`)

	_, err = ReadJSONL(bytes.NewBufferString("{nope\n"), "bad.jsonl")
	assert.ErrorContains(t, err, "bad.jsonl:1")
	_, err = ReadJSONL(bytes.NewBufferString(`{"metrics":{}}`+"\n"), "m.jsonl")
	assert.ErrorContains(t, err, `field "metadata"`)
}

func TestNoNonFiniteInFiles(t *testing.T) {
	p := &Profile{Metrics: []MetricResult{{Tag: TagTTFT, Unit: "ms",
		Stats: map[string]float64{"avg": math.NaN(), "p50": math.Inf(1), "max": 3}}}}
	var buf bytes.Buffer
	require.NoError(t, WriteProfileJSON(&buf, p))
	assert.NotContains(t, buf.String(), "NaN")
	assert.NotContains(t, buf.String(), "Inf")
	assert.True(t, json.Valid(buf.Bytes()))
	buf.Reset()
	require.NoError(t, WriteProfileCSV(&buf, p))
	assert.NotContains(t, buf.String(), "NaN")
}

// TestReadProfileJSONRefusesImpossibleFiles: schema 9.9, a key given twice
// (a map kept the last), a negative TTFT and p99 below p50 were read and
// compared as if they were a run's statistics.
func TestReadProfileJSONRefusesImpossibleFiles(t *testing.T) {
	tests := []struct{ name, in, err string }{
		{"schema 9.9", `{"schema_version":"9.9","time_to_first_token":{"unit":"ms","avg":2}}`,
			`field "schema_version": "9.9" is not an AIPerf 1.x schema`},
		{"schema word", `{"schema_version":"one","time_to_first_token":{"unit":"ms","avg":2}}`, `"one" is not an AIPerf 1.x schema`},
		{"duplicate metric", `{"time_to_first_token":{"unit":"ms","avg":2},"time_to_first_token":{"unit":"ms","avg":900}}`,
			`field "time_to_first_token": given twice`},
		{"duplicate stat", `{"time_to_first_token":{"unit":"ms","avg":2,"avg":900}}`, `field "time_to_first_token": avg given twice`},
		{"negative TTFT", `{"time_to_first_token":{"unit":"ms","avg":-50}}`,
			`field "time_to_first_token": avg: -50 is negative, and a time_to_first_token avg never is`},
		{"negative std", `{"decode_duration":{"unit":"ms","avg":5,"std":-1}}`, "std: -1 is negative"},
		{"p99 below p50", `{"request_latency":{"unit":"ms","avg":10,"p50":10,"p90":12,"p99":8}}`,
			`field "request_latency": p99 8 is below p90 12: not a distribution's statistics`},
		{"max below min", `{"request_latency":{"unit":"ms","avg":3,"min":5,"max":2}}`, "max 2 is below min 5"},
	}
	for _, tc := range tests {
		_, err := ReadProfileJSON(strings.NewReader(tc.in))
		assert.ErrorContains(t, err, tc.err, tc.name)
	}
	for _, ok := range []string{
		`{"schema_version":"1.5","osl_mismatch_diff_pct":{"unit":"%","avg":-40,"min":-98,"max":20}}`, // a signed metric
		`{"schema_version":"1.7","request_latency":{"unit":"ms","avg":10,"p50":10,"p99":10.000000000000002}}`,
		`{"request_latency":{"unit":"ms","avg":3,"p50":3,"p99":2.9999999999999996}}`, // interpolation rounding
	} {
		_, err := ReadProfileJSON(strings.NewReader(ok))
		assert.NoError(t, err, ok)
	}
}

package peerruns

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/results"
)

// glWant is one expected statistic of a profile.
type glWant struct {
	tag, stat string
	value     float64
}

// TestGuideLLM01Stats computes AIPerf's statistics from the first
// requests of the real 0.1 file's two benchmarks and checks them against
// values worked out by hand from the same requests. Benchmark 0's first
// three requests (start_time, end_time, last_time, first_token_time,
// output_token_count, prompt_token_count):
//
//	1772546863.781876  1772546874.2183435 1772546874.168891 0.3460555076599121 213 1510
//	1772546874.2190268 1772546886.6970465 1772546886.6482093 0.3373534679412842 255 1502
//	1772546886.69748   1772546891.5845523 1772546891.532402 0.3377573490142822  97 1504
//
// so request_latency = (end − start)·1000 = 10436.467…, 12478.019…,
// 4887.072… ms; sorted, p50 is the middle one and p90 = 10436.467 +
// 0.8·(12478.020 − 10436.467) (numpy's linear rule at rank 1.8); ITL =
// (latency − TTFT)/(OSL − 1); the duration runs from the first start to
// the last end, 1772546891.5845523 − 1772546863.781876 = 27.80268 s.
func TestGuideLLM01Stats(t *testing.T) {
	f := readGL01(t)
	for _, tc := range []struct {
		name         string
		bench, count int
		want         []glWant
	}{
		{name: "synchronous, first 3 requests", bench: 0, count: 3, want: []glWant{
			{results.TagRequestLatency, "avg", 9267.186482747396},
			{results.TagRequestLatency, "p50", 10436.467409133911},
			{results.TagRequestLatency, "p90", 12069.709253311157},
			{results.TagRequestLatency, "std", 3207.390838000814},
			{results.TagRequestLatency, "min", 4887.072324752808},
			{results.TagTTFT, "avg", 340.3887748718262},
			{results.TagTTFT, "p25", 337.5554084777832},
			{results.TagITL, "avg", 47.59429294199848},
			{results.TagITL, "p99", 47.793866286853714},
			{results.TagOSL, "avg", 188.33333333333334},
			{results.TagOSL, "p75", 234},
			{results.TagISL, "std", 3.39934634239519},
			{results.TagICL, "count", 565},
			{results.TagICL, "avg", 47.39890647145499},
			{results.TagICL, "min", 0.20766258239746094},
			{results.TagICL, "max", 62.42632865905762},
			{results.TagRequestCount, "avg", 3},
			{results.TagBenchmarkDuration, "avg", 27.8026762008667},
			{results.TagRequestThroughput, "avg", 0.10790328162389203},
			{results.TagOutputThroughput, "avg", 20.321784705833},
			{results.TagTotalThroughput, "avg", 182.7521913103318},
			{results.TagTotalISL, "avg", 4516},
			{results.TagTotalOSL, "avg", 565},
		}},
		{name: "throughput, first 2 requests", bench: 1, count: 2, want: []glWant{
			{results.TagRequestLatency, "p50", 15687.861323356628},
			{results.TagRequestLatency, "std", 2340.5858278274536},
			{results.TagTTFT, "max", 9604.448318481445},
			{results.TagITL, "avg", 175.2329786255661},
			{results.TagOSL, "p25", 32.75},
			{results.TagISL, "avg", 1521.5},
			{results.TagICL, "count", 93},
			{results.TagICL, "p50", 87.9359245300293},
			{results.TagBenchmarkDuration, "avg", 18.049631357192993},
			{results.TagRequestThroughput, "avg", 0.11080558712923387},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := f.Benchmarks[0].Benchmarks[tc.bench].Results[:tc.count]
			v, err := gl01Collect("subset", rs)
			require.NoError(t, err)
			p, err := v.profile(0)
			require.NoError(t, err)
			for _, w := range tc.want {
				got, ok := p.Value(w.tag, w.stat)
				require.True(t, ok, "%s %s", w.tag, w.stat)
				assert.InEpsilon(t, w.value, got, 1e-12, "%s %s", w.tag, w.stat)
			}
			_, hasErrors := p.Value(results.TagErrorRequestCount, "avg")
			assert.False(t, hasErrors)
		})
	}
}

func readGL01(t *testing.T) *gl01File {
	b, err := os.ReadFile(glFile01)
	require.NoError(t, err)
	var f gl01File
	require.NoError(t, json.Unmarshal(b, &f))
	return &f
}

// TestGuideLLM01NoChunk checks that a result without a first chunk counts
// as a failed request, as AIPerf counts a response without content.
func TestGuideLLM01NoChunk(t *testing.T) {
	path := edited(t, glFile01, `"first_token_time":0.3460555076599121`, `"first_token_time":null`)
	run, err := Open(filepath.Join(path, "benchmark_0"))
	require.NoError(t, err)
	for tag, want := range map[string]float64{results.TagRequestCount: 10, results.TagErrorRequestCount: 1} {
		got, ok := run.Profile.Value(tag, "avg")
		require.True(t, ok, tag)
		assert.Equal(t, want, got, tag)
	}
	assert.Contains(t, strings.Join(warningTexts(run), "\n"), "1 results streamed no chunk")
}

func warningTexts(run *Run) []string {
	var out []string
	for _, w := range run.Warnings {
		out = append(out, w.Error())
	}
	return out
}

// TestGuideLLM02MatchesFile checks that what simbench writes for the 0.2
// file is the file's own request_totals, duration and metrics.
func TestGuideLLM02MatchesFile(t *testing.T) {
	b, err := os.ReadFile(glFile02)
	require.NoError(t, err)
	var f struct {
		Benchmarks []struct {
			RequestTotals map[string]float64 `json:"request_totals"`
			Duration      float64            `json:"duration"`
			Metrics       map[string]struct {
				Successful glDist `json:"successful"`
			} `json:"metrics"`
		} `json:"benchmarks"`
	}
	require.NoError(t, json.Unmarshal(b, &f))
	bm := f.Benchmarks[0]
	m := func(name string) glDist { return bm.Metrics[name].Successful }
	run, err := Open(glFile02)
	require.NoError(t, err)
	for _, w := range []glWant{
		{results.TagRequestCount, "avg", bm.RequestTotals["successful"]},
		{results.TagBenchmarkDuration, "avg", bm.Duration},
		{results.TagRequestThroughput, "avg", bm.RequestTotals["successful"] / bm.Duration},
		{results.TagRequestLatency, "avg", *m("request_latency").Mean * 1000},
		{results.TagRequestLatency, "p50", *m("request_latency").Median * 1000},
		{results.TagRequestLatency, "p99", m("request_latency").Percentiles["p99"] * 1000},
		{results.TagTTFT, "avg", *m("time_to_first_token_ms").Mean},
		{results.TagTTFT, "p50", *m("time_to_first_token_ms").Median},
		{results.TagTTFT, "p90", m("time_to_first_token_ms").Percentiles["p90"]},
		{results.TagTTFT, "std", *m("time_to_first_token_ms").StdDev},
		{results.TagITL, "avg", *m("inter_token_latency_ms").Mean},
		{results.TagITL, "max", *m("inter_token_latency_ms").Max},
		{results.TagOSL, "avg", *m("output_token_count").Mean},
		{results.TagISL, "p1", m("prompt_token_count").Percentiles["p01"]},
		{results.TagTotalOSL, "avg", *m("output_token_count").TotalSum},
		{results.TagTotalISL, "avg", *m("prompt_token_count").TotalSum},
	} {
		got, ok := run.Profile.Value(w.tag, w.stat)
		require.True(t, ok, "%s %s", w.tag, w.stat)
		assert.Equal(t, w.value, got, "%s %s", w.tag, w.stat)
	}
	_, hasErrors := run.Profile.Value(results.TagErrorRequestCount, "avg")
	assert.False(t, hasErrors, "request_totals.errored is 0")
}

// TestGuideLLMModel checks where each schema's model name is taken from.
func TestGuideLLMModel(t *testing.T) {
	name := func(s string) *string { return &s }
	for _, tc := range []struct {
		name  string
		names []*string
		want  string
	}{
		{"args.model (0.4 to 0.6)", []*string{name("m-args"), name("m-bench"), nil}, "m-args"},
		{"args.model null: the benchmark's config.backend.model", []*string{nil, name("m-bench"), name("m-spec")}, "m-bench"},
		{"no args (0.7 and later): config.spec.backend.model", []*string{nil, nil, name("e2e-mock-model")}, "e2e-mock-model"},
		{"empty names are skipped", []*string{name(""), nil, name("m-spec")}, "m-spec"},
		{"none", []*string{nil, nil, nil}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, firstModel(tc.names...))
		})
	}
}

// TestGuideLLMModelFromConfig checks that a file without args.model
// (guidellm 0.7 and later have no args) takes the model from the
// benchmark's config.backend or the file's config.spec.backend.
func TestGuideLLMModelFromConfig(t *testing.T) {
	for _, tc := range []struct{ name, old, repl, want string }{
		{"benchmark config.backend.model", `"backend": {"target": "http://redacted-host:8000", "model": null`,
			`"backend": {"target": "http://redacted-host:8000", "model": "m-bench"`, "m-bench"},
		{"file config.spec.backend.model", `{"metadata": {`, `{"config": {"spec": {"backend": {"model": "m-spec"}}}, "metadata": {`, "m-spec"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run, err := Open(filepath.Join(edited(t, glFileA, tc.old, tc.repl), "benchmark_0"))
			require.NoError(t, err)
			ic, err := results.ParseInputConfig(run.Profile.InputConfig)
			require.NoError(t, err)
			assert.Equal(t, []string{tc.want}, ic.Endpoint.ModelNames)
		})
	}
}

// TestGuideLLMOldSchemasBadInput checks that broken 0.1 and 0.2 files
// fail with the file, the benchmark and the field.
func TestGuideLLMOldSchemasBadInput(t *testing.T) {
	for _, tc := range []struct {
		name, path, suffix string
		want               []string
	}{
		{name: "0.1 several benchmarks", path: glFile01,
			want: []string{"guidellm_report.json: a guidellm file of 2 benchmarks: name one as", "benchmark_N"}},
		{name: "0.1 benchmark out of range", path: glFile01, suffix: "benchmark_2",
			want: []string{"guidellm_report.json: no benchmark 2 (the file has 2)"}},
		{name: "0.1 result without end_time", path: edited(t, glFile01, `"end_time":1772546874.2183435`, `"end":1772546874.2183435`),
			suffix: "benchmark_0", want: []string{"guidellm_report.json: benchmarks[0].benchmarks[0]: field \"results[0].end_time\" is missing"}},
		{name: "0.1 token count not a number", path: edited(t, glFile01, `"output_token_count":213,"last_time"`, `"output_token_count":"213","last_time"`),
			suffix: "benchmark_0", want: []string{"guidellm_report.json:1: field \"benchmarks.benchmarks.results.output_token_count\"", "is not a int"}},
		{name: "unknown schema", path: edited(t, glFile01, `{"benchmarks":[{"benchmarks":[`, `{"benchmarks":[{"runs":[`),
			want: []string{"guidellm_report.json: benchmarks[0]: a guidellm benchmark of no known schema", "\"request_totals\""}},
		{name: "0.2 no totals", path: edited(t, glFile02, `"request_totals"`, `"request_sums"`),
			want: []string{"benchmarks_stripped.json: benchmarks[0]: field \"request_totals\" is missing"}},
		{name: "0.2 no duration", path: edited(t, glFile02, `"duration": 29.997201442718506`, `"span": 29.997201442718506`),
			want: []string{"benchmarks_stripped.json: benchmarks[0]: field \"duration\" is missing"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Open(filepath.Join(tc.path, tc.suffix))
			require.Error(t, err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

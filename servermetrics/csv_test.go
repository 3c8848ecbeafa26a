package servermetrics

import (
	"bytes"
	"encoding/csv"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simbench/simbench/results"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite golden files")

const csvGolden = "server_metrics_export.golden.csv"

// fixtureExport has a labelled gauge with a quoted description, an
// unlabelled gauge, an info gauge, a counter on two endpoints (one rate
// not finite), a labelled histogram with buckets, one without
// observations, and an untyped family.
func fixtureExport() *Export {
	const fe, w0 = "http://localhost:8000/metrics", "http://10.0.0.7:8081/metrics"
	pct := func(prefix string, base float64) StatValues {
		var out StatValues
		for i, p := range results.Percentiles {
			out = append(out, StatValue{results.PercentileName(p) + prefix, base + float64(i)/8})
		}
		return out
	}
	gauge := append(StatValues{{"avg", 0.19125}, {"min", 0}, {"max", 0.202}, {"std", 0.0381}}, pct("", 0.1)...)
	hist := append(StatValues{{"count", 19}, {"sum", 259.87}, {"avg", 13.677368}, {"count_rate", 0.359},
		{"sum_rate", 4.9}}, pct("_estimate", 2.25)...)
	buckets := StatValues{{"0.5", 0}, {"1", 0}, {"2.5", 1}, {"10", 2}, {"+Inf", 16}}
	return &Export{SchemaVersion: SchemaVersion, BenchmarkID: "2900a136-3c1a-4520-adaa-5719822b729b",
		Metrics: map[string]*Metric{
			"vllm:kv_cache_usage_perc": {Type: KindGauge, Description: "KV-cache usage, 1 means 100 percent.", Unit: "percent",
				Series: []SeriesStats{{EndpointURL: w0, Labels: map[string]string{"engine": "0", "model_name": "Qwen/Qwen3-0.6B"}, Stats: gauge}}},
			"dynamo_frontend_inflight_requests": {Type: KindGauge, Description: "Inflight requests", Unit: "requests",
				Series: []SeriesStats{{EndpointURL: fe, Stats: gauge}}},
			"vllm:cache_config_info": {Type: KindGauge, Description: "Information of the LLMEngine CacheConfig",
				Series: []SeriesStats{{EndpointURL: w0, Labels: map[string]string{"block_size": "16", "cache_dtype": "auto"},
					Stats: StatValues{{"avg", 1}}}}},
			"vllm:request_success": {Type: KindCounter, Description: `Count of "successfully" processed requests.`, Unit: "requests",
				Series: []SeriesStats{
					{EndpointURL: w0, Labels: map[string]string{"engine": "0", "finished_reason": "stop", "model_name": "Qwen/Qwen3-0.6B"},
						Stats: StatValues{{"total", 19}, {"rate", 0.35849}}},
					{EndpointURL: fe, Labels: map[string]string{"engine": "0", "finished_reason": "length", "model_name": "Qwen/Qwen3-0.6B"},
						Stats: StatValues{{"total", 0}, {"rate", math.NaN()}}},
				}},
			"dynamo_frontend_time_to_first_token_seconds": {Type: KindHistogram, Description: "Time to first token", Unit: "seconds",
				Series: []SeriesStats{
					{EndpointURL: fe, Labels: map[string]string{"model": "qwen"}, Stats: hist, Buckets: buckets},
					{EndpointURL: fe, Labels: map[string]string{"model": "llama"}, Stats: StatValues{{"count", 0}},
						Buckets: StatValues{{"0.5", 0}, {"+Inf", 0}}},
				}},
			"process_open_fds": {Type: KindUnknown, Description: "Number of open file descriptors.",
				Series: []SeriesStats{{EndpointURL: "sim://worker-0/metrics", Stats: StatValues{{"avg", 12}, {"min", 12}, {"max", math.Inf(1)}}}}},
		}}
}

func TestCSVGolden(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, writeCSV(&buf, fixtureExport()))
	got := buf.Bytes()
	path := filepath.Join("testdata", csvGolden)
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to create %s", path)
	assert.Equal(t, string(want), string(got))
}

// Each section parses as CSV with one header and rows of its width, in
// AIPerf's order, and no NaN or Inf reaches the file.
func TestCSVSections(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, writeCSV(&buf, fixtureExport()))
	out := buf.String()
	assert.NotContains(t, strings.ToLower(out), "nan")
	assert.NotContains(t, out, "Inf,")
	body := out[strings.Index(out, "#\n")+2:]
	sections := strings.Split(strings.TrimSuffix(body, "\r\n"), "\r\n\r\n")
	require.Len(t, sections, 5)
	wantHeads := []string{"Endpoint,Type,Metric,Unit,avg,", "Endpoint,Type,Metric,Unit,total,rate,rate_avg,rate_min,rate_max,rate_std,",
		"Endpoint,Type,Metric,Unit,count,count_rate,sum,sum_rate,avg,p1_estimate,", "Endpoint,Type,Metric,Unit,avg,",
		"Endpoint,Metric,Key,Value,Description\r\n"}
	wantRows := []int{2, 2, 2, 1, 2}
	for i, s := range sections {
		assert.True(t, strings.HasPrefix(s, wantHeads[i]), "section %d: %q", i, s)
		recs, err := csv.NewReader(strings.NewReader(s + "\r\n")).ReadAll()
		require.NoError(t, err, "section %d", i)
		assert.Len(t, recs, 1+wantRows[i], "section %d", i)
	}
}

func TestCSVEndpoint(t *testing.T) {
	for in, want := range map[string]string{
		"http://localhost:8000/metrics":     "localhost:8000",
		"https://host:9400/api/metrics":     "host:9400/api",
		"sim://frontend/metrics":            "frontend",
		"http://node1:8081":                 "node1:8081",
		"http://node1:8081/":                "node1:8081/",
		"http://u:p@node1:8081/x/metrics/y": "u:p@node1:8081/x/metrics/y",
	} {
		assert.Equal(t, want, csvEndpoint(in), in)
	}
}

func TestCSVLabelOrder(t *testing.T) {
	row := func(name string, labels map[string]string) *csvRow {
		return &csvRow{name: name, series: &SeriesStats{Labels: labels}}
	}
	tests := []struct {
		name string
		rows []*csvRow
		want []string
	}{
		{"none", []*csvRow{row("a", nil)}, nil},
		{"exclusive before shared", []*csvRow{
			row("a", map[string]string{"model": "m", "engine": "0", "reason": "stop"}),
			row("b", map[string]string{"model": "m", "engine": "0"}),
		}, []string{"reason", "engine", "model"}},
		{"families by smallest key", []*csvRow{
			row("a", map[string]string{"zone": "z", "b": "1"}),
			row("b", map[string]string{"c": "1"}),
		}, []string{"b", "zone", "c"}},
		{"info labels ignored", []*csvRow{
			row("x_info", map[string]string{"version": "1"}),
			row("b", map[string]string{"c": "1"}),
		}, []string{"c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, csvLabelOrder(tt.rows))
		})
	}
}

func TestWriteCSVRecordQuoting(t *testing.T) {
	var b bytes.Buffer
	writeCSVRecord(&b, []string{"plain", " lead space", "a,b", `say "hi"`, "two\nlines", ""})
	assert.Equal(t, "plain, lead space,\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\",\r\n", b.String())
}

func TestCSVStat(t *testing.T) {
	s := StatValues{{"count", 19}, {"sum", 2.5}, {"avg", math.NaN()}, {"total", 19}, {"count_rate", math.Inf(1)}}
	for name, want := range map[string]string{"count": "19", "sum": "2.5000", "avg": "", "total": "19.0000",
		"count_rate": "", "p99": ""} {
		assert.Equal(t, want, csvStat(s, name), name)
	}
}

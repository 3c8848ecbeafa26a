package peerruns

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/results"
)

const (
	sglDetailed = "testdata/sglang-bench/sglang-0.5.9-detailed.jsonl"
	sglRates    = "testdata/sglang-bench/sglang-2024-online-5rates.jsonl"
	vllmLambda  = "testdata/vllm-bench/vllm-0.5.4img-lambdalabs-detailed.json"
	vllmAscend  = "testdata/vllm-bench/vllm-ascend-nightly-qps4.json"
)

// TestSGLangAndListsBadInput checks that broken SGLang and detailed vLLM
// files fail with the file, the line and the field.
func TestSGLangAndListsBadInput(t *testing.T) {
	for _, tc := range []struct {
		name, path, suffix string
		want               []string
	}{
		{name: "Infinity in a statistic", path: edited(t, sglRates, `"median_ttft_ms": 85.74514742940664`, `"median_ttft_ms": Infinity`), suffix: "run_0",
			want: []string{"sglang-2024-online-5rates.jsonl:1: field \"median_ttft_ms\": Infinity is not a number (SGLang writes it only for request_rate)"}},
		{name: "-Infinity in a total, later line", path: edited(t, sglRates, `"total_input_tokens": 1629242`, `"total_input_tokens": -Infinity`), suffix: "run_4",
			want: []string{"sglang-2024-online-5rates.jsonl:5: field \"total_input_tokens\": -Infinity is not a number"}},
		{name: "NaN nested in server_info", path: edited(t, sglDetailed, `"mem_fraction_static": 0.9`, `"mem_fraction_static": NaN`),
			want: []string{"sglang-0.5.9-detailed.jsonl:1: field \"mem_fraction_static\": NaN is not a number"}},
		{name: "Infinity in a per-request list", path: edited(t, sglDetailed, `"ttfts": [0.491012881975621`, `"ttfts": [Infinity`),
			want: []string{"sglang-0.5.9-detailed.jsonl:1: field \"ttfts\": Infinity is not a number"}},
		{name: "statistic a string", path: edited(t, sglRates, `"mean_e2e_latency_ms": 7840.616212638561`, `"mean_e2e_latency_ms": "slow"`), suffix: "run_0",
			want: []string{"sglang-2024-online-5rates.jsonl:1: field \"mean_e2e_latency_ms\": \"slow\" is not a number"}},
		{name: "list entry not a number", path: edited(t, sglDetailed, `"output_lens": [38,`, `"output_lens": ["x",`),
			want: []string{"sglang-0.5.9-detailed.jsonl:1: field \"output_lens\"", "is not a float64"}},
		{name: "lists of different lengths", path: edited(t, sglDetailed, `"errors": ["",`, `"errors": [`),
			want: []string{"sglang-0.5.9-detailed.jsonl:1: field \"errors\": 99 entries, but ttfts has 100"}},
		{name: "no completed", path: edited(t, sglRates, `"completed": 300}`, `"done": 300}`), suffix: "run_0",
			want: []string{"sglang-2024-online-5rates.jsonl:1: field \"completed\" is missing"}},
		{name: "several runs unnamed", path: sglRates,
			want: []string{"an sglang bench_serving file of 7 runs: name one as", "run_N"}},
		{name: "run out of range", path: sglRates, suffix: "run_7",
			want: []string{"no run 7 (the file has 7)"}},
		{name: "run number absurd", path: sglDetailed, suffix: "run_99999999999999999999",
			want: []string{"no run -2 (the file has 1)"}},
		{name: "vllm detailed list missing", path: edited(t, vllmLambda, `"input_lens": [`, `"input_lengths": [`),
			want: []string{"vllm-0.5.4img-lambdalabs-detailed.json: field \"input_lens\" is missing"}},
		{name: "vllm detailed list entry wrong", path: edited(t, vllmLambda, `"errors": ["",`, `"errors": [7,`),
			want: []string{"vllm-0.5.4img-lambdalabs-detailed.json:", "field \"errors", "is not a string"}},
		{name: "vllm Infinity is not JSON", path: edited(t, vllmAscend, `"mean_ttft_ms": 189.12410335615277`, `"mean_ttft_ms": Infinity`),
			want: []string{"not an inference-perf report"}},
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

// TestDetectSGLang names SGLang results, as .jsonl or .json, and their
// runs, and nothing for JSONL files of other kinds.
func TestDetectSGLang(t *testing.T) {
	asJSON := filepath.Join(t.TempDir(), "one-run.json")
	b, err := os.ReadFile(sglDetailed)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(asJSON, b, 0o644))
	for path, want := range map[string]string{
		sglDetailed:                   FormatSGLangBench,
		sglRates:                      FormatSGLangBench,
		sglRates + "/run_6":           FormatSGLangBench,
		sglDetailed + "/run_0":        FormatSGLangBench,
		asJSON:                        FormatSGLangBench,
		vllmLambda:                    FormatVLLMBench,
		vllmAscend:                    FormatVLLMBench,
		vllmLambda + "/run_0":         "",
		sglRates + "/benchmark_0":     "",
		"../compare/testdata/dynosim": "",
	} {
		assert.Equal(t, want, Detect(path), path)
	}
	others := append(findJSONL(t, "../testdata"), findJSONL(t, "../compare/testdata")...)
	require.NotEmpty(t, others)
	for _, p := range others {
		assert.Equal(t, "", Detect(p), p)
	}
}

// TestSGLangRuns checks that each line is its own run.
func TestSGLangRuns(t *testing.T) {
	for i, rate := range []float64{1, 2, 4, 8, 16, 4, 8} {
		name := "run_" + strconv.Itoa(i)
		run, err := Open(filepath.Join(sglRates, name))
		require.NoError(t, err)
		assert.Equal(t, "sglang-2024-online-5rates/"+name, run.Name)
		ic, err := results.ParseInputConfig(run.Profile.InputConfig)
		require.NoError(t, err)
		assert.Equal(t, rate, ic.Loadgen.RequestRate, name)
	}
	run, err := Open(sglDetailed)
	require.NoError(t, err)
	ic, err := results.ParseInputConfig(run.Profile.InputConfig)
	require.NoError(t, err)
	assert.Zero(t, ic.Loadgen.RequestRate, "request_rate Infinity is no rate")
	assert.Equal(t, 100, ic.Loadgen.Concurrency)
}

// findJSONL lists the .jsonl files under dir.
func findJSONL(t *testing.T, dir string) []string {
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(p) == ".jsonl" {
			out = append(out, p)
		}
		return nil
	})
	return out
}

package peerruns

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// edited writes a copy of the real file src with one replacement.
func edited(t *testing.T, src, old, repl string) string {
	b, err := os.ReadFile(src)
	require.NoError(t, err)
	require.Contains(t, string(b), old)
	path := filepath.Join(t.TempDir(), filepath.Base(src))
	require.NoError(t, os.WriteFile(path, []byte(strings.Replace(string(b), old, repl, 1)), 0o644))
	return path
}

const vllmRun = "testdata/vllm-bench/sweep-max_num_seqs4-run0.json"

// TestVLLMAndGuideLLMBadInput checks that broken files fail with the
// file, the line or benchmark, and the field.
func TestVLLMAndGuideLLMBadInput(t *testing.T) {
	for _, tc := range []struct {
		name, path, suffix string
		want               []string
	}{
		{name: "vllm statistic not a number", path: edited(t, vllmRun, `"p99_ttft_ms": 762.4942294094944`, `"p99_ttft_ms": "slow"`),
			want: []string{"sweep-max_num_seqs4-run0.json:27: field \"p99_ttft_ms\": \"slow\" is not a number"}},
		{name: "vllm no completed", path: edited(t, vllmRun, `"completed": 8,`, `"done": 8,`),
			want: []string{"sweep-max_num_seqs4-run0.json: field \"completed\" is missing"}},
		{name: "guidellm several benchmarks", path: glFileA,
			want: []string{"a guidellm file of 5 benchmarks: name one as", "benchmark_N"}},
		{name: "guidellm benchmark out of range", path: glFileA, suffix: "benchmark_9",
			want: []string{"no benchmark 9 (the file has 5)"}},
		{name: "guidellm no totals", path: edited(t, glFileA, `"request_totals"`, `"request_sums"`), suffix: "benchmark_0",
			want: []string{"guidellm-results.json: benchmarks[0]: field \"metrics.request_totals\" is missing"}},
		{name: "guidellm bad statistic", path: edited(t, glFileA, `"time_to_first_token_ms": {"successful": {"mean": `, `"time_to_first_token_ms": {"successful": {"mean": "x", "m": `),
			suffix: "benchmark_0", want: []string{"benchmarks[0]: field \"metrics.time_to_first_token_ms\"", "json: cannot unmarshal string"}},
		{name: "not a peer file", path: "testdata/README.md",
			want: []string{"not an inference-perf report, a vllm bench serve or SGLang bench_serving result, or a guidellm benchmarks file"}},
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

// TestDetect names the format of each kind of path and nothing for
// others.
func TestDetect(t *testing.T) {
	for path, want := range map[string]string{
		ipReport:              FormatInferencePerf,
		ipReport + "/stage_1": FormatInferencePerf,
		ipReport + "/stage_0_lifecycle_metrics.json": FormatInferencePerf,
		ipReport + "/summary_lifecycle_metrics.json": "",
		glFileA:                  FormatGuideLLM,
		glFileA + "/benchmark_2": FormatGuideLLM,
		vllmRun:                  FormatVLLMBench,
		"testdata":               "",
		"../compare/testdata/dynosim/report.json": "",
		"nonexistent/stage_0":                     "",
	} {
		assert.Equal(t, want, Detect(path), path)
	}
}

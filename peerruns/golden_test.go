package peerruns

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/results"
)

// update rewrites the golden files: go test ./peerruns/ -update
var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

const (
	ipReport  = "testdata/inference-perf/20260218-150304-codellama-34b-tp2-general/results"
	glFileA   = "testdata/guidellm/jan20-prefill-llama7b-tp1-1/guidellm-results.json"
	glFile01  = "testdata/guidellm/optimum-neuron-std-8b-v2/guidellm_report.json"
	glFile02  = "testdata/guidellm/guidellm-unit-fixture/benchmarks_stripped.json"
	glFile05  = "testdata/guidellm/v05dev0-gptoss20b-tp4-sync/openai_gpt-oss-20b_tp4_quant-none_benchmarks.json"
	glFile05c = "testdata/guidellm/v05dev0-sanity-qwen3-4b-tp4-concurrent4/Qwen_Qwen3-4B-Thinking-2507_tp4_quant-fp8_benchmarks.json"
)

// TestGolden reads every real file under testdata and compares what each
// reader makes of it with its golden file.
func TestGolden(t *testing.T) {
	for _, tc := range []struct{ path, golden string }{
		{ipReport + "/stage_0", "inference-perf-stage0.golden"},
		{ipReport + "/stage_1_lifecycle_metrics.json", "inference-perf-stage1.golden"},
		// other inference-perf versions and layouts: 0.5.0's random data with
		// normal lengths, its config.yaml beside the stage files; 0.7.0's
		// stage file with a file prefix and prompt_tokens, without config.yaml
		{ipStaircase + "/stage_0", "inference-perf-0.5-stage0.golden"},
		{ipStaircase + "/stage_1_lifecycle_metrics.json", "inference-perf-0.5-stage1.golden"},
		{ipAgentic, "inference-perf-0.7-prefixed-noconfig.golden"},
		{glFileA + "/benchmark_0", "guidellm-benchmark0.golden"},
		{glFileA + "/benchmark_4", "guidellm-benchmark4.golden"},
		{glFile01 + "/benchmark_0", "guidellm-v01-benchmark0.golden"},
		{glFile01 + "/benchmark_1", "guidellm-v01-benchmark1.golden"},
		{glFile02, "guidellm-v02.golden"},
		{glFile05, "guidellm-v05-lists-sync.golden"},
		{glFile05c, "guidellm-v05-lists-concurrent.golden"},
		{"testdata/vllm-bench/sweep-max_num_seqs4-run0.json", "vllm-bench-sweep-run0.golden"},
		{"testdata/vllm-bench/all-requests-failed.json", "vllm-bench-all-failed.golden"},
		{"testdata/vllm-bench/vllm-0.5.4img-lambdalabs-detailed.json", "vllm-bench-0.5.4-lambdalabs-detailed.golden"},
		{"testdata/vllm-bench/vllm-ascend-nightly-qps4.json", "vllm-bench-ascend-nightly-qps4.golden"},
		{"testdata/vllm-bench/vllm-fork-2025-09-ascend-chat.json", "vllm-bench-fork-2025-09-ascend-chat.golden"},
		{"testdata/vllm-bench/vllm-0.11-e2el-c100.json", "vllm-bench-0.11-e2el-c100.golden"},
		{"testdata/vllm-bench/vllm-0.19-detailed-c1.json", "vllm-bench-0.19-detailed-c1.golden"},
		{"testdata/sglang-bench/sglang-2024-online-5rates.jsonl/run_0", "sglang-bench-2024-online-run0.golden"},
		{"testdata/sglang-bench/sglang-2024-online-5rates.jsonl/run_4", "sglang-bench-2024-online-run4.golden"},
		{"testdata/sglang-bench/sglang-2024-online-5rates.jsonl/run_6", "sglang-bench-2024-online-run6.golden"},
		{"testdata/sglang-bench/sglang-0.5.9-detailed.jsonl", "sglang-bench-0.5.9-detailed.golden"},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			run, err := Open(tc.path)
			require.NoError(t, err)
			golden(t, tc.golden, describe(t, run))
		})
	}
}

// describe renders a run for its golden file: what it is, its warnings,
// its workload and its profile as profile_export_aiperf.json.
func describe(t *testing.T, run *Run) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "name: %s\nformat: %s\n", run.Name, run.Format)
	for _, w := range run.Warnings {
		fmt.Fprintf(&b, "warning: %v\n", w)
	}
	for _, n := range run.WorkloadNotes {
		fmt.Fprintf(&b, "workload note: %v\n", n)
	}
	if wl := run.Workload; wl != nil {
		fmt.Fprintf(&b, "workload: %d requests, block %d, concurrency %d, digest %s\n  source %s\n",
			len(wl.Requests), wl.BlockSize, wl.Concurrency, wl.Digest, wl.Source)
		for _, r := range wl.Requests[:min(3, len(wl.Requests))] {
			fmt.Fprintf(&b, "  t=%gms isl=%d osl=%d hash_ids=%v\n", r.TimestampMs, r.InputLength, r.OutputLength, r.HashIDs)
		}
	} else {
		fmt.Fprintf(&b, "workload: none (%s)\n", run.NoWorkload)
	}
	require.NoError(t, results.WriteProfileJSON(&b, run.Profile))
	return b.Bytes()
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file %s: run go test -update", path)
	assert.Equal(t, string(want), string(got), "output differs from %s (run go test -update if the change is intended)", path)
}

// TestNoNonFinite checks no reader writes NaN or Inf.
func TestNoNonFinite(t *testing.T) {
	for _, p := range []string{ipReport + "/stage_0", glFileA + "/benchmark_1", glFile01 + "/benchmark_1", glFile02, "testdata/vllm-bench/all-requests-failed.json"} {
		run, err := Open(p)
		require.NoError(t, err)
		var b bytes.Buffer
		require.NoError(t, results.WriteProfileJSON(&b, run.Profile))
		assert.False(t, strings.Contains(b.String(), "NaN") || strings.Contains(b.String(), "Inf"), p)
	}
}

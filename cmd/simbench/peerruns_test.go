package main

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

// The real result files of other tools that package peerruns reads (see
// peerruns/testdata/README.md for their provenance).
const (
	peerData       = "../../peerruns/testdata/"
	ipReportDir    = peerData + "inference-perf/20260218-150304-codellama-34b-tp2-general/results"
	guidellmFile   = peerData + "guidellm/jan20-prefill-llama7b-tp1-1/guidellm-results.json"
	vllmBenchFile  = peerData + "vllm-bench/sweep-max_num_seqs4-run0.json"
	inferencePerf0 = ipReportDir + "/stage_0"
)

// TestCompareInferencePerfStages compares the two stages of a real
// inference-perf report end to end: the derived ITL (the only ITL it has)
// is compared, and the report says what inference-perf defines otherwise.
func TestCompareInferencePerfStages(t *testing.T) {
	t.Parallel()
	code, out, errOut := compareCLI("compare", inferencePerf0, ipReportDir+"/stage_1_lifecycle_metrics.json", "--format", "json")
	require.Equal(t, exitOK, code, errOut)
	var got struct {
		jsonMetrics
		Reference struct{ Name, Format string }
		Warnings  []string
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	assert.Equal(t, "20260218-150304-codellama-34b-tp2-general/stage_0", got.Reference.Name)
	rows := map[string]float64{}
	for _, r := range got.Metrics {
		if r.ErrorPct != nil {
			rows[r.Metric+"."+r.Stat] = *r.ErrorPct
		}
	}
	// (E2E − TTFT)/(248 − 1): 14.771 ms at 8 requests/s, 16.998 ms at 20.
	assert.InDelta(t, 15.064, rows["inter_token_latency.avg"], 0.001)
	assert.InDelta(t, 150, rows["request_count.avg"], 1e-9)
	assert.NotContains(t, rows, "inter_token_latency.p50", "no percentile of the derived ITL is invented")
	all := strings.Join(got.Warnings, "\n")
	assert.Contains(t, all, "#565, #566")
	assert.Contains(t, all, "(OSL − 1) = 14.77 ms with the configured OSL 248")
}

// TestCompareMixedPeers: a guidellm benchmark and a vllm bench result on
// either side, each with the warning about its own definitions.
func TestCompareMixedPeers(t *testing.T) {
	t.Parallel()
	code, out, errOut := compareCLI("compare", guidellmFile+"/benchmark_0", vllmBenchFile, "--format", "markdown")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "Inter Token Latency")
	assert.Contains(t, out, "guidellm's percentiles come from its own estimator")
	assert.Contains(t, out, "compared as inter_chunk_latency")

	code, _, errOut = compareCLI("compare", guidellmFile, vllmBenchFile)
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, errOut, "a guidellm file of 5 benchmarks: name one as")
}

// TestSummarizePeerRun writes an inference-perf stage as AIPerf's files,
// which read back as the same profile, and prints the warnings.
func TestSummarizePeerRun(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "out")
	code, out, errOut := compareCLI("summarize", inferencePerf0, "-o", dir)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "summarized 4800 valid requests")
	assert.Contains(t, errOut, "warning: 20260218-150304-codellama-34b-tp2-general/stage_0: inference-perf re-counts output tokens")
	p, err := results.LoadProfileJSON(filepath.Join(dir, results.ProfileJSONName))
	require.NoError(t, err)
	itl, ok := p.Value(results.TagITL, "avg")
	require.True(t, ok)
	assert.InDelta(t, 14.7707, itl, 1e-4)

	code, _, errOut = compareCLI("summarize", ipReportDir, "-o", dir)
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, errOut, "an inference-perf report of 2 stages (0, 1): name one as")
}

// TestCalibrateTargetsFromInferencePerf: --real takes an inference-perf
// stage beside simbench's and AIPerf's runs, in the order given, with the
// workload rebuilt from the report's config.yaml; a run without a
// described workload is refused with the reason.
func TestCalibrateTargetsFromInferencePerf(t *testing.T) {
	t.Parallel()
	var log strings.Builder
	ts, err := loadTargets([]string{inferencePerf0, "../../testdata/aiperf/qwen_concurrency1"}, &log)
	require.NoError(t, err)
	require.Len(t, ts, 2)
	assert.Equal(t, "20260218-150304-codellama-34b-tp2-general/stage_0", ts[0].Name)
	assert.Equal(t, "qwen_concurrency1", ts[1].Name)
	wl := ts[0].Workload
	require.Len(t, wl.Requests, 4800, "8 requests/s for 600 s")
	assert.Equal(t, 22400, wl.Concurrency, "224 workers × 100")
	assert.Equal(t, 248, wl.Requests[0].OutputLength)
	assert.Contains(t, log.String(), "warning: 20260218-150304-codellama-34b-tp2-general/stage_0: request i sends prompt i mod 100")

	_, err = loadTargets([]string{vllmBenchFile}, &log)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "calibrate needs the workload the run replayed, and vllm bench serve's result does not record its dataset")
}

// TestCalibrateOnInferencePerfStage fits the simulator to an
// inference-perf stage through the CLI: a report whose config.yaml asks
// for 10 requests, so that the fit takes seconds.
func TestCalibrateOnInferencePerfStage(t *testing.T) {
	t.Parallel()
	report := t.TempDir()
	stage, err := os.ReadFile(filepath.Join(ipReportDir, "stage_0_lifecycle_metrics.json"))
	require.NoError(t, err)
	base, err := os.ReadFile(filepath.Join(ipReportDir, "config.yaml"))
	require.NoError(t, err)
	cfg := strings.Replace(strings.Replace(string(base),
		"- rate: 8.0\n    duration: 600\n  - rate: 20.0\n    duration: 600", "- rate: 2.0\n    duration: 5", 1), "num_workers: 224", "num_workers: 1", 1)
	require.NoError(t, os.WriteFile(filepath.Join(report, "config.yaml"), []byte(cfg), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(report, "stage_0_lifecycle_metrics.json"), stage, 0o644))
	out := filepath.Join(t.TempDir(), "sim.yaml")
	code, stdout, errOut := compareCLI("calibrate", "--real", report, "-o", out, "--max-evals", "2", "--sim-seeds", "1")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, stdout, filepath.Base(report)+"/stage_0")
	assert.Contains(t, stdout, "concurrency 100–100", "the client's cap: 1 worker × 100")
	assert.FileExists(t, out)
}

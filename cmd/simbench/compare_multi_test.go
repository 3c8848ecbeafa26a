package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simbench/simbench/compare"
	"github.com/simbench/simbench/results"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// repeatedPair writes n reference runs (TTFT 30 ms + jitter) into
// root/real/run_000K and n candidate runs 20 % slower into root/sim/….
func repeatedPair(t *testing.T, root string, n int) (real, simDir string) {
	t.Helper()
	jitter := []float64{0, 1, -1, 0.5, -0.5}
	for i := range n {
		for _, side := range []struct {
			name string
			ttft float64
		}{{"real", 30}, {"sim", 36}} {
			ttft := side.ttft + jitter[i%len(jitter)]
			writeRun(t, filepath.Join(root, side.name, compare.RepeatDirName(i)), runSpec{requests: 6, chunks: 5, workers: 1,
				intervalMs: 100, ttftMs: func(int) float64 { return ttft }, gapMs: func(int, int) float64 { return 10 }})
		}
	}
	return filepath.Join(root, "real"), filepath.Join(root, "sim")
}

type multiJSON struct {
	Mode       string `json:"mode"`
	References []struct {
		Path string `json:"path"`
	} `json:"references"`
	Metrics []struct {
		Metric, Stat string
		ErrorPct     *float64 `json:"error_pct"`
		P            float64  `json:"p_value"`
		Significant  bool     `json:"significant"`
	} `json:"metrics"`
	Verdicts []struct{ Field, Status string } `json:"verdicts"`
}

func TestCompareRunListsCLI(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	real, simDir := repeatedPair(t, root, 4)
	list := strings.Join([]string{filepath.Join(real, "run_0001"), filepath.Join(real, "run_0002"),
		filepath.Join(real, "run_0003"), filepath.Join(real, "run_0004")}, ",")
	out := filepath.Join(root, "cmp.json")
	plotsDir := filepath.Join(root, "plots")
	code, _, stderr := compareCLI("compare", list, simDir, "--format", "json", "-o", out, "--plots", plotsDir,
		"--fail-above", "time_to_first_token.avg=10%,inter_token_latency.avg=10%")
	require.Equal(t, 3, code, stderr)
	assert.Contains(t, stderr, "threshold breached: time_to_first_token.avg")
	var got multiJSON
	require.NoError(t, json.Unmarshal(runReadFile(t, out), &got))
	assert.Equal(t, "multi-run", got.Mode)
	require.Len(t, got.References, 4)
	assert.Equal(t, filepath.Join(real, "run_0003"), got.References[2].Path)
	for _, m := range got.Metrics {
		if m.Metric == results.TagTTFT && m.Stat == "avg" {
			assert.InDelta(t, 2.0/70, m.P, 1e-12)
			assert.True(t, m.Significant)
			assert.InDelta(t, 600.0/30.25, *m.ErrorPct, 1e-9)
		}
	}
	assert.Equal(t, []struct{ Field, Status string }{{"time_to_first_token.avg", "breach"}, {"inter_token_latency.avg", "pass"}}, got.Verdicts)
	checkPNG(t, filepath.Join(plotsDir, "error_pct.png"))

	// --reference b swaps the lists; three runs a side can never be significant
	code, stdout, stderr := compareCLI("compare", simDir+"/run_0001,"+simDir+"/run_0002,"+simDir+"/run_0003",
		real+"/run_0001,"+real+"/run_0002,"+real+"/run_0003", "--reference", "b", "--fail-above", "time_to_first_token.avg=10%")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "3 reference run(s) vs 3 candidate run(s)")
	assert.Contains(t, stdout, "~ +20.00%")
	assert.Contains(t, stdout, "smallest possible p-value is 0.100")
	assert.Contains(t, stdout, "reference: "+real+"/run_0001")
}

func TestCompareRunListsUsageErrors(t *testing.T) {
	root := t.TempDir()
	real, simDir := repeatedPair(t, root, 2)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{real + ",", simDir}, "empty element"},
		{[]string{real, simDir, "--records-a", "x.jsonl"}, "--records-a/--records-b apply to one run per side"},
		{[]string{real, simDir, "--alpha", "1"}, "--alpha must be in (0, 1)"},
		{[]string{real, simDir, "--format", "csv"}, "--format must be"},
	} {
		code, _, stderr := compareCLI(append([]string{"compare"}, tc.args...)...)
		assert.Equal(t, 2, code, "%v: %s", tc.args, stderr)
		assert.Contains(t, stderr, tc.want)
	}
}

// TestSimRepeat: --repeat N writes DIR/run_0001 … with simulator seeds
// seed, seed+1, … on one workload; step jitter makes the runs differ.
func TestSimRepeat(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "jitter.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("seed: 11\ntiming:\n  jitter: 0.2\n"), 0o644))
	out := filepath.Join(dir, "sim")
	code, stdout, stderr := runSim(t, "--config", cfg, "--concurrency", "2", "--request-count", "8", "--isl", "40",
		"--osl", "16", "--random-seed", "4", "--sim-seed", "11", "--repeat", "3", "-o", out)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, 3, strings.Count(stdout, "simulated 8 requests"))
	var ttfts []float64
	var workloads []string
	for i := range 3 {
		run := filepath.Join(out, compare.RepeatDirName(i))
		p, _ := requireSelfConsistent(t, run)
		v, ok := p.Value(results.TagITL, "avg")
		require.True(t, ok)
		ttfts = append(ttfts, v)
		var meta struct {
			InputConfig struct {
				Sim      struct{ Seed int64 } `json:"sim"`
				Workload json.RawMessage      `json:"workload"`
			} `json:"input_config"`
		}
		require.NoError(t, json.Unmarshal(runReadFile(t, filepath.Join(run, results.ProfileJSONName)), &meta))
		assert.Equal(t, int64(11+i), meta.InputConfig.Sim.Seed)
		workloads = append(workloads, string(meta.InputConfig.Workload))
	}
	assert.NotEqual(t, ttfts[0], ttfts[1], "different simulator seeds, different jitter")
	assert.Equal(t, workloads[0], workloads[2], "one workload")
	code, _, stderr = compareCLI("compare", out, out)
	assert.Equal(t, 0, code, stderr)
	code, _, stderr = runSim(t, "--concurrency", "1", "--repeat", "0", "-o", out)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "--repeat must be >= 1")
}

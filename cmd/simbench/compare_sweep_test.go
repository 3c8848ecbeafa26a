package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/simbench/simbench/capacity"
	"github.com/simbench/simbench/results"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeLoadSweep writes a concurrency sweep under dir: a run per load
// with TTFT ttftMs[i], good requests those with TTFT ≤ 100 ms (a third
// of them 30 ms faster), and its summary as the capacity package computes it.
func writeLoadSweep(t *testing.T, dir string, loads []float64, ttftMs []float64) {
	t.Helper()
	s := &capacity.Summary{Load: capacity.Concurrency, Loads: loads, Goodput: "time_to_first_token:100", AttainmentTarget: 0.9}
	for i, load := range loads {
		name := capacity.PointDir(capacity.Concurrency, load)
		writeRun(t, filepath.Join(dir, name), runSpec{requests: 30, chunks: 8, workers: 1, intervalMs: 200,
			ttftMs: func(j int) float64 { return ttftMs[i] - 30*float64(j%3/2) }, gapMs: func(int, int) float64 { return 10 }})
		run, err := results.LoadRun(filepath.Join(dir, name))
		require.NoError(t, err)
		pt := capacity.NewPoint(load, name, run.Profile, capacity.PointOptions{Load: capacity.Concurrency, MaxErrorRate: -1})
		good := 0
		if ttftMs[i] <= 100 {
			good = 30
		} else if ttftMs[i]-30 <= 100 {
			good = 10
		}
		a, meets := float64(good)/30, good >= 27
		pt.GoodRequestCount, pt.Attainment, pt.MeetsSLO = &good, &a, &meets
		s.Points = append(s.Points, pt)
	}
	s.Capacity = capacity.FindCapacity(capacity.Concurrency, s.Points, 0.9)
	require.NoError(t, capacity.WriteSummary(dir, s))
}

// TestCompareLoadSweeps: two sweep directories compare load by load, with
// capacity on both sides, the capacity bound's exit code and the sweep
// plots; a sweep against a run is a usage error.
func TestCompareLoadSweeps(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	real, sim := filepath.Join(root, "real"), filepath.Join(root, "sim")
	writeLoadSweep(t, real, []float64{1, 2, 4, 8}, []float64{40, 60, 90, 200})
	writeLoadSweep(t, sim, []float64{1, 2, 4, 8, 16}, []float64{40, 60, 95, 120, 300})
	plots, out := filepath.Join(root, "plots"), filepath.Join(root, "cmp.json")
	code, _, errOut := compareCLI("compare", real, sim, "--fail-above", "capacity=3%", "--plots", plots, "--format", "json", "-o", out)
	assert.Equal(t, exitThreshold, code, errOut)
	assert.Contains(t, errOut, "threshold breached: capacity")
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	var rep struct {
		Capacity struct {
			Reference, Candidate struct {
				Concurrency        int     `json:"concurrency"`
				FailingConcurrency int     `json:"failing_concurrency"`
				Estimate           float64 `json:"estimate"`
			}
			ErrorPct float64 `json:"error_pct"`
		} `json:"capacity"`
		OnlyInCandidate []float64 `json:"only_in_candidate"`
	}
	require.NoError(t, json.Unmarshal(b, &rep))
	assert.Equal(t, 4, rep.Capacity.Reference.Concurrency)
	assert.Equal(t, 8, rep.Capacity.Reference.FailingConcurrency)
	assert.Equal(t, 4, rep.Capacity.Candidate.Concurrency)
	assert.InDelta(t, 4+(1-0.9)/(1-0)*4, rep.Capacity.Reference.Estimate, 1e-9)
	assert.InDelta(t, 4+(1-0.9)/(1-1.0/3)*4, rep.Capacity.Candidate.Estimate, 1e-9)
	assert.Equal(t, []float64{16}, rep.OnlyInCandidate)
	for _, name := range []string{"sweep_throughput_latency.png", "sweep_attainment.png"} {
		checkPNG(t, filepath.Join(plots, name))
	}
	code, txt, _ := compareCLI("compare", real, sim)
	assert.Equal(t, exitOK, code)
	assert.Contains(t, txt, "capacity estimate")
	assert.Contains(t, txt, "only in candidate")
	code, _, errOut = compareCLI("compare", real, filepath.Join(real, "c1"))
	assert.Equal(t, exitUsage, code, errOut)
	assert.Contains(t, errOut, "a load sweep compares with a load sweep")
}

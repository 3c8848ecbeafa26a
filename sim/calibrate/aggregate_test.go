package calibrate

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/sim"
	"github.com/simbench/simbench/traces"
)

// writeRun writes the run simbench sim would write for spec on cfg into
// dir: its files and the workload.jsonl beside them.
func writeRun(t *testing.T, dir string, cfg sim.Config, spec traces.Spec) {
	t.Helper()
	wl, _, err := spec.Build(0)
	require.NoError(t, err)
	in, err := sim.WorkloadInput(spec, wl)
	require.NoError(t, err)
	_, err = sim.WriteRun(context.Background(), dir, cfg, wl, in)
	require.NoError(t, err)
	require.NoError(t, traces.WriteWorkloadFile(dir, wl))
}

// writeAggregateRun is writeRun less the per-request records: an
// aggregate-only run, as published runs often are.
func writeAggregateRun(t *testing.T, dir string, cfg sim.Config, spec traces.Spec) {
	t.Helper()
	writeRun(t, dir, cfg, spec)
	require.NoError(t, os.Remove(filepath.Join(dir, results.RecordsName)))
}

func ptr[T any](v T) *T { return &v }

// TestCalibrateOnBlockSize16Run: a run synthesised at 16 tokens per hash
// block keeps its hash_ids at 16 in workload.jsonl; calibrate rebuilds the
// same workload from it and fits on it.
func TestCalibrateOnBlockSize16Run(t *testing.T) {
	truth := gpuTruth()
	truth.ServerMetrics.Enabled = false
	dir := filepath.Join(t.TempDir(), "bs16")
	writeRun(t, dir, truth, traces.Spec{RequestRate: ptr(4.0), RequestCount: ptr(24), ISL: ptr(592), OSL: ptr(16),
		BlockSize: ptr(16), SharedPrefixTokens: ptr(64)})
	targets, err := LoadTargets([]string{dir})
	require.NoError(t, err)
	wl := targets[0].Workload
	assert.Equal(t, 16, wl.BlockSize)
	require.Len(t, wl.Requests, 24)
	assert.Len(t, wl.Requests[0].HashIDs, 37, "592 tokens at 16 a block")
	run, err := results.LoadRun(dir)
	require.NoError(t, err)
	ic, err := results.ParseInputConfig(run.Profile.InputConfig)
	require.NoError(t, err)
	assert.Equal(t, ic.Workload.Digest, wl.Digest, "the workload the run replayed")
	res, err := Fit(context.Background(), targets, Options{Base: gpuTruth(), Jitter: -1, Seeds: 1, MaxEvals: 4})
	require.NoError(t, err)
	assert.NotEmpty(t, res.Rows)
}

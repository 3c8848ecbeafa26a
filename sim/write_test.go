package sim

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/traces"
)

// The sim section has the content the YAML, read back as generic maps,
// had; endpoint is added only when input has none; input is not modified.
func TestInputConfigSections(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Workers, cfg.Timing.Jitter = 3, 0.05
	wl := randomWorkload(2, 5, false)
	input := &results.InputConfig{Loadgen: &results.LoadgenConfig{RequestCount: 5}}
	ic, err := InputConfig(cfg, wl, input)
	require.NoError(t, err)

	y, err := cfg.YAML()
	require.NoError(t, err)
	var generic map[string]any
	require.NoError(t, yaml.Unmarshal(y, &generic))
	want, err := json.Marshal(generic)
	require.NoError(t, err)
	assert.JSONEq(t, string(want), string(ic.Sim))

	assert.Equal(t, &results.EndpointConfig{ModelNames: []string{cfg.Hardware.Model}, Type: "chat", Streaming: true,
		URL: "sim://vllm"}, ic.Endpoint)
	assert.Equal(t, &results.WorkloadInfo{Source: wl.Source, Digest: wl.Digest, Requests: len(wl.Requests),
		BlockSize: wl.BlockSize, Concurrency: wl.Concurrency}, ic.Workload)
	assert.Same(t, input.Loadgen, ic.Loadgen)
	assert.Nil(t, input.Workload, "input not modified")

	own := &results.EndpointConfig{ModelNames: []string{"m"}, URL: "x"}
	ic, err = InputConfig(cfg, wl, &results.InputConfig{Endpoint: own})
	require.NoError(t, err)
	assert.Same(t, own, ic.Endpoint)
}

// A run that fails before or during the simulation leaves no files that
// could pass for a finished run.
func TestWriteRunFailureLeavesNoFiles(t *testing.T) {
	wl := randomWorkload(2, 50, false)
	cfg := DefaultConfig()
	cfg.Timing.Model, cfg.Timing.Table.File = "table", filepath.Join(t.TempDir(), "missing.csv")
	dir := filepath.Join(t.TempDir(), "run")
	_, err := WriteRun(context.Background(), dir, cfg, wl, nil)
	require.ErrorContains(t, err, "missing.csv")
	assert.NoDirExists(t, dir, "inputs are checked before any file is created")

	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the simulation fails once it has started
	_, err = WriteRun(ctx, dir, DefaultConfig(), wl, nil)
	require.ErrorIs(t, err, context.Canceled)
	assert.NoDirExists(t, dir, "a failed run removes its JSONL and writes no aggregates")

	keep := t.TempDir() // a directory that already held something stays, without the run's files
	require.NoError(t, os.WriteFile(filepath.Join(keep, "notes.txt"), nil, 0o644))
	_, err = WriteRun(ctx, keep, DefaultConfig(), wl, nil)
	require.Error(t, err)
	entries, err := os.ReadDir(keep)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	assert.Equal(t, "notes.txt", entries[0].Name())
}

// TestWriteRunLateFailureLeavesNoFiles: a failure after the aggregates were
// written (here sim_summary.json cannot replace a directory of that name;
// in the field, a full disk) left a complete-looking run.
func TestWriteRunLateFailureLeavesNoFiles(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, SummaryName, "x")
	require.NoError(t, os.MkdirAll(blocker, 0o755))
	_, err := WriteRun(context.Background(), dir, DefaultConfig(), randomWorkload(2, 20, false), nil)
	require.ErrorContains(t, err, SummaryName)
	for _, name := range []string{results.ProfileJSONName, results.ProfileCSVName, results.RecordsName} {
		assert.NoFileExists(t, filepath.Join(dir, name))
	}
	assert.DirExists(t, blocker, "what was there before stays")
}

// WorkloadInput's loadgen section names the arrivals as AIPerf's does:
// concurrency_burst for a closed loop, the pattern for an open one, and a
// gamma pattern's shape as arrival_smoothness (1 unless given).
func TestWorkloadInputArrivals(t *testing.T) {
	f, i := func(v float64) *float64 { return &v }, func(v int) *int { return &v }
	s := func(v string) *string { return &v }
	for _, tc := range []struct {
		spec       traces.Spec
		pattern    string
		smoothness *float64
	}{
		{traces.Spec{Concurrency: i(2)}, "concurrency_burst", nil},
		{traces.Spec{RequestRate: f(4)}, "poisson", nil},
		{traces.Spec{RequestRate: f(4), ArrivalPattern: s("gamma")}, "gamma", f(1)},
		{traces.Spec{RequestRate: f(4), ArrivalPattern: s("gamma"), GammaShape: f(0.5)}, "gamma", f(0.5)},
	} {
		ic, err := WorkloadInput(tc.spec, nil)
		require.NoError(t, err)
		assert.Equal(t, tc.pattern, ic.Loadgen.ArrivalPattern)
		assert.Equal(t, tc.smoothness, ic.Loadgen.ArrivalSmoothness, tc.pattern)
	}
}

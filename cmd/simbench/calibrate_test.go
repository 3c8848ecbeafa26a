package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/sim"
	"github.com/simbench/simbench/sim/calibrate"
)

// TestCalibrateOnSimbenchRun: a run directory keeps its exact workload, so
// calibrate rebuilds it and writes a config `simbench sim --config` accepts.
func TestCalibrateOnSimbenchRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	var out, errOut bytes.Buffer
	code := run([]string{"simbench", "sim", "--concurrency", "2", "--request-count", "12", "--warmup-request-count", "1",
		"--isl", "300", "--isl-stddev", "100", "--osl", "20", "--quiet", "-o", dir}, &out, &errOut)
	require.Equal(t, exitOK, code, errOut.String())

	prof, err := results.LoadProfileJSON(filepath.Join(dir, results.ProfileJSONName))
	require.NoError(t, err)
	wl, err := calibrate.RunWorkload(dir, prof)
	require.NoError(t, err)
	assert.Equal(t, 2, wl.Concurrency)
	require.Len(t, wl.Requests, 13)
	assert.True(t, wl.Requests[0].Warmup)
	var ic struct {
		Workload struct{ Digest string } `json:"workload"`
	}
	require.NoError(t, json.Unmarshal(prof.InputConfig, &ic))
	assert.Equal(t, ic.Workload.Digest, wl.Digest, "the rebuilt workload is the one that ran")

	cfgPath := filepath.Join(t.TempDir(), "sim.yaml")
	out.Reset()
	code = run([]string{"simbench", "calibrate", "--real", dir, "-o", cfgPath, "--max-evals", "40"}, &out, &errOut)
	require.Equal(t, exitOK, code, errOut.String())
	assert.Contains(t, out.String(), "fitted linear timing")
	cfg, err := sim.LoadConfig(cfgPath)
	require.NoError(t, err)
	assert.Equal(t, "linear", cfg.Timing.Model)

	code = run([]string{"simbench", "calibrate", "--real", t.TempDir(), "-o", cfgPath}, &out, &errOut)
	assert.Equal(t, exitFailure, code)
}

// TestCalibrateThenSimWarnsOutsideRange: the config calibrate writes
// records its range; sim warns when a workload leaves it, and not inside.
func TestCalibrateThenSimWarnsOutsideRange(t *testing.T) {
	t.Parallel()
	cfgPath := filepath.Join(t.TempDir(), "sim.yaml")
	var out, errOut bytes.Buffer
	code := run([]string{"simbench", "calibrate", "--real", "../../testdata/aiperf/qwen_concurrency1",
		"--config", "../../testdata/sim/qwen3-0.6b-rtx-6000-ada.yaml", "-o", cfgPath}, &out, &errOut)
	require.Equal(t, exitOK, code, errOut.String())
	assert.Contains(t, out.String(), "step_overhead_ms")
	assert.Contains(t, out.String(), "calibrated range: ISL 100–100, OSL 200–200, concurrency 1–1")

	code, _, stderr := runSim(t, "--config", cfgPath, "--concurrency", "1", "--request-count", "4",
		"--isl", "100", "--osl", "200", "--quiet", "-o", filepath.Join(t.TempDir(), "in"))
	require.Equal(t, exitOK, code, stderr)
	assert.NotContains(t, stderr, "warning")
	code, _, stderr = runSim(t, "--config", cfgPath, "--concurrency", "4", "--request-count", "4",
		"--isl", "1000", "--osl", "200", "--quiet", "-o", filepath.Join(t.TempDir(), "out"))
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stderr, "warning: ISL 1000–1000 leaves the calibrated range 100–100: the fit extrapolates")
	assert.Contains(t, stderr, "warning: concurrency 4–4 leaves the calibrated range 1–1")
}

func TestCalibrateNeedsRealOrURL(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run([]string{"simbench", "calibrate", "-o", filepath.Join(t.TempDir(), "x.yaml")}, &out, &errOut)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut.String(), "either --real runs or --url")
}

func TestCalibrateRefusesNoSeeds(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run([]string{"simbench", "calibrate", "--real", "../../testdata/aiperf/qwen_concurrency1", "--sim-seeds", "0",
		"-o", filepath.Join(t.TempDir(), "x.yaml")}, &out, &errOut)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut.String(), "--sim-seeds must be >= 1, got 0")
}

// TestCalibrateNoiseOnlyWhenAsked: on a GPU config the noise layer (here
// the AIPerf client's gaps and 3 s stalls, the step jitter, a drift, the
// CPU share) is neither in the report nor in the config, and the report
// says it was not fitted; --fit-noise asks for it (and the old
// --host-noise still does, with a note).
func TestCalibrateNoiseOnlyWhenAsked(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		flags []string
		want  bool
	}{{nil, false}, {[]string{"--fit-noise"}, true}, {[]string{"--host-noise"}, true}} {
		cfgPath := filepath.Join(t.TempDir(), "sim.yaml")
		var out, errOut bytes.Buffer
		args := append([]string{"simbench", "calibrate", "--real", "../../testdata/aiperf/qwen_concurrency1",
			"--config", "../../testdata/sim/qwen3-0.6b-rtx-6000-ada.yaml", "-o", cfgPath}, tc.flags...)
		require.Equal(t, exitOK, run(args, &out, &errOut), errOut.String())
		cfg, err := sim.LoadConfig(cfgPath)
		require.NoError(t, err)
		assert.Equal(t, tc.want, cfg.Client.StallMs > 0, "%v", tc.flags)
		assert.Equal(t, tc.want, cfg.Frontend.CPUShare > 0, "%v", tc.flags)
		assert.Equal(t, tc.want, cfg.Timing.Jitter > 0, "%v", tc.flags)
		assert.Equal(t, tc.want, len(cfg.Client.GapSamplesMs) > 0, "%v", tc.flags)
		assert.Equal(t, tc.want, cfg.Client.TieOrder == sim.TieOrderRandom, "%v", tc.flags)
		for _, row := range []string{"client_stall_ms", "cpu_share", "drift_cv", "stall_ms", "arrival_stall_ms", "jitter", "client_gap_ms"} {
			assert.Equal(t, tc.want, bytes.Contains(out.Bytes(), []byte("  "+row+" ")), "%v: row %s in\n%s", tc.flags, row, out.String())
		}
		assert.Equal(t, !tc.want, strings.Contains(out.String(), "noise: what spreads the figures (step jitter, host stalls, drift, the client)\n  not fitted (a GPU engine)"), out.String())
		assert.Equal(t, tc.flags != nil && tc.flags[0] == "--host-noise", strings.Contains(errOut.String(), "--host-noise is deprecated: use --fit-noise"), errOut.String())
	}
}

// TestCalibrateReportLayers: the report on the bundled GPU run prints the
// model, server and noise layers apart, in that order, each parameter in
// its own, and no sentinel: the KV cost the runs do not show is said.
func TestCalibrateReportLayers(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	require.Equal(t, exitOK, run([]string{"simbench", "calibrate", "--real", "../../testdata/aiperf/qwen_concurrency1",
		"--config", "../../testdata/sim/qwen3-0.6b-rtx-6000-ada.yaml", "-o", filepath.Join(t.TempDir(), "sim.yaml")}, &out, &errOut), errOut.String())
	rep := out.String()
	model, server, noise := strings.Index(rep, "\nmodel: "), strings.Index(rep, "\nserver: "), strings.Index(rep, "\nnoise: ")
	require.True(t, 0 < model && model < server && server < noise, rep)
	in := func(name string, lo, hi int) {
		i := strings.Index(rep, "\n  "+name+" ")
		assert.True(t, lo < i && i < hi, "%s between %d and %d in\n%s", name, lo, hi, rep)
	}
	for _, p := range []string{"compute_efficiency", "memory_efficiency", "attention_efficiency", "kv_efficiency"} {
		in(p, model, server)
	}
	for _, p := range []string{"step_overhead_ms", "seq_overhead_ms", "prefill_overhead_ms", "request_overhead_ms"} {
		in(p, server, noise)
	}
	assert.Regexp(t, `\n  kv_efficiency +– +[0-9.]+ +no KV cost visible in these runs`, rep)
	assert.NotContains(t, rep, "1000")
	assert.NotContains(t, rep, "at its bound")
}

package main

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/loadgen/openaitest"
	"github.com/simbench/simbench/results"
)

// inputConfig reads the input_config of the run in dir.
func inputConfig(t *testing.T, dir string) results.InputConfig {
	t.Helper()
	run, err := results.LoadRun(dir)
	require.NoError(t, err)
	ic, err := results.ParseInputConfig(run.Profile.InputConfig)
	require.NoError(t, err)
	return ic
}

// TestSimTakesAIPerfFlagNames: AIPerf's names for the same settings build
// the same workload and configuration as simbench's (issue 41 item 2); the
// renamed flags still work with a one-line note.
func TestSimTakesAIPerfFlagNames(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sim := func(name string, args ...string) (string, string) {
		out := filepath.Join(dir, name)
		code, _, stderr := simbench(t, append(append([]string{"sim", "-q"}, args...), out)...)
		require.Equal(t, exitOK, code, stderr)
		return out, stderr
	}
	synth := []string{"--request-rate", "5", "--arrival-pattern", "gamma", "--request-count", "6"}
	native, _ := sim("native", append(synth, "--isl", "600", "--shared-prefix-tokens", "512", "--gamma-shape", "0.5", "--num-prefix-groups", "2",
		"--turns", "2", "--turn-delay-ms", "7", "--hash-block-size", "256", "--model-preset", "qwen3-8b", "-o")...)
	aiperf, stderr := sim("aiperf", append(synth, "--isl", "88", "--prefix-prompt-length", "512", "--arrival-smoothness", "0.5",
		"--num-prefix-prompts", "2", "--session-turns-mean", "2", "--session-turn-delay-mean", "7", "--isl-block-size", "256",
		"--model", "qwen3-8b", "--artifact-dir")...)
	a, b := inputConfig(t, native), inputConfig(t, aiperf)
	require.NotNil(t, a.Workload)
	assert.Equal(t, a.Workload.Digest, b.Workload.Digest, "the same workload")
	assert.Equal(t, 256, b.Workload.BlockSize)
	assert.JSONEq(t, string(a.Sim), string(b.Sim), "the same simulator configuration")
	assert.Contains(t, string(b.Sim), `"qwen3-8b"`)
	assert.Equal(t, "note: simbench sim --model is deprecated: use --model-preset (--model names the served model in run and calibrate)\n", stderr)

	trace := []string{"--trace", sliceTrace, "--limit", "4"}
	x, _ := sim("speedup", append(trace, "--speedup", "2", "-o")...)
	y, _ := sim("replay-speedup", append(trace, "--replay-speedup", "2", "--output-artifact-dir")...)
	assert.Equal(t, inputConfig(t, x).Workload.Digest, inputConfig(t, y).Workload.Digest)

	_, stderr = sim("block-size", append(synth, "--block-size", "256", "--block-size=256", "-o")...)
	assert.Equal(t, "note: simbench sim --block-size is deprecated: use --hash-block-size (it is the hash_ids block, not sim's --kv-block-size)\n",
		stderr, "one note however often the old name is given")
}

// TestRunTakesAIPerfFlagNames: -H/--header (repeatable, commas kept, sent
// on every request), --artifact-dir and --failed-request-threshold; a
// credential header's value reaches the server and no file.
func TestRunTakesAIPerfFlagNames(t *testing.T) {
	srv := &openaitest.Server{Record: true}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	dir := filepath.Join(t.TempDir(), "run")
	code, _, stderr := runCmdLine("run", "--url", ts.URL, "-m", "M", "--concurrency", "1", "--request-count", "3", "--isl", "8", "--osl", "3",
		"-H", "X-Tenant: a, b", "--header", "X-Api-Key: k-secret-4242", "-H", "Authorization: Bearer sk-secret-77",
		"--failed-request-threshold", "0.5", "--no-server-metrics", "--artifact-dir", dir, "-q")
	require.Equal(t, exitOK, code, stderr)
	reqs := srv.Requests()
	require.Len(t, reqs, 3)
	for _, r := range reqs {
		assert.Equal(t, "a, b", r.Header.Get("X-Tenant"))
		assert.Equal(t, "k-secret-4242", r.Header.Get("X-Api-Key"))
		assert.Equal(t, "Bearer sk-secret-77", r.Header.Get("Authorization"))
	}
	ic := inputConfig(t, dir)
	var headers [][2]string
	require.NoError(t, json.Unmarshal(ic.Input.Unknown["headers"], &headers))
	assert.Equal(t, [][2]string{{"X-Tenant", "a, b"}, {"X-Api-Key", "[redacted]"}, {"Authorization", "[redacted]"}}, headers)
	require.NoError(t, filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		require.NoError(t, err)
		if d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.False(t, strings.Contains(string(b), "k-secret-4242") || strings.Contains(string(b), "sk-secret-77"), "a credential in %s", path)
		return nil
	}))

	code, _, stderr = runCmdLine("run", "--url", ts.URL, "-m", "M", "--concurrency", "1", "--request-count", "1", "--isl", "8",
		"-H", "Content-Type: text/plain", "-o", filepath.Join(t.TempDir(), "x"), "-q")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "--header Content-Type: set by the request body (JSON), not replaceable")
}

// TestQuietAndConfigShortFlags: -q on compare (no report on stdout, the
// exit code says it) and plot (no file list), -c for --config on sim.
func TestQuietAndConfigShortFlags(t *testing.T) {
	t.Parallel()
	run := filepath.Join(t.TempDir(), "run")
	code, _, stderr := simbench(t, "sim", "-c", "../../testdata/sim/qwen3-0.6b-rtx-6000-ada.yaml", "--trace", sliceTrace, "--limit", "4", "-o", run, "-q")
	require.Equal(t, exitOK, code, stderr)

	code, stdout, stderr := simbench(t, "compare", run, run, "-q")
	assert.Equal(t, exitOK, code, stderr)
	assert.Empty(t, stdout)
	code, stdout, _ = simbench(t, "compare", run, run)
	assert.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "verdict:")

	code, stdout, stderr = simbench(t, "plot", run, "--output", t.TempDir(), "-q")
	assert.Equal(t, exitOK, code, stderr)
	assert.Empty(t, stdout, "-q; --output is aiperf plot's name")
}

package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/loadgen/openaitest"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/servermetrics"
	"github.com/simbench/simbench/sim"
	"github.com/simbench/simbench/traces"
)

// dirNames lists dir's entries.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// waitStagedRecords waits until a command writing the output directory
// out has records in its staging directory, and returns that directory.
func waitStagedRecords(t *testing.T, out string) (staging string) {
	t.Helper()
	require.Eventually(t, func() bool {
		m, _ := filepath.Glob(filepath.Join(filepath.Dir(out), "."+filepath.Base(out)+".simbench-*", results.RecordsName))
		if len(m) == 0 {
			return false
		}
		st, err := os.Stat(m[0])
		staging = filepath.Dir(m[0])
		return err == nil && st.Size() > 0
	}, 60*time.Second, time.Millisecond, "records are written as they finish, into the staging directory")
	return staging
}

// TestReusedOutputDirIsReplaced: `sim -o D` then `run -o D` kept the sim's
// server_metrics_export.*, ttft_breakdown.json and sim_summary.json, and
// compare D read "candidate: dynamo, 50 requests" for a 6-request run;
// `sim --repeat 4 -o X` then `--repeat 2 -o X` kept run_0003/run_0004.
func TestReusedOutputDirIsReplaced(t *testing.T) {
	ts := httptest.NewServer(&openaitest.Server{ITL: time.Millisecond})
	defer ts.Close()
	root := t.TempDir()
	d := filepath.Join(root, "d")
	code, _, errOut := runSim(t, "--trace", simSlice, "--limit", "50", "--quiet", "-o", d)
	require.Equal(t, 0, code, errOut)
	require.FileExists(t, filepath.Join(d, servermetrics.TTFTBreakdownName))
	code, _, errOut = runCmdLine("run", "--url", ts.URL, "-m", "M", "--concurrency", "2", "--request-count", "6",
		"--isl", "10", "--osl", "4", "--quiet", "-o", d)
	require.Equal(t, 0, code, errOut)
	assert.ElementsMatch(t, []string{results.RecordsName, results.ProfileJSONName, results.ProfileCSVName, traces.WorkloadFile},
		dirNames(t, d), "nothing of the simulated run stays")
	assert.NotContains(t, dirNames(t, d), sim.SummaryName)
	run, err := results.LoadRun(d)
	require.NoError(t, err)
	n, _ := run.Profile.Value(results.TagRequestCount, "avg")
	assert.EqualValues(t, 6, n)
	requireOnlyEntry(t, d)

	x := filepath.Join(root, "x")
	for _, repeat := range []string{"4", "2"} {
		code, _, errOut = runSim(t, "--trace", simSlice, "--limit", "5", "--repeat", repeat, "--quiet", "-o", x)
		require.Equal(t, 0, code, errOut)
	}
	assert.Equal(t, []string{"run_0001", "run_0002"}, dirNames(t, x), "a --repeat 2 after a --repeat 4 leaves 2 runs")
}

// TestOutputDirNotARun: a -o holding other files was written into; now it
// is a usage error naming the directory and a file in it, and nothing in
// it changes.
func TestOutputDirNotARun(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644))
	code, _, errOut := runSim(t, "--trace", simSlice, "--limit", "5", "--quiet", "-o", dir)
	assert.Equal(t, exitUsage, code, errOut)
	assert.Contains(t, errOut, dir+": not empty and not a simbench output: it holds notes.txt and no profile_export_aiperf.json")
	assert.Equal(t, []string{"notes.txt"}, dirNames(t, dir))
}

// TestConcurrentWritersRefused: two runs writing one -o at once tore each
// other's JSONL lines and both exited 0. The second is refused at start.
func TestConcurrentWritersRefused(t *testing.T) {
	t.Parallel() // no timing asserted: the first run lasts about 5 s, the second starts within it
	ts := httptest.NewServer(&openaitest.Server{TTFT: 100 * time.Millisecond, ITL: 20 * time.Millisecond, Tokens: 20})
	defer ts.Close()
	root := t.TempDir()
	out := filepath.Join(root, "out")
	args := []string{"run", "--url", ts.URL, "-m", "M", "--concurrency", "2", "--request-count", "20", "--isl", "10", "--osl", "20",
		"--quiet", "-o", out}
	first := startCLI(t, nil, args...)
	lock := filepath.Join(root, ".out.simbench.lock")
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(lock)
		return err == nil && len(b) > 0
	}, 30*time.Second, time.Millisecond, "the first run holds the lock")
	code, _, errOut := runCmdLine(args...)
	assert.Equal(t, exitFailure, code, errOut)
	assert.Contains(t, errOut, out+": another simbench process is writing it (pid ")
	require.NoError(t, first.cmd.Wait(), first.err.String())
	recs, err := results.LoadJSONL(filepath.Join(out, results.RecordsName))
	require.NoError(t, err, "the first run's records are whole")
	assert.Len(t, recs, 20)
	requireOnlyEntry(t, out)
}

// TestValidateArmsReplaced: a validation into an OUTPUT an earlier one
// wrote kept the earlier arms' files beside the new runs (another arm's
// run_NNNN, a simulated run's summary in the silicon arm); each arm is
// now written whole, and OUTPUT's history still grows.
func TestValidateArmsReplaced(t *testing.T) {
	ts, _ := validateServer(t, http.StatusOK)
	out := filepath.Join(t.TempDir(), "artifacts")
	stale := []string{filepath.Join(out, "real", sim.SummaryName), filepath.Join(out, "sim", "run_0003", results.ProfileJSONName)}
	for _, f := range append(stale, filepath.Join(out, "real", results.ProfileJSONName)) {
		require.NoError(t, os.MkdirAll(filepath.Dir(f), 0o755))
		require.NoError(t, os.WriteFile(f, []byte("{}"), 0o644))
	}
	p := writePipeline(t, ts.URL, "compare:\n  fail_above: [inter_token_latency.avg=5000%]\n  plots: false\n")
	for range 2 {
		code, _, stderr := validateCLI("--config", p, "-o", out, "--quiet")
		require.Equal(t, 0, code, stderr)
	}
	for _, f := range stale {
		assert.NoFileExists(t, f)
	}
	assert.FileExists(t, filepath.Join(out, "real", results.RecordsName))
	assert.Len(t, readHistoryT(t, filepath.Join(out, "history.jsonl")), 2, "OUTPUT itself is not replaced")
	assert.NotContains(t, dirNames(t, out), ".real.simbench.lock")
}

// TestRunInterruptCommitsItsFiles: a run written beside its -o must still
// keep the README's promise after SIGINT: exit 130 with complete files in
// -o (the partial run is committed, no request it finished is lost). Not
// parallel: the signal goes to the whole test process.
func TestRunInterruptCommitsItsFiles(t *testing.T) {
	ts := httptest.NewServer(&openaitest.Server{TTFT: 10 * time.Millisecond, ITL: 20 * time.Millisecond})
	defer ts.Close()
	out := filepath.Join(t.TempDir(), "out")
	done := make(chan struct{})
	var code int
	var errb strings.Builder
	go func() {
		defer close(done)
		code = run([]string{"simbench", "run", "--url", ts.URL, "-m", "M", "--concurrency", "2", "--request-count", "40",
			"--isl", "10", "--osl", "30", "--quiet", "-o", out}, io.Discard, &errb)
	}()
	waitStagedRecords(t, out)
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGINT))
	<-done
	assert.Equal(t, exitInterrupted, code, errb.String())
	recs, err := results.LoadJSONL(filepath.Join(out, results.RecordsName))
	require.NoError(t, err)
	assert.NotEmpty(t, recs)
	prof, err := results.LoadProfileJSON(filepath.Join(out, results.ProfileJSONName))
	require.NoError(t, err)
	assert.True(t, prof.WasCancelled)
	requireOnlyEntry(t, out)
}

// TestOutputDirHoldingAnInput: with outputs replaced whole, `merge out/s0
// out/s1 -o out` would have removed the shards it read, and `sim --trace
// D/t.jsonl -o D` the trace: both are usage errors, the inputs untouched.
func TestOutputDirHoldingAnInput(t *testing.T) {
	root := t.TempDir()
	shards := []string{filepath.Join(root, "s0"), filepath.Join(root, "s1")}
	for _, s := range shards {
		code, _, errOut := runSim(t, "--trace", simSlice, "--limit", "3", "--quiet", "-o", s)
		require.Equal(t, 0, code, errOut)
	}
	code, _, errOut := runCmdLine("merge", shards[0], shards[1], "-o", root)
	assert.Equal(t, exitUsage, code, errOut)
	assert.Contains(t, errOut, "-o "+root+" holds an input ("+shards[0]+"), which the output would replace")
	trace := filepath.Join(shards[1], traces.WorkloadFile)
	code, _, errOut = runSim(t, "--trace", trace, "--quiet", "-o", shards[1])
	assert.Equal(t, exitUsage, code, errOut)
	assert.Contains(t, errOut, "holds an input ("+trace+")")
	assert.ElementsMatch(t, []string{"s0", "s1"}, dirNames(t, root))
	assert.FileExists(t, trace)
}

package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/servermetrics"
	"github.com/simbench/simbench/sim"
	"github.com/simbench/simbench/traces"
)

const simSlice = "../../testdata/traces/conversation_slice.jsonl"

func runSim(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(append([]string{"simbench", "sim"}, args...), &out, &errOut)
	return code, out.String(), errOut.String()
}

// requireSelfConsistent checks that the run directory's aggregate files
// equal results.SummarizeJSONL of its own JSONL, and returns the records.
func requireSelfConsistent(t *testing.T, dir string) (*results.Profile, []results.RecordMetrics) {
	t.Helper()
	got, err := results.LoadProfileJSON(filepath.Join(dir, results.ProfileJSONName))
	require.NoError(t, err)
	want, err := results.SummarizeJSONL(filepath.Join(dir, results.RecordsName), nil)
	require.NoError(t, err)
	require.NotEmpty(t, want.Metrics)
	for _, m := range want.Metrics {
		for stat, v := range m.Stats {
			g, ok := got.Value(m.Tag, stat)
			require.True(t, ok, "%s.%s missing from %s", m.Tag, stat, results.ProfileJSONName)
			assert.InDelta(t, v, g, 1e-9*max(1, abs(v)), "%s.%s", m.Tag, stat)
		}
	}
	assert.Len(t, got.Metrics, len(want.Metrics))
	recs, err := results.LoadJSONL(filepath.Join(dir, results.RecordsName))
	require.NoError(t, err)
	for _, name := range []string{results.ProfileCSVName, sim.SummaryName, servermetrics.JSONName, servermetrics.TTFTBreakdownName} {
		_, err := os.Stat(filepath.Join(dir, name))
		require.NoError(t, err, name)
	}
	return got, recs
}

func p0(t *testing.T, dir string) *results.Profile {
	t.Helper()
	p, err := results.LoadProfileJSON(filepath.Join(dir, results.ProfileJSONName))
	require.NoError(t, err)
	return p
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

func TestSimSyntheticConcurrency(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runSim(t, "--concurrency", "4", "--request-count", "64", "--isl", "100", "--osl", "200", "-o", dir)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "simulated 64 requests (0 rejected, 0 warmup) on 1 vllm worker(s)")
	assert.Contains(t, out, "wrote "+filepath.Join(dir, results.RecordsName))
	assert.Contains(t, out, "wrote "+filepath.Join(dir, servermetrics.TTFTBreakdownName))
	assert.Contains(t, out, "TTFT breakdown (dynamo, dynamo_frontend_time_to_first_token_seconds; means over the run window, 64 requests)")
	assert.Contains(t, out, "additive: stage means add up to the TTFT mean")
	assert.Empty(t, errOut) // stderr is not a terminal: no progress bar

	b, err := servermetrics.LoadTTFTBreakdownJSON(filepath.Join(dir, servermetrics.TTFTBreakdownName))
	require.NoError(t, err)
	assert.True(t, b.Additive, b.Reason)
	assert.Equal(t, 64.0, b.TTFTCount)
	ttft, ok := p0(t, dir).Value(results.TagTTFT, "avg")
	require.True(t, ok)
	assert.InEpsilon(t, ttft, b.TTFTMeanMs, 1e-9, "the frontend's TTFT is the client's")
	e, err := servermetrics.LoadJSON(filepath.Join(dir, servermetrics.JSONName))
	require.NoError(t, err)
	assert.Equal(t, sim.ServerMetricsEndpoints(sim.DefaultConfig()), e.Summary.EndpointsSuccessful)
	assert.Contains(t, e.Metrics, "vllm:request_queue_time_seconds")

	p, recs := requireSelfConsistent(t, dir)
	n, _ := p.Value(results.TagRequestCount, "avg")
	assert.Equal(t, 64.0, n)
	osl, _ := p.Value(results.TagOSL, "max")
	assert.Equal(t, 200.0, osl)
	require.Len(t, recs, 64)
	for _, r := range recs {
		require.NotNil(t, r.Ext.Sim)
		assert.Len(t, r.Ext.Sim.TTFTBreakdown, 5)
		assert.Equal(t, "worker-0", r.Ext.Worker)
	}

	var ic struct {
		Loadgen map[string]any `json:"loadgen"`
		Sim     map[string]any `json:"sim"`
	}
	require.NoError(t, json.Unmarshal(p.InputConfig, &ic))
	assert.Equal(t, 4.0, ic.Loadgen["concurrency"])
	assert.Equal(t, 64.0, ic.Loadgen["request_count"])
	assert.Equal(t, "physics", ic.Sim["timing"].(map[string]any)["model"], "the hardware-aware default")
}

// The trace path: one record per trace row, aggregates equal to the JSONL's,
// and identical files from two runs with the same seed.
func TestSimTraceDeterministic(t *testing.T) {
	t.Parallel()
	dirs := []string{filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")}
	for _, dir := range dirs {
		code, _, errOut := runSim(t, "--trace", simSlice, "--workers", "4", "--router", "kv", "--seed", "7", "-o", dir, "--quiet")
		require.Equal(t, exitOK, code, errOut)
	}
	_, recs := requireSelfConsistent(t, dirs[0])
	rows := map[int]bool{}
	for _, r := range recs {
		require.Nil(t, r.Error)
		rows[r.Ext.TraceRow] = true
	}
	assert.Len(t, recs, 200)
	assert.Len(t, rows, 200)
	for _, name := range []string{results.RecordsName, results.ProfileJSONName, results.ProfileCSVName, sim.SummaryName,
		servermetrics.JSONName, servermetrics.TTFTBreakdownName} {
		a, err := os.ReadFile(filepath.Join(dirs[0], name))
		require.NoError(t, err)
		b, err := os.ReadFile(filepath.Join(dirs[1], name))
		require.NoError(t, err)
		assert.True(t, bytes.Equal(a, b), "%s differs between two runs", name)
	}
	var sum sim.Summary
	b, err := os.ReadFile(filepath.Join(dirs[0], sim.SummaryName))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &sum))
	assert.Len(t, sum.Workers, 4)
	assert.Equal(t, 200, sum.Completed)
	assert.Greater(t, sum.PrefixCacheReusedRatio, 0.0)
}

func TestSimTraceFiltersAndEngines(t *testing.T) {
	for _, engine := range []string{"sglang", "llamacpp"} {
		dir := t.TempDir()
		code, _, errOut := runSim(t, "--trace", simSlice, "--limit", "30", "--max-isl", "4000", "--speedup", "2",
			"--engine", engine, "--workers", "2", "--router", "least_loaded", "-o", dir, "-q")
		require.Equal(t, exitOK, code, errOut)
		_, recs := requireSelfConsistent(t, dir)
		assert.Len(t, recs, 30, engine)
	}
}

func TestSimProgressLines(t *testing.T) {
	code, _, errOut := runSim(t, "--concurrency", "2", "--request-count", "40", "--osl", "5", "-o", t.TempDir(), "--progress")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, errOut, "progress: 40/40 requests")
}

func TestSimConfigFileAndPrintConfig(t *testing.T) {
	cfgPath := filepath.Join(t.TempDir(), "sim.yaml")
	require.NoError(t, os.WriteFile(cfgPath, []byte("workers: 3\nengine:\n  type: sglang\nrouter:\n  policy: kv\n"), 0o644))
	code, out, errOut := runSim(t, "--config", cfgPath, "--workers", "5", "--print-config")
	require.Equal(t, exitOK, code, errOut)
	cfg, err := sim.ParseConfig([]byte(out))
	require.NoError(t, err)
	assert.Equal(t, 5, cfg.Workers) // the flag wins
	assert.Equal(t, "sglang", cfg.Engine.Type)
	assert.Equal(t, "kv", cfg.Router.Policy)

	code, out, _ = runSim(t, "--print-config")
	require.Equal(t, exitOK, code)
	golden(t, "sim_print_config.golden", []byte(out))
}

// --print-config writes the timing model timing.model names and not the
// others; a file that holds them all (an older sim.yaml) still reads.
func TestSimPrintConfigUsedTimingOnly(t *testing.T) {
	full, err := sim.DefaultConfig().YAML()
	require.NoError(t, err)
	cfgPath := filepath.Join(t.TempDir(), "all.yaml")
	require.NoError(t, os.WriteFile(cfgPath, full, 0o644))
	code, out, errOut := runSim(t, "--config", cfgPath, "--timing", "linear", "--print-config")
	require.Equal(t, exitUsage, code, "linear's coefficients are all 0 by default")
	assert.Contains(t, errOut, "timing.linear: every coefficient is 0")

	doc := strings.Replace(string(full), "    base_ms: 0", "    base_ms: 2", 1)
	require.NoError(t, os.WriteFile(cfgPath, []byte(doc), 0o644))
	code, out, errOut = runSim(t, "--config", cfgPath, "--timing", "linear", "--print-config")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "\n  linear:\n    base_ms: 2")
	for _, other := range []string{"poly", "roofline", "physics", "table"} {
		assert.NotContains(t, out, "\n  "+other+":", other)
	}
	back, err := sim.ParseConfig([]byte(out))
	require.NoError(t, err)
	want, err := sim.ParseConfig([]byte(doc))
	require.NoError(t, err)
	assert.Equal(t, want.Timing.Linear, back.Timing.Linear)
	assert.Equal(t, sim.DefaultConfig().Timing.Poly, back.Timing.Poly, "the unused models read as their defaults")
}

// A config with a renamed key loads, and the command says which key it
// was read as.
func TestSimConfigRenamedKeyWarns(t *testing.T) {
	cfgPath := filepath.Join(t.TempDir(), "old.yaml")
	require.NoError(t, os.WriteFile(cfgPath, []byte("frontend:\n  client_gap_ms: 4\n"), 0o644))
	code, out, errOut := runSim(t, "--config", cfgPath, "--print-config")
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, "warning: "+cfgPath+": line 2: frontend.client_gap_ms is deprecated, read as client.gap_ms "+
		"(the load generator's, apart from the server's frontend:)\n", errOut)
	cfg, err := sim.ParseConfig([]byte(out))
	require.NoError(t, err)
	assert.Equal(t, 4.0, cfg.Client.GapMs)
	assert.Empty(t, cfg.KeyWarnings(), "--print-config writes the current key")
}

func TestSimUsageErrors(t *testing.T) {
	t.Parallel()
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("engine:\n  blok_size: 16\n"), 0o644))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--concurrency", "2"}, "sim needs -o DIR"},
		{[]string{"--kv-block-size", "-1", "-o", "x"}, "engine.block_size: must be in [1, 4096], got -1"},
		{[]string{"--engine", "trtllm", "-o", "x"}, "engine.type"},
		{[]string{"--config", bad, "-o", "x"}, `unknown key "engine.blok_size"`},
		{[]string{"--trace", simSlice, "--isl", "10", "-o", "x"}, "--isl shapes a synthetic workload"},
		{[]string{"--limit", "3", "--concurrency", "2", "-o", "x"}, "--limit reshapes a trace"},
		{[]string{"-o", "x"}, "--concurrency N"},
		{[]string{"extra", "-o", "x"}, "sim takes no arguments"},
	} {
		code, _, errOut := runSim(t, tc.args...)
		assert.Equal(t, exitUsage, code, strings.Join(tc.args, " "))
		assert.Contains(t, errOut, tc.want, strings.Join(tc.args, " "))
	}
	code, _, errOut := runSim(t, "--trace", "/nonexistent.jsonl", "-o", t.TempDir())
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, errOut, "nonexistent")
}

func TestSimHelp(t *testing.T) {
	code, out, _ := runSim(t, "--help")
	require.Equal(t, exitOK, code)
	for _, want := range []string{"simbench sim --trace conversation_trace.jsonl", "--print-config", "--router", "--kv-block-size"} {
		assert.Contains(t, out, want)
	}
}

// Every configuration flag overrides a configuration field.
func TestSimConfigFlagsOverrideFields(t *testing.T) {
	cfg := sim.DefaultConfig()
	fields := configFields(&cfg)
	for _, f := range simConfigFlags() {
		switch name := f.Names()[0]; name {
		case "config", "sim-seed", "print-config", "kv-offloading-size": // the last sets a section: TestSimKVOffloadingSizeFlag
		default:
			assert.Contains(t, fields, name)
		}
	}
}

// --kv-offloading-size is vLLM's flag: it sets engine.kv_offload's
// size_gib (a config's tier replaced whole), and 0 turns the tier off.
func TestSimKVOffloadingSizeFlag(t *testing.T) {
	code, out, errOut := runSim(t, "--kv-offloading-size", "8", "--print-config")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "  kv_offload:\n    size_gib: 8 #")
	cfgPath := filepath.Join(t.TempDir(), "sim.yaml")
	require.NoError(t, os.WriteFile(cfgPath, []byte("engine:\n  kv_offload:\n    cpu_blocks: 100\n"), 0o644))
	code, out, errOut = runSim(t, "--config", cfgPath, "--kv-offloading-size", "0", "--print-config")
	require.Equal(t, 0, code, errOut)
	assert.NotContains(t, out, "kv_offload")
	code, _, errOut = runSim(t, "--kv-offloading-size", "8", "--engine", "sglang", "--print-config")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "engine.kv_offload: CPU offloading is vLLM's")
}

// TestIntegerFlagsAreDecimal: "--random-seed 010" is seed 10 and
// "--concurrency 08" is 8, as AIPerf reads them (urfave/cli's own default
// would take 010 for octal 8 and refuse 08).
func TestIntegerFlagsAreDecimal(t *testing.T) {
	dir := t.TempDir()
	code, _, errOut := runSim(t, "--concurrency", "08", "--request-count", "4", "--isl", "16", "--osl", "4",
		"--random-seed", "010", "-o", dir)
	require.Equal(t, 0, code, errOut)
	cfg := p0(t, dir).InputConfig
	assert.Contains(t, string(cfg), `"random_seed": 10`)
	assert.Contains(t, string(cfg), `"concurrency": 8`)
	code, _, errOut = runSim(t, "--concurrency", "0x10", "-o", dir)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, `invalid value "0x10" for flag -concurrency: not a decimal integer`)
}

// startLongSim starts a simulation of n requests into out and returns its staging
// directory once records are being written there, and a channel closed
// with the exit code set when the command returns.
func startLongSim(t *testing.T, out string, n int, code *int, errb *bytes.Buffer) (staging string, done chan struct{}) {
	t.Helper()
	done = make(chan struct{})
	go func() {
		defer close(done)
		*code = run([]string{"simbench", "sim", "--concurrency", "64", "--request-count", strconv.Itoa(n), "--isl", "200", "--osl", "50",
			"-q", "-o", out}, io.Discard, errb)
	}()
	return waitStagedRecords(t, out), done
}

// requireOnlyEntry checks that out is the only entry of its parent: no
// staging directory or lock file is left.
func requireOnlyEntry(t *testing.T, out string) {
	t.Helper()
	entries, err := os.ReadDir(filepath.Dir(out))
	require.NoError(t, err)
	require.Len(t, entries, 1, "no staging directory or lock file is left")
	assert.Equal(t, filepath.Base(out), entries[0].Name())
}

// TestSimLateFailureDiscardsTheRun: a sim whose workload.jsonl could not be
// written (in the field, a full disk; here a directory of that name put in
// its way) left a complete-looking run directory and exited 1. Now the run
// is written beside its output directory and a late failure removes it:
// the earlier run stays as it was.
func TestSimLateFailureDiscardsTheRun(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "run")
	code, _, errOut := runSim(t, "--trace", simSlice, "--limit", "5", "--quiet", "-o", out)
	require.Equal(t, 0, code, errOut)
	before := readAll(t, filepath.Join(out, results.ProfileJSONName), filepath.Join(out, results.RecordsName))
	var errb bytes.Buffer
	staging, done := startLongSim(t, out, 20000, &code, &errb)
	require.NoError(t, os.MkdirAll(filepath.Join(staging, traces.WorkloadFile, "x"), 0o755))
	<-done
	assert.Equal(t, 1, code, errb.String())
	assert.Contains(t, errb.String(), traces.WorkloadFile)
	assert.Equal(t, before, readAll(t, filepath.Join(out, results.ProfileJSONName), filepath.Join(out, results.RecordsName)),
		"the earlier run stays whole")
	requireOnlyEntry(t, out)
}

// TestSimInterruptLeavesNoPartialRun: SIGINT killed sim mid-write (a torn
// last JSONL line, no aggregates, and compare then said "malformed JSON");
// now the first signal stops the simulation, its partial files are
// removed and the exit code is 130. Not parallel: the signal goes to the
// whole test process.
func TestSimInterruptLeavesNoPartialRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	var code int
	var errb bytes.Buffer
	_, done := startLongSim(t, dir, 300000, &code, &errb)
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGINT))
	<-done
	assert.Equal(t, exitInterrupted, code, errb.String())
	assert.Contains(t, errb.String(), "interrupted: the simulation stopped and its partial files in "+dir+" were removed")
	assert.NoDirExists(t, dir, "no torn JSONL is left to be mistaken for a run")
	entries, err := os.ReadDir(filepath.Dir(dir))
	require.NoError(t, err)
	assert.Empty(t, entries, "no staging directory or lock file is left")
}

// --timing's help names every timing model the simulator has.
func TestSimHelpNamesEveryTimingModel(t *testing.T) {
	code, out, _ := runSim(t, "--help")
	require.Equal(t, exitOK, code)
	line := ""
	for l := range strings.Lines(out) {
		if strings.Contains(l, "--timing value") {
			line, _, _ = strings.Cut(l, "(default:") // the usage, not the default
		}
	}
	require.NotEmpty(t, line, "no --timing flag in sim --help")
	for _, name := range sim.TimingModels() {
		assert.Contains(t, line, name)
	}
}

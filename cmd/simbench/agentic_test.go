package main

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/loadgen/openaitest"
	"github.com/simbench/simbench/results"
)

const agentsTrace = "../../testdata/traces/agentic/agents.jsonl"

// TestAgenticReplay is issue 43's "done when": simbench run (against a
// scripted server) and simbench sim replay a DynoSim agentic_mooncake file
// (two agents: a planner fanning out into two sub-agents and joining them,
// and a chain, with tool waits), and compare shows their session metrics
// and draws both runs' sessions as a Gantt chart.
func TestAgenticReplay(t *testing.T) {
	t.Parallel() // the real run's tool waits are lower bounds, which load cannot break
	ts := httptest.NewServer(&openaitest.Server{TTFT: 5 * time.Millisecond, ITL: 2 * time.Millisecond})
	defer ts.Close()
	dir := t.TempDir()
	trace := []string{"--trace", agentsTrace, "--trace-format", "agentic_mooncake", "--hash-block-size", "128", "-q"}
	real, simulated := filepath.Join(dir, "real"), filepath.Join(dir, "sim")
	code, _, stderr := simbench(t, append([]string{"run", "--url", strings.TrimPrefix(ts.URL, "http://"), "--model", "M",
		"-o", real}, trace...)...)
	require.Equal(t, exitOK, code, stderr)
	code, _, stderr = simbench(t, append([]string{"sim", "-o", simulated}, trace...)...)
	require.Equal(t, exitOK, code, stderr)

	for _, d := range []string{real, simulated} {
		stat := profileStat(t, d)
		assert.Equal(t, 8.0, stat(results.TagRequestCount, "avg"), d)
		assert.Equal(t, 2.0, stat(results.TagSessionTurns, "count"), d)
		assert.Equal(t, 3.0, stat(results.TagSessionTurns, "min"), d)
		assert.Equal(t, 5.0, stat(results.TagSessionTurns, "max"), d)
		// Agent a waits at least 40 + 30 + 10 ms on tools (its second
		// branch's wait may overlap the first branch), agent b 120 + 60 ms.
		assert.GreaterOrEqual(t, stat(results.TagSessionToolWait, "min"), 80.0, d)
		assert.GreaterOrEqual(t, stat(results.TagSessionToolWait, "max"), 180.0, d)
		assert.InDelta(t, stat(results.TagSessionLatency, "avg"),
			stat(results.TagSessionServerWait, "avg")+stat(results.TagSessionToolWait, "avg"), 1e-6, d)
		if d == simulated { // on the virtual clock, the tool waits exactly
			assert.InDelta(t, 80, stat(results.TagSessionToolWait, "min"), 1e-9)
			assert.InDelta(t, 180, stat(results.TagSessionToolWait, "max"), 1e-9)
		}
	}

	figs := filepath.Join(dir, "plots")
	code, stdout, stderr := simbench(t, "compare", real, simulated, "--plots", figs)
	require.Equal(t, exitOK, code, stderr)
	checkPNG(t, filepath.Join(figs, "session_gantt.png")) // both runs' agents: turns, branches, tool waits
	for _, tag := range []string{results.TagSessionLatency, results.TagSessionTurns, results.TagSessionServerWait, results.TagSessionToolWait} {
		d, _ := results.Lookup(tag)
		assert.Contains(t, stdout, "│ "+d.Header+" (")
	}
}

// replayBoth runs trace (workload flags) with simbench run against a
// scripted server and with simbench sim; it returns both run directories.
func replayBoth(t *testing.T, trace ...string) (string, string) {
	t.Helper()
	ts := httptest.NewServer(&openaitest.Server{TTFT: 5 * time.Millisecond, ITL: 2 * time.Millisecond})
	defer ts.Close()
	dir := t.TempDir()
	real, simulated := filepath.Join(dir, "real"), filepath.Join(dir, "sim")
	code, _, stderr := simbench(t, append([]string{"run", "--url", strings.TrimPrefix(ts.URL, "http://"), "--model", "M",
		"-o", real, "-q"}, trace...)...)
	require.Equal(t, exitOK, code, stderr)
	code, _, stderr = simbench(t, append([]string{"sim", "-o", simulated, "-q"}, trace...)...)
	require.Equal(t, exitOK, code, stderr)
	return real, simulated
}

// TestAIPerfDAGReplay is issue 43's "done when" for AIPerf's format: run
// and sim replay a dag_jsonl file (a coding agent spawning two helpers it
// joins later, a background reviewer fork, tool waits; a second, linear
// agent) two sessions at a time, and compare shows the session metrics.
func TestAIPerfDAGReplay(t *testing.T) {
	t.Parallel()
	real, simulated := replayBoth(t, "--trace", "../../testdata/traces/agentic/aiperf_dag_agents.jsonl",
		"--trace-format", "dag_jsonl", "--hash-block-size", "16", "--concurrency", "2")
	for _, d := range []string{real, simulated} {
		stat := profileStat(t, d)
		assert.Equal(t, 10.0, stat(results.TagRequestCount, "avg"), d)
		assert.Equal(t, 2.0, stat(results.TagSessionTurns, "count"), d)
		assert.Equal(t, 2.0, stat(results.TagSessionTurns, "min"), d)
		assert.Equal(t, 8.0, stat(results.TagSessionTurns, "max"), d)
		// Tool wait is time with nothing of the session in flight: triage
		// waits 300 ms on its tool; coder 400 ms before its join turn and
		// the 2,500 ms before its last turn less the reviewer fork's
		// service (its 1,800 ms wait overlaps the helpers).
		assert.GreaterOrEqual(t, stat(results.TagSessionToolWait, "min"), 300.0, d)
		assert.GreaterOrEqual(t, stat(results.TagSessionToolWait, "max"), 2500.0, d)
		assert.InDelta(t, stat(results.TagSessionLatency, "avg"),
			stat(results.TagSessionServerWait, "avg")+stat(results.TagSessionToolWait, "avg"), 1e-6, d)
		if d == simulated {
			assert.InDelta(t, 300, stat(results.TagSessionToolWait, "min"), 1e-9)
		}
	}
	code, stdout, stderr := simbench(t, "compare", real, simulated)
	require.Equal(t, exitOK, code, stderr)
	for _, tag := range []string{results.TagSessionLatency, results.TagSessionTurns, results.TagSessionServerWait, results.TagSessionToolWait} {
		d, _ := results.Lookup(tag)
		assert.Contains(t, stdout, "│ "+d.Header+" (")
	}
}

// TestSynthAgenticReplay: trace synth --agentic's file reads back through
// simbench's own reader (trace info) and replays on the simulator with
// --concurrency capping sessions; the same seed writes the same file.
func TestSynthAgenticReplay(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "agents.jsonl")
	synth := []string{"trace", "synth", "--agentic", "--concurrency", "3", "--num-conversations", "6", "--agent-turns", "5",
		"--agent-fanout-prob", "0.5", "--tool-delay-ms", "200", "--isl", "400", "--osl", "30", "--hash-block-size", "32", "--seed", "9"}
	code, _, stderr := simbench(t, append(synth, "-o", file)...)
	require.Equal(t, exitOK, code, stderr)
	_, stdout, _ := simbench(t, append(synth, "-o", "-")...)
	written, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, string(written), stdout, "same flags and seed, same file")

	code, info, stderr := simbench(t, "trace", "info", file, "--hash-block-size", "32")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, info, "6 multi-turn session(s):")
	sim := filepath.Join(dir, "sim")
	code, _, stderr = simbench(t, "sim", "--trace", file, "--hash-block-size", "32", "--concurrency", "3", "-o", sim, "-q")
	require.Equal(t, exitOK, code, stderr)
	run, err := results.LoadRun(sim)
	require.NoError(t, err)
	n, ok := run.Profile.Value(results.TagSessionTurns, "count")
	require.True(t, ok)
	assert.Equal(t, 6.0, n)
}

// profileStat reads the run in dir and returns a lookup of its aggregate's
// statistics that fails the test when one is missing.
func profileStat(t *testing.T, dir string) func(tag, stat string) float64 {
	t.Helper()
	run, err := results.LoadRun(dir)
	require.NoError(t, err)
	return func(tag, stat string) float64 {
		v, ok := run.Profile.Value(tag, stat)
		require.True(t, ok, "%s: %s %s", dir, tag, stat)
		return v
	}
}

package main

import (
	"net/http/httptest"
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
		run, err := results.LoadRun(d)
		require.NoError(t, err)
		stat := func(tag, s string) float64 {
			v, ok := run.Profile.Value(tag, s)
			require.True(t, ok, "%s: %s %s", d, tag, s)
			return v
		}
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

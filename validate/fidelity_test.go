package validate

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/compare"
	"github.com/simbench/simbench/fidelity"
	"github.com/simbench/simbench/loadsweep"
	"github.com/simbench/simbench/sim"
	"github.com/simbench/simbench/traces"
)

// e2eSpec is the fixture's workload: 8 closed-loop requests.
var e2eSpec = traces.Spec{Concurrency: ptrTo(2), RequestCount: ptrTo(8), ISL: ptrTo(64), OSL: ptrTo(8)}

func ptrTo[T any](v T) *T { return &v }

// simulate writes a simulated run of spec into dir, the simulator's seed
// and its per-request overhead (a slower "engine") set.
func simulate(t *testing.T, dir string, spec traces.Spec, seed int64, overheadMs float64) {
	t.Helper()
	cfg := sim.DefaultConfig()
	cfg.Seed = seed
	cfg.Frontend.RequestOverheadMs += overheadMs
	wl, _, err := spec.Build(0)
	require.NoError(t, err)
	input, err := sim.WorkloadInput(spec, wl)
	require.NoError(t, err)
	_, err = sim.WriteRun(context.Background(), dir, cfg, wl, input)
	require.NoError(t, err)
}

// sweep writes a simulated load sweep (concurrency 1, 2) into dir.
func sweep(t *testing.T, dir string, overheadMs float64) {
	t.Helper()
	plan, err := loadsweep.NewPlan(loadsweep.Flags{Concurrency: "1,2", Goodput: "time_to_first_token:100000",
		Attainment: 0.9, MaxErrorRate: -1})
	require.NoError(t, err)
	cfg := sim.DefaultConfig()
	cfg.Frontend.RequestOverheadMs += overheadMs
	spec := traces.Spec{RequestCount: ptrTo(8), ISL: ptrTo(64), OSL: ptrTo(8)}
	_, err = loadsweep.Run(context.Background(), dir, plan, spec, loadsweep.Sim(cfg, nil, sim.WithSLOs(plan.SLOs)), io.Discard)
	require.NoError(t, err)
}

// e2eFixture is an artifact directory in make e2e's layout, every run a
// simulated one: workload w1 (run twice on "silicon", a calibrated
// candidate with two seeds and an uncalibrated one 20 ms slower, a
// compare.json), workload w2 (run once, the calibrated candidate's one
// run), the load sweeps and a plan run before and after.
func e2eFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	w1 := filepath.Join(dir, "w1")
	simulate(t, filepath.Join(w1, RealDir), e2eSpec, 1, 0)
	simulate(t, filepath.Join(w1, RealRepeatDir), e2eSpec, 2, 0)
	simulate(t, filepath.Join(w1, "sim"), e2eSpec, 1, 0)
	simulate(t, filepath.Join(w1, "sim-seeds", compare.RepeatDirName(0)), e2eSpec, 1, 0)
	simulate(t, filepath.Join(w1, "sim-seeds", compare.RepeatDirName(1)), e2eSpec, 2, 0)
	simulate(t, filepath.Join(w1, "sim-uncal"), e2eSpec, 1, 20)
	require.NoError(t, os.WriteFile(filepath.Join(w1, "compare.json"), []byte(`{"metrics": [
		{"metric": "time_to_first_token", "stat": "avg", "reference": 10, "candidate": 11, "error_pct": 10}]}`), 0o644))
	w2 := filepath.Join(dir, "w2")
	simulate(t, filepath.Join(w2, RealDir), e2eSpec, 3, 0)
	simulate(t, filepath.Join(w2, "sim"), e2eSpec, 3, 5)
	sweep(t, filepath.Join(dir, LoadSweepDir, RealDir), 0)
	sweep(t, filepath.Join(dir, LoadSweepDir, "sim"), 0)
	simulate(t, filepath.Join(dir, PlanBeforeDir, "c1"), e2eSpec, 1, 0)
	simulate(t, filepath.Join(dir, PlanAfterDir, "c1"), e2eSpec, 1, 10)
	return dir
}

// TestWriteFidelity: the table has every workload's candidates, the
// real-vs-real spread of the workload run twice, the sweep's capacity and
// the plan's drift; the summary has the compared workload.
func TestWriteFidelity(t *testing.T) {
	dir := e2eFixture(t)
	names, err := Workloads(dir)
	require.NoError(t, err)
	assert.Equal(t, []string{"w1", "w2"}, names, "the load sweep and the plans are not workloads")

	f, err := WriteFidelity(dir)
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(dir, FidelityJSONName), filepath.Join(dir, FidelityTextName),
		filepath.Join(dir, SummaryName)}, f.Files)
	b, err := os.ReadFile(filepath.Join(dir, FidelityJSONName))
	require.NoError(t, err)
	var tab fidelity.Table
	require.NoError(t, json.Unmarshal(b, &tab))
	assert.Equal(t, []string{"calibrated", "uncalibrated"}, tab.Candidates)
	seen := map[string]bool{}
	for _, c := range tab.Cells {
		seen[c.Workload] = true
		if c.Workload == "w1" && c.Metric == "time_to_first_token" && c.Stat == "avg" {
			assert.Greater(t, c.ErrorPct["uncalibrated"], 0.0, "20 ms slower")
			assert.Contains(t, c.ErrorRangePct, "calibrated", "two seeds: a range")
		}
	}
	assert.Equal(t, map[string]bool{"w1": true, "w2": true}, seen)
	assert.Positive(t, tab.Repeats, "w1 ran twice")
	require.Len(t, tab.Capacities, 1)
	assert.Equal(t, LoadSweepDir, tab.Capacities[0].Workload)
	assert.NotNil(t, tab.Capacities[0].Real)
	assert.Contains(t, tab.Capacities[0].ErrorPct, "calibrated")
	require.NotNil(t, tab.Drift, "the plan ran before and after")
	assert.Positive(t, tab.Drift.MedianAbsPct, "10 ms slower after")

	txt, err := os.ReadFile(filepath.Join(dir, FidelityTextName))
	require.NoError(t, err)
	assert.Equal(t, f.Table, string(txt))
	sum, err := os.ReadFile(filepath.Join(dir, SummaryName))
	require.NoError(t, err)
	assert.Equal(t, f.Summary, string(sum))
	assert.Contains(t, f.Summary, "10.0 / 11.0 (+10.0%)")
	assert.NotContains(t, f.Summary, "w2", "w2 has no compare.json")
}

// TestWriteFidelityRefuses: a directory without workloads, and a broken
// run, are errors naming the directory; nothing is written.
func TestWriteFidelityRefuses(t *testing.T) {
	empty := t.TempDir()
	_, err := WriteFidelity(empty)
	require.ErrorContains(t, err, empty+": no <workload>/real and <workload>/sim")
	assert.NoFileExists(t, filepath.Join(empty, FidelityTextName))

	dir := t.TempDir()
	simulate(t, filepath.Join(dir, "w", RealDir), e2eSpec, 1, 0)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "w", "sim"), 0o755))
	_, err = WriteFidelity(dir)
	require.ErrorContains(t, err, filepath.Join(dir, "w", "sim"))
	assert.NoFileExists(t, filepath.Join(dir, FidelityJSONName))
}

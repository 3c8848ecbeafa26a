package validate

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/fidelity"
	"github.com/simbench/simbench/loadsweep"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/sim"
)

// suiteYAML is a small pipeline of several workloads: a load sweep whose
// points are workloads, one run, two repeats, the plan before and after,
// three candidates.
func suiteYAML(t *testing.T) string {
	base, err := filepath.Abs("../testdata/e2e/base-llamacpp.yaml")
	require.NoError(t, err)
	uncal, err := filepath.Abs("../testdata/e2e/sim-ollama.yaml")
	require.NoError(t, err)
	return `
target: {url: "http://127.0.0.1:1", model: tiny}
calibration: {base: ` + base + `, plan_requests: 4, after: true}
workloads:
  - name: load-sweep
    workload: {request_count: 8, isl: 64, osl: 16, random_seed: 1}
    goodput: "time_to_first_token:300"
    sweep: {concurrency: "1,4"}
    points: sweep-c
  - name: one
    workload: {concurrency: 2, request_count: 6, isl: 96, osl: 12, random_seed: 2}
repeats: [sweep-c4, one]
seeds: 2
candidates:
  - {name: calibrated, run: sim, fit: both}
  - {name: calibrated-first, run: sim-first, fit: first}
  - {name: uncalibrated, run: sim-uncal, config: ` + uncal + `}
`
}

func writeSuite(t *testing.T, text string) string {
	path := filepath.Join(t.TempDir(), "pipeline.yaml")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	return path
}

// fakeSilicon is the fake target: the simulator on the CPU engine's
// a-priori configuration.
func fakeSilicon(t *testing.T) func([]results.SLO) loadsweep.Runner {
	cfg, err := sim.LoadConfig("../testdata/sim/ollama-cpu-tiny.yaml")
	require.NoError(t, err)
	return func(slos []results.SLO) loadsweep.Runner { return loadsweep.Sim(cfg, nil, sim.WithSLOs(slos)) }
}

func TestLoadSuiteErrors(t *testing.T) {
	good := suiteYAML(t)
	tests := []struct{ name, from, to, want string }{
		{"unknown key in a list", "    points: sweep-c", "    point: sweep-c", `unknown key "workloads[0].point"`},
		{"no base", "calibration: {base: ", "calibration: {plan: ", `unknown key "calibration.plan"`},
		{"repeat of nothing", "repeats: [sweep-c4, one]", "repeats: [sweep-c3]", `repeats[0]: "sweep-c3" is no workload`},
		{"repeat of a sweep", "repeats: [sweep-c4, one]", "repeats: [load-sweep]", `repeats[0]: "load-sweep" is no workload`},
		{"same name twice", "  - name: one", "  - name: load-sweep", `workloads[1].name: "load-sweep" twice`},
		{"fit and config", "run: sim, fit: both}", "run: sim, fit: both, config: x.yaml}", "candidates[0]: give config"},
		{"fit after without the plan after", "after: true}", "after: false}", "candidates[0].fit: both needs calibration.after"},
		{"run real", "run: sim-first", "run: real", "candidates[1].run"},
		{"points without a sweep", "    workload: {concurrency: 2", "    points: x\n    workload: {concurrency: 2", "workloads[1].points needs a sweep"},
		{"bad goodput", `"time_to_first_token:300"`, `"ttft:x"`, "workloads[0].goodput"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Contains(t, good, tt.from)
			path := writeSuite(t, strings.Replace(good, tt.from, tt.to, 1))
			_, err := LoadSuite(path)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.Contains(t, err.Error(), path)
		})
	}
}

func TestRunSuiteFakeSilicon(t *testing.T) {
	if testing.Short() {
		t.Skip("fits the simulator three times")
	}
	s, err := LoadSuite(writeSuite(t, suiteYAML(t)))
	require.NoError(t, err)
	out := filepath.Join(t.TempDir(), "e2e")
	f, err := RunSuite(context.Background(), s, SuiteOptions{Out: out, Silicon: fakeSilicon(t)})
	require.NoError(t, err)
	assert.Len(t, f.Files, 3)

	for _, p := range []string{"calibration", "calibration-after", "calibrated-first.yaml", "calibrated-after.yaml",
		"calibrated.yaml", "calibration-both.txt", "load-sweep/real/c4", "load-sweep/sim-uncal/c1", "load-sweep/compare.json",
		"load-sweep/plots", "sweep-c4/real-repeat", "sweep-c1/sim-first-seeds/run_0002", "one/real-repeat",
		"one/sim-uncal-seeds/run_0001", "one/compare.txt", "one/plots", "sweep-c1/compare.json"} {
		_, err := os.Stat(filepath.Join(out, p))
		assert.NoError(t, err, p)
	}
	link, err := os.Readlink(filepath.Join(out, "sweep-c4", "sim"))
	require.NoError(t, err)
	assert.Equal(t, filepath.Join("..", "load-sweep", "sim", "c4"), link)

	tab := readTable(t, out)
	assert.Equal(t, []string{"calibrated", "calibrated-first", "uncalibrated"}, tab.Candidates)
	seen := map[string]bool{}
	for _, c := range tab.Cells {
		seen[c.Workload] = true
	}
	assert.Equal(t, map[string]bool{"one": true, "sweep-c1": true, "sweep-c4": true}, seen)
	require.Len(t, tab.Capacities, 1)
	assert.NotNil(t, tab.Drift, "the plan ran twice")

	_, err = RunSuite(context.Background(), s, SuiteOptions{Out: out, Silicon: fakeSilicon(t)})
	require.ErrorContains(t, err, "is not empty")

	t.Run("replay", func(t *testing.T) {
		again := filepath.Join(t.TempDir(), "again")
		_, err := RunSuite(context.Background(), s, SuiteOptions{Out: again, Replay: out})
		require.NoError(t, err)
		for _, p := range []string{"one/real/profile_export.jsonl", "calibration-after/" + firstEntry(t, filepath.Join(out, "calibration-after")) + "/profile_export.jsonl"} {
			assert.Equal(t, readFile(t, filepath.Join(out, p)), readFile(t, filepath.Join(again, p)), p)
		}
		assert.Equal(t, readFile(t, filepath.Join(out, "calibrated.yaml")), readFile(t, filepath.Join(again, "calibrated.yaml")),
			"the same runs give the same fits")
		assert.Equal(t, readFile(t, filepath.Join(out, FidelityJSONName)), readFile(t, filepath.Join(again, FidelityJSONName)))
	})
}

func readTable(t *testing.T, dir string) fidelity.Table {
	var tab fidelity.Table
	require.NoError(t, json.Unmarshal(readFile(t, filepath.Join(dir, FidelityJSONName)), &tab))
	return tab
}

func readFile(t *testing.T, path string) []byte {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

func firstEntry(t *testing.T, dir string) string {
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.NotEmpty(t, es)
	return es[0].Name()
}

// TestE2EPipelineFile: make e2e's pipeline file loads, and its candidates
// are the ones the e2e's assertions and `validate fidelity` expect.
func TestE2EPipelineFile(t *testing.T) {
	s, err := LoadSuite("../testdata/e2e/pipeline.yaml")
	require.NoError(t, err)
	var names []Candidate
	for _, c := range s.Candidates {
		names = append(names, Candidate{Name: c.Name, Run: c.Run, Seeds: c.Run + "-seeds"})
	}
	assert.Equal(t, Candidates, names)
	assert.Equal(t, 16, s.Seeds)
	assert.Equal(t, []string{"sweep-c4", "trace", "sweep-c1"}, s.Repeats)
}

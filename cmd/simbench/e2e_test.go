package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/simbench/simbench/capacity"
	"github.com/simbench/simbench/compare"
	"github.com/simbench/simbench/fidelity"
	"github.com/simbench/simbench/plots/figures"
	"github.com/simbench/simbench/results"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The real-engine tier's assertions. scripts/e2e.sh (make e2e) writes an
// artifact directory and runs this test with SIMBENCH_E2E_DIR pointing at
// it; without that variable it is skipped, so `make test` needs no engine.
//
// ISL is counted against Ollama's template as follows: usage.prompt_tokens
// is the whole rendered prompt, i.e. the intended ISL (loadgen's words, one
// tiny-model token each) plus tinyTemplateOverhead (BOS, "<|user|>\n",
// "\n<|assistant|>\n"; see TestLoadgenPromptsAreOneTokenPerWord). The
// intended ISL of each request is the a-priori simulator's, which replays
// the same workload (same digest, checked).

// e2eISLTolerance is how far usage.prompt_tokens − template may be from the
// intended ISL, relative.
const e2eISLTolerance = 0.03

func TestE2EArtifacts(t *testing.T) {
	dir := os.Getenv("SIMBENCH_E2E_DIR")
	if dir == "" {
		t.Skip("SIMBENCH_E2E_DIR is not set: run `make e2e` to check a real-engine artifact directory")
	}
	names := e2eWorkloads(t, dir)
	require.NotEmpty(t, names, "no <workload>/real and <workload>/sim under %s", dir)
	var rows []e2eRow
	for _, name := range names {
		wd := filepath.Join(dir, name)
		t.Run(name, func(t *testing.T) {
			checkSameWorkload(t, wd)
			checkRealRecords(t, wd)
			checkCompareFiles(t, wd)
		})
		if row, err := readE2ERow(name, wd); err == nil {
			rows = append(rows, row)
		}
	}
	t.Run("queueing", func(t *testing.T) { checkQueueing(t, dir) })
	t.Run("load-sweep", func(t *testing.T) { checkLoadSweep(t, filepath.Join(dir, e2eLoadSweep)) })
	table := formatE2ETable(rows)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "summary.txt"), []byte(table), 0o644))
	t.Log("sim vs real (reported, not gated):\n" + table)
	t.Log("fidelity (reported, not gated):\n" + writeFidelity(t, dir, names))
}

// writeFidelity writes dir/fidelity.txt and dir/fidelity.json: every
// workload's calibrated and uncalibrated errors beside the real-vs-real
// spread where the workload was run twice (real-repeat). Each simulator's
// prediction is the median of its seeds (sim-seeds, sim-uncal-seeds: one
// run per simulator seed), else its one run (sim, sim-uncal).
func writeFidelity(t *testing.T, dir string, names []string) string {
	var ws []fidelity.Workload
	load := func(path string) *results.Profile {
		if _, err := os.Stat(path); err != nil {
			return nil
		}
		run, err := results.LoadRun(path)
		require.NoError(t, err)
		return run.Profile
	}
	for _, name := range names {
		wd := filepath.Join(dir, name)
		w := fidelity.Workload{Name: name, Real: load(filepath.Join(wd, "real")), Repeat: load(filepath.Join(wd, "real-repeat"))}
		for _, c := range e2eCandidates {
			var runs []*results.Profile
			for _, path := range candidateRuns(t, wd, c) {
				runs = append(runs, load(path))
			}
			if len(runs) > 0 {
				w.Candidates = append(w.Candidates, fidelity.Candidate{Name: c.name, Runs: runs})
			}
		}
		ws = append(ws, w)
	}
	tab := fidelity.Build(ws, nil)
	addCapacityRow(t, tab, filepath.Join(dir, e2eLoadSweep))
	tab.AddDrift(planDrift(t, dir, load), nil)
	var txt, js bytes.Buffer
	require.NoError(t, tab.WriteText(&txt))
	require.NoError(t, tab.WriteJSON(&js))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "fidelity.txt"), txt.Bytes(), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "fidelity.json"), js.Bytes(), 0o644))
	return txt.String()
}

// e2eCandidates are the simulated configurations of every workload: the
// one run that compare and the plots use, and the runs of several
// simulator seeds that the fidelity table takes the median of. calibrated
// is fitted on the calibration plan run before the held-out workloads and
// again after them, calibrated-first on the plan before them alone (see
// scripts/e2e.sh).
var e2eCandidates = []e2eCandidate{
	{"calibrated", "sim", "sim-seeds"},
	{"calibrated-first", "sim-first", "sim-first-seeds"},
	{"uncalibrated", "sim-uncal", "sim-uncal-seeds"},
}

// The calibration plan's run directories before the held-out workloads
// and after them: the same runs (the plan is fixed by the base config and
// the server), so their differences are the host's drift over the table.
const (
	e2ePlanBefore = "calibration"
	e2ePlanAfter  = "calibration-after"
)

// planDrift pairs every plan run before the held-out workloads with the
// same run after them; none when the plan ran once.
func planDrift(t *testing.T, dir string, load func(string) *results.Profile) []fidelity.DriftRun {
	entries, err := os.ReadDir(filepath.Join(dir, e2ePlanBefore))
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	var runs []fidelity.DriftRun
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		before := load(filepath.Join(dir, e2ePlanBefore, e.Name()))
		if after := load(filepath.Join(dir, e2ePlanAfter, e.Name())); after != nil {
			runs = append(runs, fidelity.DriftRun{Name: e.Name(), Before: before, After: after})
		}
	}
	return runs
}

// e2eCandidate is a simulated configuration's name and its directories
// in a workload's: its one run and its seeds' runs.
type e2eCandidate struct{ name, sub, seeds string }

// candidateRuns are c's runs of the workload in wd: its seeds' runs when
// there are, else its one run (none when it has neither).
func candidateRuns(t *testing.T, wd string, c e2eCandidate) []string {
	if _, err := os.Stat(filepath.Join(wd, c.seeds)); err == nil {
		runs, err := compare.ExpandRuns(filepath.Join(wd, c.seeds))
		require.NoError(t, err)
		return runs
	}
	if _, err := os.Stat(filepath.Join(wd, c.sub)); err == nil {
		return []string{filepath.Join(wd, c.sub)}
	}
	return nil
}

// e2eLoadSweep is the load sweep's directory: real, sim and sim-uncal
// sweeps, compared (their points are the sweep-cN workloads).
const e2eLoadSweep = "load-sweep"

// addCapacityRow adds the load sweep's SLO capacity to the fidelity table:
// the engine's estimate and each simulator's error (reported, not gated).
func addCapacityRow(t *testing.T, tab *fidelity.Table, dir string) {
	real, err := capacity.ReadSummary(filepath.Join(dir, "real"))
	if err != nil {
		t.Logf("no capacity row: %v", err)
		return
	}
	require.NotNil(t, real.Capacity, "the engine's sweep has an SLO")
	row := fidelity.CapacitySweep{Workload: e2eLoadSweep, Load: string(real.Load), Real: real.Capacity.Estimate,
		RealStatus: real.Capacity.Method, SLO: fmt.Sprintf("%s, attainment ≥ %g", real.Goodput, real.AttainmentTarget),
		Candidates: map[string]float64{}}
	for _, c := range e2eCandidates {
		if _, err := os.Stat(filepath.Join(dir, c.sub)); os.IsNotExist(err) {
			continue
		}
		s, err := capacity.ReadSummary(filepath.Join(dir, c.sub))
		require.NoError(t, err)
		if s.Capacity != nil && s.Capacity.Estimate != nil {
			row.Candidates[c.name] = *s.Capacity.Estimate
		}
	}
	require.NoError(t, tab.AddCapacity(row))
}

// checkLoadSweep: the sweeps' comparison has both capacities and its plots.
func checkLoadSweep(t *testing.T, dir string) {
	b, err := os.ReadFile(filepath.Join(dir, "compare.json"))
	require.NoError(t, err)
	var rep struct {
		Mode     string `json:"mode"`
		Capacity struct {
			Reference, Candidate *capacity.Capacity
		} `json:"capacity"`
		Points []json.RawMessage `json:"points"`
	}
	require.NoError(t, json.Unmarshal(b, &rep))
	assert.Equal(t, "load-sweep", rep.Mode)
	assert.NotNil(t, rep.Capacity.Reference, "the engine's sweep has an SLO capacity")
	assert.NotNil(t, rep.Capacity.Candidate, "the simulator's sweep has an SLO capacity")
	assert.NotEmpty(t, rep.Points)
	txt, err := os.ReadFile(filepath.Join(dir, "compare.txt"))
	require.NoError(t, err)
	assert.Contains(t, string(txt), "capacity estimate")
	for _, png := range []string{figures.SweepTradeoffsName, figures.SweepAttainmentName} {
		checkPNG(t, filepath.Join(dir, "plots", png))
	}
}

// e2eWorkloads lists the subdirectories holding a real and a sim run (not
// the load sweep's directory, which holds sweeps).
func e2eWorkloads(t *testing.T, dir string) []string {
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		_, errR := os.Stat(filepath.Join(dir, e.Name(), "real"))
		_, errS := os.Stat(filepath.Join(dir, e.Name(), "sim"))
		if e.IsDir() && errR == nil && errS == nil && e.Name() != e2eLoadSweep {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names
}

// checkSameWorkload: run and every simulated run replayed the same request
// list.
func checkSameWorkload(t *testing.T, wd string) {
	real, err := results.LoadRun(filepath.Join(wd, "real"))
	require.NoError(t, err)
	dr := workloadDigest(real.Profile.InputConfig)
	require.NotEmpty(t, dr, "real run: no workload digest in input_config")
	for _, c := range e2eCandidates {
		for _, path := range candidateRuns(t, wd, c) {
			sim, err := results.LoadRun(path)
			require.NoError(t, err)
			assert.Equal(t, dr, workloadDigest(sim.Profile.InputConfig), "real and simulated workloads differ: %s", path)
		}
	}
}

// workloadDigest is input_config.workload.digest (older runs' key read too).
func workloadDigest(raw json.RawMessage) string {
	ic, err := results.ParseInputConfig(raw)
	if err != nil || ic.Workload == nil {
		return ""
	}
	return ic.Workload.Digest
}

// checkRealRecords: every request succeeded, produced exactly the requested
// output tokens as that many content chunks, and its prompt was the
// intended ISL plus the chat template.
func checkRealRecords(t *testing.T, wd string) {
	real, err := results.LoadJSONL(filepath.Join(wd, "real", results.RecordsName))
	require.NoError(t, err)
	// The a-priori config's records: the calibrated one adds the template
	// (frontend.template_tokens) to its prompts, as the engine does.
	sim, err := results.LoadJSONL(filepath.Join(wd, "sim-uncal", results.RecordsName))
	require.NoError(t, err)
	intended := map[int]float64{}
	for i := range sim {
		isl, _ := sim[i].Get(results.TagISL)
		intended[traceRow(&sim[i])] = isl
	}
	require.Len(t, real, len(sim), "real and simulated request counts")
	var bad []string
	for i := range real {
		if msg := checkRecord(&real[i], intended); msg != "" {
			bad = append(bad, msg)
		}
	}
	assert.Empty(t, bad, "%d of %d requests failed a check", len(bad), len(real))
}

func traceRow(m *results.RecordMetrics) int {
	if m.Ext == nil {
		return -1
	}
	return m.Ext.TraceRow
}

// checkRecord returns why m fails, or "".
func checkRecord(m *results.RecordMetrics, intended map[int]float64) string {
	id := fmt.Sprintf("trace row %d", traceRow(m))
	switch {
	case m.Error != nil:
		return fmt.Sprintf("%s: error %d %s", id, m.Error.Code, m.Error.Message)
	case m.Meta.WasCancelled:
		return id + ": cancelled"
	case m.Ext == nil || m.Ext.Usage == nil:
		return id + ": no server usage"
	}
	want := m.Ext.RequestedOutputTokens
	osl, _ := m.Get(results.TagOSL)
	if int(osl) != want || m.Ext.Usage.CompletionTokens != want || len(m.ICL) != want-1 {
		return fmt.Sprintf("%s: requested %d output tokens, got OSL %g, usage %d, %d chunks",
			id, want, osl, m.Ext.Usage.CompletionTokens, len(m.ICL)+1)
	}
	isl, ok := intended[traceRow(m)]
	got := float64(m.Ext.Usage.PromptTokens - tinyTemplateOverhead)
	if !ok || math.Abs(got-isl) > e2eISLTolerance*isl {
		return fmt.Sprintf("%s: usage.prompt_tokens %d − template %d = %g, intended ISL %g",
			id, m.Ext.Usage.PromptTokens, tinyTemplateOverhead, got, isl)
	}
	return ""
}

// checkCompareFiles: the text and JSON reports and the plots exist.
func checkCompareFiles(t *testing.T, wd string) {
	txt, err := os.ReadFile(filepath.Join(wd, "compare.txt"))
	require.NoError(t, err)
	assert.Contains(t, string(txt), "Time to First Token")
	rep, err := readCompareJSON(filepath.Join(wd, "compare.json"))
	require.NoError(t, err)
	_, ok := rep.row(results.TagTTFT, "avg")
	assert.True(t, ok, "compare.json has no time_to_first_token avg")
	for _, png := range []string{"error_pct.png", "cdf_time_to_first_token.png", "cdf_inter_token_latency.png"} {
		b, err := os.ReadFile(filepath.Join(wd, "plots", png))
		if assert.NoError(t, err) {
			assert.True(t, bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")), "%s is not a PNG", png)
		}
	}
}

// checkQueueing: with 4 slots, 8 concurrent requests queue, so TTFT rises.
func checkQueueing(t *testing.T, dir string) {
	ttft := func(name string) float64 {
		run, err := results.LoadRun(filepath.Join(dir, name, "real"))
		require.NoError(t, err)
		v, ok := run.Profile.Value(results.TagTTFT, "avg")
		require.True(t, ok, "%s: no TTFT avg", name)
		return v
	}
	c4, c8 := ttft("sweep-c4"), ttft("sweep-c8")
	t.Logf("real TTFT avg: concurrency 4 %.1f ms, concurrency 8 %.1f ms", c4, c8)
	assert.Greater(t, c8, c4, "TTFT must rise from concurrency 4 to 8 (4 slots: half the requests queue)")
}

// compareJSON is the part of `simbench compare --format json` read here.
type compareJSON struct {
	Metrics []struct {
		Metric    string   `json:"metric"`
		Stat      string   `json:"stat"`
		Reference float64  `json:"reference"`
		Candidate float64  `json:"candidate"`
		ErrorPct  *float64 `json:"error_pct"`
	} `json:"metrics"`
}

func readCompareJSON(path string) (*compareJSON, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var c compareJSON
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &c, nil
}

// e2eCell is one statistic: real, simulated, compare's error %.
type e2eCell struct {
	real, sim float64
	err       *float64
}

func (c *compareJSON) row(metric, stat string) (e2eCell, bool) {
	for _, m := range c.Metrics {
		if m.Metric == metric && m.Stat == stat {
			return e2eCell{m.Reference, m.Candidate, m.ErrorPct}, true
		}
	}
	return e2eCell{}, false
}

type e2eRow struct {
	name  string
	cells [4]e2eCell // TTFT avg, p99, ITL avg, p99
}

var e2eColumns = [4][2]string{{results.TagTTFT, "avg"}, {results.TagTTFT, "p99"},
	{results.TagITL, "avg"}, {results.TagITL, "p99"}}

func readE2ERow(name, wd string) (e2eRow, error) {
	rep, err := readCompareJSON(filepath.Join(wd, "compare.json"))
	if err != nil {
		return e2eRow{}, err
	}
	row := e2eRow{name: name}
	for i, col := range e2eColumns {
		row.cells[i], _ = rep.row(col[0], col[1])
	}
	return row, nil
}

// formatE2ETable prints real / sim (error %) per workload, values in ms.
func formatE2ETable(rows []e2eRow) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-10s", "workload")
	for _, col := range e2eColumns {
		name := map[string]string{results.TagTTFT: "TTFT", results.TagITL: "ITL"}[col[0]]
		fmt.Fprintf(&b, "  %-29s", name+" "+col[1]+" ms real/sim (err)")
	}
	b.WriteString("\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "%-10s", r.name)
		for _, c := range r.cells {
			e := "n/a"
			if c.err != nil {
				e = fmt.Sprintf("%+.1f%%", *c.err)
			}
			fmt.Fprintf(&b, "  %-29s", fmt.Sprintf("%.1f / %.1f (%s)", c.real, c.sim, e))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// TestE2ECheckRecord: the per-request check catches each violation.
func TestE2ECheckRecord(t *testing.T) {
	good := func() *results.Record {
		r := &results.Record{TraceRow: 3, StartNs: 1e9, AckNs: 1.01e9, EndNs: 2e9, InputTokens: 100,
			OutputTokens: 4, RequestedOutputTokens: 4,
			Usage: &results.Usage{PromptTokens: 100 + tinyTemplateOverhead, CompletionTokens: 4}}
		for i := range 4 {
			r.Chunks = append(r.Chunks, results.Chunk{AtNs: 1.1e9 + int64(i)*1e7, Tokens: 1})
		}
		return r
	}
	intended := map[int]float64{3: 100}
	tests := map[string]struct {
		mutate func(*results.Record)
		want   string
	}{
		"ok":                  {func(*results.Record) {}, ""},
		"two tokens in chunk": {func(r *results.Record) { r.Chunks = r.Chunks[:3]; r.Chunks[2].Tokens = 2 }, "4 output tokens"},
		"stopped early":       {func(r *results.Record) { r.OutputTokens, r.Usage.CompletionTokens = 3, 3 }, "4 output tokens"},
		"prompt too long":     {func(r *results.Record) { r.Usage.PromptTokens += 10 }, "intended ISL 100"},
		"http error":          {func(r *results.Record) { r.Error = &results.ErrorDetails{Code: 500, Message: "boom"} }, "error 500"},
		"no usage":            {func(r *results.Record) { r.Usage = nil }, "no server usage"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			r := good()
			tt.mutate(r)
			m := results.ComputeMetrics(r)
			got := checkRecord(&m, intended)
			if tt.want == "" {
				assert.Empty(t, got)
			} else {
				assert.Contains(t, got, tt.want)
			}
		})
	}
}

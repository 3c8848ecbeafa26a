package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/simbench/simbench/capacity"
	"github.com/simbench/simbench/fidelity"
	"github.com/simbench/simbench/plots/figures"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/validate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The real-engine tier's assertions. scripts/e2e.sh (make e2e) writes an
// artifact directory and its fidelity table with `simbench validate
// --pipeline testdata/e2e/pipeline.yaml`, and runs this test with SIMBENCH_E2E_DIR pointing at it; without that
// variable it is skipped, so `make test` needs no engine.
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
	names, err := validate.Workloads(dir)
	require.NoError(t, err)
	require.NotEmpty(t, names, "no <workload>/real and <workload>/sim under %s", dir)
	for _, name := range names {
		wd := filepath.Join(dir, name)
		t.Run(name, func(t *testing.T) {
			checkSameWorkload(t, wd)
			checkRealRecords(t, wd)
			checkCompareFiles(t, wd)
		})
	}
	t.Run("queueing", func(t *testing.T) { checkQueueing(t, dir) })
	t.Run(validate.LoadSweepDir, func(t *testing.T) { checkLoadSweep(t, filepath.Join(dir, validate.LoadSweepDir)) })
	t.Run("fidelity", func(t *testing.T) { checkFidelity(t, dir, names) })
}

// checkFidelity: `simbench validate fidelity` wrote the table (reported,
// not gated) with every workload, every configuration, the load sweep's
// capacity and, when the plan ran twice, the host's drift; and the
// compare summary.
func checkFidelity(t *testing.T, dir string, names []string) {
	b, err := os.ReadFile(filepath.Join(dir, validate.FidelityJSONName))
	require.NoError(t, err)
	var tab fidelity.Table
	require.NoError(t, json.Unmarshal(b, &tab))
	var want []string
	for _, c := range validate.Candidates {
		want = append(want, c.Name)
	}
	assert.ElementsMatch(t, want, tab.Candidates)
	seen := map[string]bool{}
	for _, c := range tab.Cells {
		seen[c.Workload] = true
	}
	for _, name := range names {
		assert.True(t, seen[name], "fidelity table: no cell of %s", name)
	}
	assert.Len(t, tab.Summaries, len(want))
	if assert.Len(t, tab.Capacities, 1) {
		assert.Equal(t, validate.LoadSweepDir, tab.Capacities[0].Workload)
	}
	if _, err := os.Stat(filepath.Join(dir, validate.PlanAfterDir)); err == nil {
		assert.NotNil(t, tab.Drift, "the plan ran before and after the workloads: the table has the host's drift")
	}
	txt, err := os.ReadFile(filepath.Join(dir, validate.FidelityTextName))
	require.NoError(t, err)
	assert.NotEmpty(t, txt)
	t.Log("fidelity (reported, not gated):\n" + string(txt))
	sum, err := os.ReadFile(filepath.Join(dir, validate.SummaryName))
	require.NoError(t, err)
	for _, name := range names {
		assert.Contains(t, string(sum), name+" ", "summary: no row of %s", name)
	}
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

// checkSameWorkload: run and every simulated run replayed the same request
// list.
func checkSameWorkload(t *testing.T, wd string) {
	real, err := results.LoadRun(filepath.Join(wd, "real"))
	require.NoError(t, err)
	dr := workloadDigest(real.Profile.InputConfig)
	require.NotEmpty(t, dr, "real run: no workload digest in input_config")
	for _, c := range validate.Candidates {
		paths, err := validate.CandidateRuns(wd, c)
		require.NoError(t, err)
		for _, path := range paths {
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
	assert.True(t, rep.has(results.TagTTFT, "avg"), "compare.json has no time_to_first_token avg")
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
		Metric string `json:"metric"`
		Stat   string `json:"stat"`
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

// has reports whether the comparison has metric.stat.
func (c *compareJSON) has(metric, stat string) bool {
	for _, m := range c.Metrics {
		if m.Metric == metric && m.Stat == stat {
			return true
		}
	}
	return false
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

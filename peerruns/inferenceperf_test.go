package peerruns

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/internal/warning"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/traces"
)

// realStage is the published stage 0 of the real report.
func realStage(t *testing.T) string {
	b, err := os.ReadFile(filepath.Join(ipReport, "stage_0_lifecycle_metrics.json"))
	require.NoError(t, err)
	return string(b)
}

// writeReport writes a report directory with config and the given stage
// files.
func writeReport(t *testing.T, config string, stages map[int]string) string {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, configName), []byte(config), 0o644))
	for i, s := range stages {
		require.NoError(t, os.WriteFile(stagePath(dir, "", i), []byte(s), 0o644))
	}
	return dir
}

const randomConfig = `api:
  type: chat
  streaming: true
data:
  type: random
  input_distribution: {mean: 500, std_dev: 0, min: 500, max: 500}
  output_distribution: {mean: 100, std_dev: 0, min: 100, max: 100}
load:
  type: %LOAD%
  stages:
  - %STAGE%
  num_workers: 4
  worker_max_concurrency: 8
server:
  type: vllm
  model_name: m
  ignore_eos: %EOS%
`

func randomCfg(load, stage, eos string) string {
	r := strings.NewReplacer("%LOAD%", load, "%STAGE%", stage, "%EOS%", eos)
	return r.Replace(randomConfig)
}

// TestInferencePerfWorkloads rebuilds the workload of each data and load
// type from config.yaml.
func TestInferencePerfWorkloads(t *testing.T) {
	for _, tc := range []struct {
		name, config         string
		requests, conc, osl  int
		timestamps           bool
		itl                  bool
		noWorkload, warnings string
	}{
		{name: "random constant", config: randomCfg("constant", "{rate: 2, duration: 10}", "true"),
			requests: 20, conc: 32, osl: 100, timestamps: true, itl: true, warnings: "(poisson-span at 2 requests/s)"},
		{name: "random poisson", config: randomCfg("poisson", "{rate: 4, duration: 5}", "true"),
			requests: 20, conc: 32, osl: 100, timestamps: true, itl: true, warnings: "a fresh draw of the stage's arrival process (poisson at 4 requests/s)"},
		{name: "concurrent", config: randomCfg("concurrent", "{num_requests: 50, concurrency_level: 4}", "true"),
			requests: 50, conc: 4, osl: 100, itl: true},
		{name: "no ignore_eos", config: randomCfg("constant", "{rate: 2, duration: 10}", "false"),
			requests: 20, conc: 32, osl: 100, timestamps: true, warnings: "ignore_eos is not true"},
		{name: "unsupported data", config: strings.Replace(randomCfg("constant", "{rate: 2, duration: 10}", "true"), "type: random", "type: shareGPT", 1),
			noWorkload: "data.type shareGPT is not rebuilt", warnings: "has no configured output length"},
		{name: "trace replay", config: randomCfg("trace_replay", "{rate: 2, duration: 10}", "true"),
			noWorkload: "load.type trace_replay is not rebuilt", itl: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeReport(t, tc.config, map[int]string{0: realStage(t)})
			run, err := Open(dir)
			require.NoError(t, err)
			all := strings.Join(warning.Messages(append(run.Warnings, run.WorkloadNotes...)), "\n")
			assert.Contains(t, all, tc.warnings)
			_, hasITL := run.Profile.Value(results.TagITL, "avg")
			assert.Equal(t, tc.itl, hasITL, all)
			if tc.noWorkload != "" {
				assert.Nil(t, run.Workload)
				assert.Contains(t, run.NoWorkload, tc.noWorkload)
				return
			}
			require.NotNil(t, run.Workload, run.NoWorkload)
			wl := run.Workload
			assert.Len(t, wl.Requests, tc.requests)
			assert.Equal(t, tc.conc, wl.Concurrency)
			assert.Equal(t, tc.timestamps, wl.Requests[0].HasTimestamp)
			assert.Equal(t, tc.osl, wl.Requests[0].OutputLength)
			assert.Equal(t, 574, wl.Requests[0].InputLength, "the measured prompt_len mean, rounded")
			assert.Equal(t, traces.ComputeDigest(wl.Requests), wl.Digest)
		})
	}
}

// TestInferencePerfSharedPrefixRepeats checks the rebuilt shared_prefix
// prompts: G groups share their system block, and request i repeats
// request i mod G·P exactly.
func TestInferencePerfSharedPrefixRepeats(t *testing.T) {
	run, err := Open(ipReport + "/stage_0")
	require.NoError(t, err)
	reqs := run.Workload.Requests
	require.Len(t, reqs, 4800)
	assert.Equal(t, reqs[3].HashIDs, reqs[103].HashIDs, "prompt 3 again")
	assert.Equal(t, reqs[3].HashIDs[0], reqs[13].HashIDs[0], "same group, same system prompt")
	assert.NotEqual(t, reqs[3].HashIDs[1:], reqs[13].HashIDs[1:], "same group, another question")
	assert.NotEqual(t, reqs[3].HashIDs[0], reqs[4].HashIDs[0], "another group")
	assertSpans(t, run.Workload, 8)
}

// TestInferencePerfLaterStageStartsWarm: inference-perf lets each stage
// finish before the next begins, so a later stage of a shared_prefix run
// starts on an idle server holding its prompts: its workload sends them
// first as a warmup phase, and its measured requests repeat them. The
// first stage starts cold.
func TestInferencePerfLaterStageStartsWarm(t *testing.T) {
	first, err := Open(ipReport + "/stage_0")
	require.NoError(t, err)
	assert.Zero(t, traces.Describe(first.Workload).WarmupRequests)
	later, err := Open(ipReport + "/stage_1")
	require.NoError(t, err)
	reqs := later.Workload.Requests
	require.Len(t, reqs, 100+12000, "one cycle of the 10 × 10 prompts, then the stage's 20 requests/s for 600 s")
	for i, r := range reqs {
		require.Equal(t, i < 100, r.Warmup, "request %d", i)
	}
	assert.Equal(t, reqs[7].HashIDs, reqs[100+7].HashIDs, "the first measured requests send the prompts the warmup cached")
	assert.Equal(t, reqs[7].HashIDs, reqs[100+107].HashIDs)
	var ic results.InputConfig
	require.NoError(t, json.Unmarshal(later.Profile.InputConfig, &ic))
	require.NotNil(t, ic.Loadgen.WarmupRequestCount)
	assert.Equal(t, 100, *ic.Loadgen.WarmupRequestCount)
	assert.Equal(t, 12000, ic.Loadgen.RequestCount)
	assert.Contains(t, fmt.Sprint(later.WorkloadNotes), "stage 1 starts with its 100 prompts as a warmup phase")
}

// TestInferencePerfBadInput checks that broken reports fail with the file,
// the line and the field.
func TestInferencePerfBadInput(t *testing.T) {
	good := randomCfg("constant", "{rate: 2, duration: 10}", "true")
	stage := realStage(t)
	for _, tc := range []struct {
		name, config, stage, path string
		stages                    []int
		want                      []string
	}{
		{name: "zero rate", config: randomCfg("constant", "{rate: 0, duration: 10}", "true"), stage: stage,
			want: []string{"config.yaml:11: load.stages[0].rate: must be a finite number > 0, got 0"}},
		{name: "bad duration", config: randomCfg("constant", "{rate: 1, duration: -3}", "true"), stage: stage,
			want: []string{"config.yaml:11: load.stages[0].duration"}},
		{name: "no requests", config: randomCfg("concurrent", "{num_requests: 0, concurrency_level: 2}", "true"), stage: stage,
			want: []string{"config.yaml:11: load.stages[0].num_requests: must be > 0"}},
		{name: "yaml type", config: strings.Replace(good, "num_workers: 4", "num_workers: four", 1), stage: stage,
			want: []string{"config.yaml: line 12", "four"}},
		{name: "stage beyond config", config: good, stage: stage, stages: []int{3}, path: "stage_3",
			want: []string{"config.yaml:11: load.stages: 1 stage(s), but the report has stage 3"}},
		{name: "stage type", config: good, stage: strings.Replace(stage, `"count": 4800,
    "latency"`, `"count": "all",
    "latency"`, 1),
			want: []string{"stage_0_lifecycle_metrics.json:25: field \"successes.count\": string is not a int"}},
		{name: "no successes", config: good, stage: `{"failures": {"count": 3}}`,
			want: []string{"stage_0_lifecycle_metrics.json: field \"successes\" is missing"}},
		{name: "no latency", config: good, stage: `{"successes": {"count": 3, "latency": {}}}`,
			want: []string{"field \"successes.latency.request_latency\" is missing"}},
		{name: "malformed", config: good, stage: "{\n\"successes\": {\n,}",
			want: []string{"stage_0_lifecycle_metrics.json:3: malformed JSON"}},
		{name: "two stages", config: good, stage: stage, stages: []int{0, 1},
			want: []string{"an inference-perf report of 2 stages (0, 1): name one as", "stage_N"}},
		{name: "missing stage", config: good, stage: stage, path: "stage_7", stages: []int{0, 1},
			want: []string{"no stage 7 in this inference-perf report (stages: 0, 1)"}},
		{name: "system prompt distribution", config: strings.Replace(strings.Replace(good, "type: random", `type: shared_prefix
  shared_prefix:
    system_prompt_len: abc`, 1), "", "", 0), stage: stage,
			want: []string{"config.yaml:7: data.shared_prefix.system_prompt_len: \"abc\" is not a number of tokens"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stages := map[int]string{}
			for _, i := range append([]int{0}, tc.stages...) {
				stages[i] = tc.stage
			}
			if len(tc.stages) > 0 && tc.stages[0] != 0 {
				delete(stages, 0)
			}
			dir := writeReport(t, tc.config, stages)
			_, err := Open(filepath.Join(dir, tc.path))
			require.Error(t, err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

// TestInferencePerfAllFailed: a stage without a successful request is read
// as its counts, not refused for its missing latencies.
func TestInferencePerfAllFailed(t *testing.T) {
	dir := writeReport(t, randomCfg("constant", "{rate: 2, duration: 10}", "true"),
		map[int]string{0: `{"successes": {"count": 0, "latency": {"request_latency": null}}, "failures": {"count": 20}}`})
	run, err := Open(dir)
	require.NoError(t, err)
	n, _ := run.Profile.Value(results.TagErrorRequestCount, "avg")
	assert.Equal(t, 20.0, n)
	_, ok := run.Profile.Value(results.TagRequestLatency, "avg")
	assert.False(t, ok)
	assert.Contains(t, strings.Join(warning.Messages(run.Warnings), "\n"), "no request succeeded")
	require.NotNil(t, run.Workload, "the workload is the configured one all the same")
}

const (
	ipRunDir    = "testdata/inference-perf/20260218-150304-codellama-34b-tp2-general"
	ipStaircase = "testdata/inference-perf/wva-staircase-20260803"
	ipAgentic   = "testdata/inference-perf/agentic-baseline-v0.7.0/results/baseline-stage_0_lifecycle_metrics.json"
)

// TestInferencePerfLayouts: a report is found in the directory given or in
// its results/ (inference-perf's layout under a run directory), by a stage
// file of any prefix, and DIR/stage_N names a stage of either.
func TestInferencePerfLayouts(t *testing.T) {
	for path, want := range map[string]string{
		ipRunDir:                              "20260218-150304-codellama-34b-tp2-general/stage_0",
		ipRunDir + "/stage_1":                 "20260218-150304-codellama-34b-tp2-general/stage_1",
		ipReport + "/stage_1":                 "20260218-150304-codellama-34b-tp2-general/stage_1",
		ipStaircase + "/stage_2":              "wva-staircase-20260803/stage_2",
		ipAgentic:                             "agentic-baseline-v0.7.0/baseline-stage_0",
		filepath.Dir(filepath.Dir(ipAgentic)): "agentic-baseline-v0.7.0/baseline-stage_0",
	} {
		assert.Equal(t, FormatInferencePerf, Detect(path), path)
		run, err := Open(path)
		if strings.HasSuffix(want, "stage_0") && path == ipRunDir {
			require.ErrorContains(t, err, "an inference-perf report of 2 stages (0, 1)", "the run directory holds two stages")
			continue
		}
		require.NoError(t, err, path)
		assert.Equal(t, want, run.Name, path)
	}
}

// TestInferencePerfPrefixes: a directory with the stage files of two
// prefixes (two arms of an experiment) names neither, and says which.
func TestInferencePerfPrefixes(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile(ipAgentic)
	require.NoError(t, err)
	for _, name := range []string{"baseline-stage_0_lifecycle_metrics.json", "treatment-stage_0_lifecycle_metrics.json"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o644))
	}
	_, err = Open(dir)
	require.ErrorContains(t, err, `the stage files of 2 inference-perf reports (file prefixes "baseline-", "treatment-"): name one stage file`)
	run, err := Open(filepath.Join(dir, "treatment-stage_0_lifecycle_metrics.json"))
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(run.Name, "/treatment-stage_0"), run.Name)
}

// TestInferencePerfPromptTokens: inference-perf 0.7 publishes the prompt
// lengths as prompt_tokens; they are the input_sequence_length.
func TestInferencePerfPromptTokens(t *testing.T) {
	run, err := Open(ipAgentic)
	require.NoError(t, err)
	isl, ok := run.Profile.Value(results.TagISL, "avg")
	require.True(t, ok)
	assert.InDelta(t, 97366.19419642857, isl, 1e-9)
	p99, _ := run.Profile.Value(results.TagISL, "p99")
	assert.InDelta(t, 249391.49, p99, 1e-9)
	assert.Nil(t, run.Workload)
	assert.Contains(t, run.NoWorkload, "no config.yaml beside the report")
}

// TestInferencePerfSweep: a configuration whose load.sweep picked the
// stages' rates as it ran lists no load.stages; each stage is rebuilt at
// the requested rate of its load_summary, for the requests it sent.
func TestInferencePerfSweep(t *testing.T) {
	cfg := strings.Replace(randomCfg("constant", "{rate: 2, duration: 10}", "true"), `  stages:
  - {rate: 2, duration: 10}
`, `  sweep: {type: linear, num_stages: 3, stage_duration: 60}
`, 1)
	require.Contains(t, cfg, "sweep:")
	stage := strings.Replace(realStage(t), `"requested_rate": 8.0`, `"requested_rate": 31.4`, 1)
	dir := writeReport(t, cfg, map[int]string{0: stage, 1: stage})
	run, err := Open(filepath.Join(dir, "stage_1"))
	require.NoError(t, err)
	require.NotNil(t, run.Workload, run.NoWorkload)
	assert.Len(t, run.Workload.Requests, 4800, "load_summary.count")
	assertSpans(t, run.Workload, 31.4)
	assert.Contains(t, strings.Join(warning.Messages(run.WorkloadNotes), "\n"),
		"load.sweep chose the stages' rates as it ran: stage 1 is rebuilt from its load_summary, 4800 requests at 31.4 requests/s")

	noRate := strings.Replace(realStage(t), `"requested_rate": 8.0`, `"requested_rate": 0.0`, 1)
	dir = writeReport(t, cfg, map[int]string{0: noRate})
	run, err = Open(dir)
	require.NoError(t, err)
	assert.Nil(t, run.Workload)
	assert.Contains(t, run.NoWorkload, "has no requested_rate and count")
}

// assertSpans checks that a rebuilt constant-load stage arrives as
// inference-perf's constant timer sends: its n requests span n/rate s, less
// the gap before the first (about one n-th of it), at gaps that vary as a
// Poisson process's do, not evenly.
func assertSpans(t *testing.T, wl *traces.Workload, rate float64) {
	t.Helper()
	n := len(wl.Requests)
	span := float64(n) * 1000 / rate
	last := wl.Requests[n-1].TimestampMs
	assert.Less(t, last, span)
	assert.Greater(t, last, 0.99*span)
	assert.Contains(t, wl.Source, "synthetic:poisson-span ")
	assert.InDelta(t, 1, traces.Describe(wl).GapCV, 0.1, "the gaps' coefficient of variation")
}

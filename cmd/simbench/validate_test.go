package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/fidelity"
	"github.com/simbench/simbench/loadgen/openaitest"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/sim"
	"github.com/simbench/simbench/traces"
	"github.com/simbench/simbench/validate"
)

const validateTestKey = "sk-validate-test-KEY-0a1b2c3d"

// validateServer is the scripted OpenAI server (TTFT 20 ms, a token every
// 4 ms) behind /v1/models for the health check, which answers health.
func validateServer(t *testing.T, health int) (*httptest.Server, *openaitest.Server) {
	t.Helper()
	srv := &openaitest.Server{TTFT: 20 * time.Millisecond, ITL: 4 * time.Millisecond, Record: true}
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/models", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(health) })
	mux.Handle("/", srv)
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return ts, srv
}

// slowSim is a simulator configuration whose decode step (40 ms) is ten
// times the server's 4 ms token interval: ITL error ≈ +900 %, whatever
// the machine's timer noise.
const slowSim = `workers: 1
engine:
  type: vllm
  num_gpu_blocks: 4096
timing:
  model: linear
  linear:
    base_ms: 40
    prefill_token_ms: 0.01
    decode_seq_ms: 0
    context_token_ms: 0
`

// writePipeline writes sim.yaml and pipeline.yaml into a new directory;
// extra is appended to the pipeline (compare, repeat, … sections).
func writePipeline(t *testing.T, url, extra string) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sim.yaml"), []byte(slowSim), 0o644))
	p := fmt.Sprintf(`target:
  url: %s
  model: tiny
  api_key_env: SIMBENCH_VALIDATE_TEST_KEY
  health_check: /v1/models
  extra_inputs: {ignore_eos: true}
workload:
  concurrency: 2
  request_count: 8
  warmup_request_count: 1
  isl: 50
  osl: 8
  random_seed: 3
sim:
  config: sim.yaml
%s`, url, extra)
	path := filepath.Join(dir, "pipeline.yaml")
	require.NoError(t, os.WriteFile(path, []byte(p), 0o644))
	return path
}

func validateCLI(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(append([]string{"simbench", "validate"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

func readHistoryT(t *testing.T, path string) []validate.HistoryEntry {
	t.Helper()
	es, err := validate.ReadHistory(path)
	require.NoError(t, err)
	return es
}

// TestValidateEndToEnd runs the whole pipeline twice against the scripted
// server: a loose ITL bound passes (exit 0), a tight one breaches (exit 3);
// every artifact is written and each run appends one history line.
func TestValidateEndToEnd(t *testing.T) {
	t.Setenv("SIMBENCH_VALIDATE_TEST_KEY", validateTestKey)
	t.Setenv("GITHUB_SHA", "0123456789abcdef")
	ts, srv := validateServer(t, http.StatusOK)
	out := filepath.Join(t.TempDir(), "artifacts")

	loose := writePipeline(t, ts.URL, "compare:\n  fail_above: [inter_token_latency.avg=5000%]\ngoodput: time_to_first_token:100000\n")
	code, stdout, stderr := validateCLI("--config", loose, "-o", out)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "verdict: pass")
	checkValidateArtifacts(t, out)
	hist := readHistoryT(t, filepath.Join(out, "history.jsonl"))
	require.Len(t, hist, 1)
	assert.Equal(t, "pass", hist[0].Verdict)
	assert.Equal(t, "0123456789abcdef", hist[0].Commit)
	assert.Len(t, hist[0].ConfigDigest, 64)
	assert.Greater(t, hist[0].Metrics["inter_token_latency.avg"], 300.0, "sim ITL 40 ms vs real 4 ms")
	assert.Equal(t, 5000.0, hist[0].Bounds["inter_token_latency.avg"])
	cmpJSON := string(runReadFile(t, filepath.Join(out, validate.CompareJSONName)))
	for _, tag := range []string{results.TagGoodRequestCount, results.TagGoodput, results.TagAttainment} {
		assert.Contains(t, cmpJSON, `"`+tag+`"`, "goodput: both arms aggregate the SLOs; compare aligns them")
	}

	tight := writePipeline(t, ts.URL, "compare:\n  fail_above: [inter_token_latency.avg=100%]\n  plots: false\n")
	code, stdout, stderr = validateCLI("--config", tight, "-o", out, "--quiet")
	require.Equal(t, 3, code, stderr)
	assert.Contains(t, stdout, "verdict: breach")
	assert.Equal(t, "simbench: threshold breached: inter_token_latency.avg (|+", stderr[:57], "--quiet: only the verdict")
	assert.Equal(t, 1, strings.Count(stderr, "\n"))
	hist = readHistoryT(t, filepath.Join(out, "history.jsonl"))
	require.Len(t, hist, 2, "one line appended per validation")
	assert.Equal(t, "breach", hist[1].Verdict)
	assert.Equal(t, []string{"inter_token_latency.avg"}, hist[1].Breaches)
	assert.NotEqual(t, hist[0].ConfigDigest, hist[1].ConfigDigest)

	for _, r := range srv.Requests() {
		assert.Equal(t, "Bearer "+validateTestKey, r.Header.Get("Authorization"))
		assert.Equal(t, true, r.Body["ignore_eos"])
	}
	assertKeyNowhere(t, out, validateTestKey)
}

// checkValidateArtifacts checks every file a single-round validation writes.
func checkValidateArtifacts(t *testing.T, out string) {
	t.Helper()
	for _, f := range []string{"real/" + results.ProfileJSONName, "real/" + results.RecordsName, "real/" + results.ProfileCSVName,
		"sim/" + results.ProfileJSONName, "sim/" + results.RecordsName, "sim/sim_summary.json", "sim.yaml",
		"compare.json", "compare.md", "compare.txt", "junit.xml", "logs/real.txt", "logs/sim.txt"} {
		st, err := os.Stat(filepath.Join(out, f))
		require.NoError(t, err, f)
		assert.Positive(t, st.Size(), f)
	}
	recs, err := results.LoadJSONL(filepath.Join(out, "real", results.RecordsName))
	require.NoError(t, err)
	assert.Len(t, recs, 8, "the warmup request is not exported")
	var cmp struct {
		Verdicts []struct{ Field, Status string } `json:"verdicts"`
		Metrics  []json.RawMessage                `json:"metrics"`
	}
	require.NoError(t, json.Unmarshal(runReadFile(t, filepath.Join(out, validate.CompareJSONName)), &cmp))
	assert.NotEmpty(t, cmp.Metrics)
	require.Len(t, cmp.Verdicts, 1)
	var junit struct {
		Tests int `xml:"tests,attr"`
	}
	require.NoError(t, xml.Unmarshal(runReadFile(t, filepath.Join(out, validate.JUnitName)), &junit))
	assert.Equal(t, 1, junit.Tests)
	md := string(runReadFile(t, filepath.Join(out, validate.CompareMDName)))
	assert.Contains(t, md, "### simbench compare")
	assert.Contains(t, md, "](plots/error_pct.png)", "plot links relative to compare.md")
	pngs, err := filepath.Glob(filepath.Join(out, "plots", "*.png"))
	require.NoError(t, err)
	assert.GreaterOrEqual(t, len(pngs), 5)
	for _, p := range pngs {
		checkPNG(t, p)
	}
}

// assertKeyNowhere fails when any file under dir contains key.
func assertKeyNowhere(t *testing.T, dir, key string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err == nil && bytes.Contains(b, []byte(key)) {
			t.Errorf("%s contains the API key", path)
		}
		return err
	}))
}

// TestValidateRepeatInterleaved: with repeat: 4 the arms alternate in
// rotating order after a discarded warm-up round, and the run lists are
// compared with the Mann–Whitney test; 4 runs a side reach p = 2/70.
func TestValidateRepeatInterleaved(t *testing.T) {
	ts, _ := validateServer(t, http.StatusOK)
	out := filepath.Join(t.TempDir(), "artifacts")
	p := writePipeline(t, ts.URL, "compare:\n  fail_above: [inter_token_latency.avg=100%, request_count.avg=1%]\nrepeat: 4\n")
	code, stdout, stderr := validateCLI("--config", p, "-o", out)
	require.Equal(t, 3, code, stderr)
	var order []string
	for _, line := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(line, "validate: real run") || strings.HasPrefix(line, "validate: sim run") {
			step, _, _ := strings.Cut(strings.TrimPrefix(line, "validate: "), " →")
			order = append(order, strings.Replace(step, " run ", " ", 1))
		}
	}
	assert.Equal(t, []string{"real (warm-up, discarded)", "sim (warm-up, discarded)",
		"real (round 1 of 4)", "sim (round 1 of 4)", "sim (round 2 of 4)", "real (round 2 of 4)",
		"real (round 3 of 4)", "sim (round 3 of 4)", "sim (round 4 of 4)", "real (round 4 of 4)"}, order)
	for _, d := range []string{"warmup/real", "warmup/sim", "real/run_0001", "real/run_0004", "sim/run_0001", "sim/run_0004"} {
		assert.FileExists(t, filepath.Join(out, d, results.ProfileJSONName))
	}
	var cmp struct {
		Mode     string `json:"mode"`
		Verdicts []struct {
			Field, Status string
		} `json:"verdicts"`
	}
	require.NoError(t, json.Unmarshal(runReadFile(t, filepath.Join(out, validate.CompareJSONName)), &cmp))
	assert.Equal(t, "multi-run", cmp.Mode)
	status := map[string]string{}
	for _, v := range cmp.Verdicts {
		status[v.Field] = v.Status
	}
	assert.Equal(t, map[string]string{"inter_token_latency.avg": "breach", "request_count.avg": "pass"}, status)
	hist := readHistoryT(t, filepath.Join(out, "history.jsonl"))
	require.Len(t, hist, 1)
	assert.Equal(t, 4, hist[0].Repeat)
	assert.InDelta(t, 2.0/70, hist[0].PValues["inter_token_latency.avg"], 1e-12)
	assert.Contains(t, stdout, "BREACH")
	assert.FileExists(t, filepath.Join(out, "plots", "error_pct.png"))
	// The sim's error beside silicon's own spread (rounds 1 and 2).
	var fid fidelity.Table
	require.NoError(t, json.Unmarshal(runReadFile(t, filepath.Join(out, validate.FidelityJSONName)), &fid))
	assert.Equal(t, []string{"sim"}, fid.Candidates)
	assert.Positive(t, fid.Repeats)
	assert.Contains(t, stderr, "sim error beside silicon's own spread")
	assert.Contains(t, string(runReadFile(t, filepath.Join(out, validate.FidelityTextName))), "real-vs-real")
}

// TestValidateCalibratesLive: calibrate_from: live runs the calibration
// plan on the target first, keeps its runs, and predicts with the fit.
func TestValidateCalibratesLive(t *testing.T) {
	ts, _ := validateServer(t, http.StatusOK)
	out := filepath.Join(t.TempDir(), "artifacts")
	p := writePipeline(t, ts.URL, "  calibrate: true\n  calibrate_from: live\n  plan_requests: 4\ncompare:\n  plots: false\n")
	code, _, stderr := validateCLI("--config", p, "-o", out)
	require.Contains(t, []int{0, 3}, code, stderr)
	assert.Contains(t, stderr, "calibrating the simulator on a plan of runs")
	for _, d := range []string{"c1-short", "c1-long"} {
		assert.FileExists(t, filepath.Join(out, "calibration", d, results.ProfileJSONName))
	}
	cfg, err := sim.LoadConfig(filepath.Join(out, "sim.yaml"))
	require.NoError(t, err)
	require.NotNil(t, cfg.Calibration)
	assert.Len(t, cfg.Calibration.FittedOn, 4)
	assert.Contains(t, string(runReadFile(t, filepath.Join(out, "logs", "calibrate.txt"))), "calibration plan: 4 runs")
}

// TestValidateCalibratesOnItsSiliconRun fits sim.yaml to the pipeline's
// own silicon run (few evaluations: the fit's quality is calibrate's
// test); with repeat > 1 that is the warm-up round's, so the measured runs
// are held out.
func TestValidateCalibratesOnItsSiliconRun(t *testing.T) {
	ts, _ := validateServer(t, http.StatusOK)
	out := filepath.Join(t.TempDir(), "artifacts")
	p := writePipeline(t, ts.URL, "  calibrate: true\n  max_evals: 12\ncompare:\n  plots: false\nrepeat: 2\n")
	code, _, stderr := validateCLI("--config", p, "-o", out)
	require.Equal(t, 0, code, stderr)
	cal := strings.Index(stderr, "validate: calibrating the simulator on "+filepath.Join(out, "warmup", "real")+" →")
	require.Positive(t, cal, stderr)
	assert.Less(t, strings.Index(stderr, "validate: real run (warm-up"), cal)
	assert.Less(t, cal, strings.Index(stderr, "validate: sim run (warm-up"))
	cfg := string(runReadFile(t, filepath.Join(out, "sim.yaml")))
	assert.Contains(t, cfg, "written by `simbench calibrate`")
	assert.NotContains(t, cfg, "base_ms: 40\n", "the timing was fitted")
	assert.Contains(t, string(runReadFile(t, filepath.Join(out, "logs", "calibrate.txt"))), "fitted linear timing")
	assert.Equal(t, "ungated", readHistoryT(t, filepath.Join(out, "history.jsonl"))[0].Verdict)
}

// TestValidateMarksInSample: a pipeline calibrated on the silicon run it
// scores (calibrate_from: silicon, one round) is marked in-sample in the
// summary, compare.txt, compare.md, compare.json and the history; with
// repeat > 1 the warm-up round calibrates and nothing is marked.
func TestValidateMarksInSample(t *testing.T) {
	for name, tt := range map[string]struct {
		repeat   int
		inSample bool
	}{
		"one round: the calibration run is scored": {1, true},
		"warm-up round calibrates, held out":       {2, false},
	} {
		t.Run(name, func(t *testing.T) {
			ts, _ := validateServer(t, http.StatusOK)
			out := filepath.Join(t.TempDir(), "artifacts")
			p := writePipeline(t, ts.URL, fmt.Sprintf("  calibrate: true\n  max_evals: 12\ncompare:\n  plots: false\nrepeat: %d\n", tt.repeat))
			code, stdout, stderr := validateCLI("--config", p, "-o", out)
			require.Equal(t, 0, code, stderr)
			marks := map[string]string{
				"summary":                stdout,
				validate.CompareTextName: string(runReadFile(t, filepath.Join(out, validate.CompareTextName))),
				validate.CompareMDName:   string(runReadFile(t, filepath.Join(out, validate.CompareMDName))),
			}
			var cmp struct{ Warnings []string }
			require.NoError(t, json.Unmarshal(runReadFile(t, filepath.Join(out, validate.CompareJSONName)), &cmp))
			marks[validate.CompareJSONName] = strings.Join(cmp.Warnings, "\n")
			for where, text := range marks {
				if !tt.inSample {
					assert.NotContains(t, strings.ToLower(text), "in-sample", where)
					continue
				}
				assert.Contains(t, strings.ToLower(text), "in-sample", where)
				assert.Contains(t, text, "calibrated on the scored silicon run", where)
			}
			if tt.inSample {
				assert.True(t, strings.HasPrefix(marks[validate.CompareMDName], "> **In-sample:**"), "on top of the markdown")
				assert.True(t, strings.HasPrefix(marks[validate.CompareTextName], "IN-SAMPLE: "), "on top of the text")
			}
			assert.Equal(t, tt.inSample, readHistoryT(t, filepath.Join(out, "history.jsonl"))[0].InSample)
		})
	}
}

func TestValidateHealthCheckFailure(t *testing.T) {
	ts, srv := validateServer(t, http.StatusServiceUnavailable)
	out := filepath.Join(t.TempDir(), "artifacts")
	hist := filepath.Join(t.TempDir(), "nightly", "history.jsonl")
	code, _, stderr := validateCLI("--config", writePipeline(t, ts.URL, ""), "-o", out, "--history", hist)
	require.Equal(t, 1, code, stderr)
	assert.Contains(t, stderr, "health check: GET "+ts.URL+"/v1/models: 503 Service Unavailable")
	assert.Empty(t, srv.Requests(), "nothing is sent to an unhealthy target")
	e := readHistoryT(t, hist)
	require.Len(t, e, 1)
	assert.Equal(t, "error", e[0].Verdict)
	assert.Contains(t, e[0].Error, "503")
}

func TestValidatePipelineErrors(t *testing.T) {
	base := "target:\n  url: http://127.0.0.1:1\n  model: m\nworkload:\n  concurrency: 1\nsim:\n  config: sim.yaml\n"
	for _, tc := range []struct{ name, yaml, want string }{
		{"unknown top key", base + "repeats: 3\n", `line 8: unknown key "repeats" (known keys of the pipeline: compare, goodput, history, repeat, sim, sweep, target, workload)`},
		{"unknown nested key", strings.Replace(base, "  model: m\n", "  model: m\n  heath_check: /v1/models\n", 1), `line 4: unknown key "target.heath_check"`},
		{"unknown workload key", base + "workload:\n  isl_mean: 3\n", `unknown key "workload.isl_mean"`},
		{"wrong type", strings.Replace(base, "concurrency: 1", "concurrency: two", 1), "cannot unmarshal !!str `two` into int"},
		{"no url", strings.Replace(base, "  url: http://127.0.0.1:1\n", "", 1), "target.url is required"},
		{"no model", strings.Replace(base, "  model: m\n", "", 1), "target.model is required"},
		{"no sim", strings.Replace(base, "sim:\n  config: sim.yaml\n", "", 1), "sim: give config"},
		{"bad bound", base + "compare:\n  fail_above: [ttft.avg]\n", "compare.fail_above"},
		{"bad endpoint", strings.Replace(base, "  model: m\n", "  model: m\n  endpoint_type: embeddings\n", 1), "target.endpoint_type"},
		{"bad health path", strings.Replace(base, "  model: m\n", "  model: m\n  health_check: v1/models\n", 1), "target.health_check"},
		{"calibrate_from alone", base + "  calibrate_from: runs/c1\n", "sim.calibrate_from needs sim.calibrate: true"},
		{"repeat", base + "repeat: -2\n", "repeat must be >= 1"},
		{"alpha", base + "compare:\n  alpha: 2\n", "compare.alpha"},
		{"error rate", strings.Replace(base, "  model: m\n", "  model: m\n  max_error_rate: lots\n", 1), "target.max_error_rate"},
		{"goodput", base + "goodput: ttft:200\n", `goodput: goodput "ttft:200": "ttft" is not a per-request metric`},
		{"empty", "", "empty pipeline file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "p.yaml")
			require.NoError(t, os.WriteFile(path, []byte(tc.yaml), 0o644))
			out := filepath.Join(dir, "out")
			code, _, stderr := validateCLI("--config", path, "-o", out)
			assert.Equal(t, 2, code, stderr)
			assert.Contains(t, stderr, path+": ")
			assert.Contains(t, stderr, tc.want)
			assert.NoDirExists(t, out, "a usage error writes nothing, history included")
		})
	}
	code, _, stderr := validateCLI("-o", t.TempDir())
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "validate needs --config")
}

// The workload section has exactly the workload flags of run and sim (a
// renamed flag under its new name).
func TestValidateWorkloadKeysAreTheWorkloadFlags(t *testing.T) {
	var keys, flags []string
	rt := reflect.TypeOf(traces.Spec{})
	for i := range rt.NumField() {
		keys = append(keys, currentName(strings.ReplaceAll(rt.Field(i).Tag.Get("yaml"), "_", "-")))
	}
	for _, f := range workloadFlags() {
		flags = append(flags, f.Names()[0])
	}
	assert.ElementsMatch(t, flags, keys)
}

// historyFixture is a history of three validations, the second failed.
const historyFixture = `{"time":"2026-01-01T02:00:00Z","commit":"aaaaaaaaaaaaaaaa","pipeline":"p.yaml","config_digest":"d","repeat":1,"artifacts":"a","metrics":{"time_to_first_token.avg":4.5,"time_to_first_token.p99":-12.25,"inter_token_latency.avg":1},"verdict":"pass","bounds":{"time_to_first_token.avg":10,"time_to_first_token.p99":10}}
{"time":"2026-01-02T02:00:00Z","pipeline":"p.yaml","config_digest":"d","repeat":1,"artifacts":"a","metrics":{},"verdict":"error","error":"health check failed"}

{"time":"2026-01-03T02:00:00Z","commit":"bbbbbbbbbbbbbbbb","pipeline":"p.yaml","config_digest":"d","repeat":4,"artifacts":"a","metrics":{"time_to_first_token.avg":14,"inter_token_latency.avg":-2,"inter_token_latency.p99.9":30},"verdict":"breach","future_key":1}
`

func TestValidateHistoryCommand(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "history.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(historyFixture), 0o644))
	var out, errb bytes.Buffer
	code := run([]string{"simbench", "validate", "history", "--history", path, "--last", "2"}, &out, &errb)
	require.Equal(t, 0, code, errb.String())
	golden(t, "validate_history.golden", []byte(strings.ReplaceAll(out.String(), path, "history.jsonl")))

	out.Reset()
	plotsDir := filepath.Join(dir, "plots")
	code = run([]string{"simbench", "validate", "history", "--history", path, "-o", plotsDir}, &out, &errb)
	require.Equal(t, 0, code, errb.String())
	for _, m := range []string{"time_to_first_token", "inter_token_latency"} {
		checkPNG(t, filepath.Join(plotsDir, "history_"+m+".png"))
		assert.Contains(t, out.String(), "wrote "+filepath.Join(plotsDir, "history_"+m+".png"))
	}
}

func TestValidateHistoryErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	require.NoError(t, os.WriteFile(bad, []byte(historyFixture+"{not json\n"), 0o644))
	code, _, stderr := validateCLI("history", "--history", bad)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, bad+":5:")
	code, _, stderr = validateCLI("history", "--history", filepath.Join(dir, "missing.jsonl"))
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "no such file")
	code, _, _ = validateCLI("history", "--history", bad, "--last", "0")
	assert.Equal(t, 2, code)
}

func TestValidateHelp(t *testing.T) {
	code, stdout, _ := validateCLI("--help")
	require.Equal(t, 0, code)
	for _, want := range []string{"--config", "repeat: N > 1", "Exit codes", "pipeline-example.yaml", "history"} {
		assert.Contains(t, stdout, want)
	}
}

// TestValidateDisaggregatedSim: the pipeline runs unchanged with a
// disaggregated simulator (1 prefill + 1 decode worker): every artifact is
// written and the simulated records name both workers.
func TestValidateDisaggregatedSim(t *testing.T) {
	t.Setenv("SIMBENCH_VALIDATE_TEST_KEY", validateTestKey)
	ts, _ := validateServer(t, http.StatusOK)
	out := filepath.Join(t.TempDir(), "artifacts")
	p := writePipeline(t, ts.URL, "compare:\n  fail_above: [inter_token_latency.avg=5000%]\n")
	pd := strings.Replace(slowSim, "workers: 1\n", "disaggregation: {prefill_workers: 1, decode_workers: 1}\n", 1)
	require.NoError(t, os.WriteFile(filepath.Join(filepath.Dir(p), "sim.yaml"), []byte(pd), 0o644))
	code, stdout, stderr := validateCLI("--config", p, "-o", out)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "verdict: pass")
	checkValidateArtifacts(t, out)
	recs, err := results.LoadJSONL(filepath.Join(out, "sim", results.RecordsName))
	require.NoError(t, err)
	require.NotEmpty(t, recs)
	for _, r := range recs {
		assert.Equal(t, "prefill-0", r.Ext.Sim.PrefillWorker)
		assert.Equal(t, "decode-0", r.Ext.Sim.DecodeWorker)
	}
}

// TestValidateChecksLocalInputsBeforeTheHealthCheck: a missing sim.config,
// trace or tokenizer is a usage error found before anything (the health
// check included) is sent to the target, and nothing is written.
func TestValidateChecksLocalInputsBeforeTheHealthCheck(t *testing.T) {
	var hits atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits.Add(1) }))
	defer ts.Close()
	for _, tc := range []struct{ name, from, to, want string }{
		{"sim.config", "  config: sim.yaml\n", "  config: nosuch.yaml\n", "sim.config: open "},
		{"trace", "  concurrency: 2\n  request_count: 8\n  warmup_request_count: 1\n  isl: 50\n  osl: 8\n",
			"  trace: nosuch.jsonl\n", "nosuch.jsonl"},
		{"tokenizer", "  model: tiny\n", "  model: tiny\n  tokenizer: nosuch-tokenizer\n", "target.tokenizer: --tokenizer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writePipeline(t, ts.URL, "")
			b := runReadFile(t, path)
			require.NoError(t, os.WriteFile(path, []byte(strings.Replace(string(b), tc.from, tc.to, 1)), 0o644))
			out := filepath.Join(t.TempDir(), "out")
			code, _, stderr := validateCLI("--config", path, "-o", out)
			assert.Equal(t, exitUsage, code, stderr)
			assert.Contains(t, stderr, tc.want)
			assert.Zero(t, hits.Load(), "no health check before the local inputs are checked")
			assert.NoDirExists(t, out, "a usage error writes nothing, history included")
		})
	}
}

// TestValidateFidelityCommand: on an artifact directory (here one workload
// whose "real" run is simulated too) it prints the summary and the table
// and writes the fidelity files; a missing directory argument is a usage
// error, a directory without workloads an error.
func TestValidateFidelityCommand(t *testing.T) {
	dir := t.TempDir()
	wl := []string{"--concurrency", "2", "--request-count", "8", "--isl", "64", "--osl", "8", "--quiet"}
	for sub, seed := range map[string]string{"real": "1", "real-repeat": "2", "sim": "1", "sim-uncal": "3"} {
		code, _, stderr := runSim(t, append(wl, "--seed", seed, "-o", filepath.Join(dir, "w", sub))...)
		require.Equal(t, 0, code, stderr)
	}
	var out, errb bytes.Buffer
	code := run([]string{"simbench", "validate", "fidelity", dir}, &out, &errb)
	require.Equal(t, 0, code, errb.String())
	assert.Contains(t, out.String(), "real-vs-real")
	for _, name := range []string{validate.FidelityTextName, validate.FidelityJSONName, validate.SummaryName} {
		assert.FileExists(t, filepath.Join(dir, name))
		assert.Contains(t, out.String(), "wrote "+filepath.Join(dir, name))
	}

	code = run([]string{"simbench", "validate", "fidelity"}, &out, &errb)
	assert.Equal(t, 2, code, "usage error")
	errb.Reset()
	code = run([]string{"simbench", "validate", "fidelity", t.TempDir()}, &out, &errb)
	assert.Equal(t, 1, code)
	assert.Contains(t, errb.String(), "no <workload>/real")
}

func TestValidatePipelineFlagErrors(t *testing.T) {
	out := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(out, "x"), nil, 0o644))
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"replay without pipeline", []string{"--config", "p.yaml", "-o", out, "--replay", "old"}, "--replay goes with --pipeline"},
		{"pipeline and config", []string{"--pipeline", "../../testdata/e2e/pipeline.yaml", "--config", "p.yaml", "-o", out}, "without --config"},
		{"missing file", []string{"--pipeline", "nope.yaml", "-o", out}, "nope.yaml"},
		{"output not empty", []string{"--pipeline", "../../testdata/e2e/pipeline.yaml", "-o", out}, "is not empty"},
		{"replay into itself", []string{"--pipeline", "../../testdata/e2e/pipeline.yaml", "-o", out, "--replay", out}, "another directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := validateCLI(tt.args...)
			assert.Equal(t, 2, code, stderr)
			assert.Contains(t, stderr, tt.want)
		})
	}
}

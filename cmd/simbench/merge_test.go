package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"net/http/httptest"

	"github.com/simbench/simbench/loadgen/openaitest"
	"github.com/simbench/simbench/results"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cliArgsEnv makes the test binary act as the simbench binary (see
// TestCLIHelperProcess): shards run as separate processes, as on N hosts.
const cliArgsEnv = "SIMBENCH_TEST_CLI_ARGS"

// TestCLIHelperProcess is not a test: started by startCLI with the
// arguments in $SIMBENCH_TEST_CLI_ARGS it runs the CLI and exits.
func TestCLIHelperProcess(t *testing.T) {
	raw := os.Getenv(cliArgsEnv)
	if raw == "" {
		t.Skip("helper process for the sharding tests")
	}
	var args []string
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		os.Exit(99)
	}
	os.Exit(run(append([]string{"simbench"}, args...), os.Stdout, os.Stderr))
}

type cliProc struct {
	cmd      *exec.Cmd
	out, err bytes.Buffer
}

func startCLI(t *testing.T, env []string, args ...string) *cliProc {
	t.Helper()
	b, err := json.Marshal(args)
	require.NoError(t, err)
	p := &cliProc{cmd: exec.Command(os.Args[0], "-test.run=^TestCLIHelperProcess$")}
	p.cmd.Env = append(append(os.Environ(), cliArgsEnv+"="+string(b)), env...)
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.err
	require.NoError(t, p.cmd.Start())
	return p
}

// writeSessionTrace writes 15 rows: single-turn requests every 10 ms and two
// 3-turn sessions, so shards must keep turns together.
func writeSessionTrace(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for i := range 15 {
		fmt.Fprintf(&b, `{"input_length": %d, "output_length": %d, "hash_ids": [%d]`, 100+i, 3+i%4, i)
		switch {
		case i == 4 || i == 9:
			fmt.Fprintf(&b, `, "session_id": "s%d", "delay": 2}`+"\n", i%2)
		case i == 2 || i == 3:
			fmt.Fprintf(&b, `, "timestamp": %d, "session_id": "s%d"}`+"\n", i*10, i%2)
		default:
			fmt.Fprintf(&b, `, "timestamp": %d}`+"\n", i*10)
		}
	}
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	return path
}

// TestShardedRunMerge is the "done when": three shard processes with
// one --start-at against a streaming server, then simbench merge.
func TestShardedRunMerge(t *testing.T) {
	ts := httptest.NewServer(&openaitest.Server{TTFT: 5 * time.Millisecond, ITL: time.Millisecond})
	defer ts.Close()
	trace, dir := writeSessionTrace(t), t.TempDir()
	startAt := time.Now().Add(3 * time.Second).UTC().Format(time.RFC3339Nano)
	common := []string{"run", "--url", ts.URL, "-m", "M", "--trace", trace, "--start-at", startAt, "--quiet"}
	var procs []*cliProc
	for k := range 3 {
		args := append(append([]string{}, common...), "-o", filepath.Join(dir, fmt.Sprint("s", k)))
		env := []string{}
		if k == 1 { // the Indexed Job way: the index from the environment
			args, env = append(args, "--shard-count", "3"), []string{jobIndexEnv + "=1"}
		} else {
			args = append(args, "--shard", fmt.Sprintf("%d/3", k))
		}
		procs = append(procs, startCLI(t, env, args...))
	}
	for k, p := range procs {
		require.NoError(t, p.cmd.Wait(), "shard %d: %s", k, p.err.String())
	}
	shardDirs := []string{filepath.Join(dir, "s0"), filepath.Join(dir, "s1"), filepath.Join(dir, "s2")}
	merged := filepath.Join(dir, "merged")
	code, out, errOut := runCmdLine(append(append([]string{"merge"}, shardDirs...), "-o", merged)...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "merged 3 shards: 15 records")

	recs, err := results.LoadJSONL(filepath.Join(merged, results.RecordsName))
	require.NoError(t, err)
	assertOnePerRow(t, recs, 15)
	assertMergedAggregates(t, merged, shardDirs, recs)

	code, _, errOut = runCmdLine("run", "--url", ts.URL, "-m", "M", "--trace", trace, "--quiet", "-o", filepath.Join(dir, "one"))
	require.Equal(t, 0, code, errOut)
	one, err := results.LoadJSONL(filepath.Join(dir, "one", results.RecordsName))
	require.NoError(t, err)
	assert.Equal(t, requestSet(one), requestSet(recs), "the same requests as one process")

	ic := inputConfigOf(t, merged)
	sb := ic["simbench"].(map[string]any)
	assert.Equal(t, startAt, sb["start_at"])
	assert.Len(t, sb["merged"].(map[string]any)["shards"], 3)
	assert.EqualValues(t, 15, ic["loadgen"].(map[string]any)["request_count"])
}

func assertOnePerRow(t *testing.T, recs []results.RecordMetrics, n int) {
	t.Helper()
	var rows []int
	for i, m := range recs {
		require.NotNil(t, m.Ext)
		require.Nil(t, m.Error)
		rows = append(rows, m.Ext.TraceRow)
		assert.Equal(t, i, m.Meta.SessionNum)
	}
	sort.Ints(rows)
	want := make([]int, n)
	for i := range want {
		want[i] = i
	}
	assert.Equal(t, want, rows, "one record per trace row")
}

// assertMergedAggregates: the written aggregates equal SummarizeJSONL of the
// merged file and one Aggregator over the union of the shards' records.
func assertMergedAggregates(t *testing.T, merged string, shardDirs []string, recs []results.RecordMetrics) {
	t.Helper()
	written, err := results.LoadProfileJSON(filepath.Join(merged, results.ProfileJSONName))
	require.NoError(t, err)
	fromFile, err := results.SummarizeJSONL(filepath.Join(merged, results.RecordsName), nil)
	require.NoError(t, err)
	assert.Equal(t, fromFile.Metrics, written.Metrics)

	var union []results.RecordMetrics
	for _, d := range shardDirs {
		r, err := results.LoadJSONL(filepath.Join(d, results.RecordsName))
		require.NoError(t, err)
		union = append(union, r...)
	}
	results.SortAsSent(union)
	agg := results.NewAggregator(nil)
	first, last := int64(1<<62), int64(0)
	for i := range union {
		agg.Add(&union[i])
		first = min(first, union[i].Meta.RequestStartNs)
		lat, _ := union[i].Get(results.TagRequestLatency)
		last = max(last, union[i].Meta.RequestStartNs+int64(lat*1e6))
	}
	assert.Equal(t, agg.Profile().Metrics, written.Metrics)
	dur, _ := written.Value(results.TagBenchmarkDuration, "avg")
	assert.InDelta(t, float64(last-first)/1e9, dur, 1e-6, "benchmark_duration: first send to last response of any shard")
	for _, d := range shardDirs {
		p, err := results.LoadProfileJSON(filepath.Join(d, results.ProfileJSONName))
		require.NoError(t, err)
		own, _ := p.Value(results.TagBenchmarkDuration, "avg")
		assert.LessOrEqual(t, own, dur, d)
	}
}

// requestSet is what was sent for each trace row: ISL and requested OSL.
func requestSet(recs []results.RecordMetrics) map[int][2]float64 {
	out := map[int][2]float64{}
	for _, m := range recs {
		isl, _ := m.Get(results.TagISL)
		out[m.Ext.TraceRow] = [2]float64{isl, float64(m.Ext.RequestedOutputTokens)}
	}
	return out
}

func inputConfigOf(t *testing.T, dir string) map[string]any {
	t.Helper()
	p, err := results.LoadProfileJSON(filepath.Join(dir, results.ProfileJSONName))
	require.NoError(t, err)
	var ic map[string]any
	require.NoError(t, json.Unmarshal(p.InputConfig, &ic))
	return ic
}

func TestMergeRejects(t *testing.T) {
	ts := httptest.NewServer(&openaitest.Server{ITL: time.Millisecond})
	defer ts.Close()
	trace, dir := writeSessionTrace(t), t.TempDir()
	shard := func(name, spec string, extra ...string) string {
		out := filepath.Join(dir, name)
		args := append([]string{"run", "--url", ts.URL, "-m", "M", "--trace", trace, "--quiet", "--shard", spec, "-o", out}, extra...)
		code, _, errOut := runCmdLine(args...)
		require.Equal(t, 0, code, errOut)
		return out
	}
	s0, s1, s2 := shard("s0", "0/3"), shard("s1", "1/3"), shard("s2", "2/3")
	otherModel := shard("model", "2/3", "-m", "other")
	otherTrace := shard("limit", "2/3", "--limit", "12")
	of4 := shard("of4", "2/4")
	for _, tc := range []struct {
		name string
		dirs []string
		want string
	}{
		{"missing shard", []string{s0, s1}, "incomplete run: shard 2/3 missing (given 2 of 3 shards)"},
		{"duplicate shard", []string{s0, s1, s1, s2}, "shard 1/3 given twice: " + s1 + " and " + s1},
		{"different model", []string{s0, s1, otherModel}, "are shards of different runs: input_config.endpoint"},
		{"different trace", []string{s0, s1, otherTrace}, "are shards of different runs: workload digest"},
		{"different N", []string{s0, s1, of4}, "are shards of different runs: shard count 3 vs 4"},
		{"not a shard", []string{s0, filepath.Join(dir, "none")}, "not a run directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, "merged-"+strings.ReplaceAll(tc.name, " ", "-"))
			code, _, errOut := runCmdLine(append(append([]string{"merge"}, tc.dirs...), "-o", out)...)
			assert.Equal(t, 1, code)
			assert.Contains(t, errOut, tc.want)
			assert.NoDirExists(t, out, "nothing written")
		})
	}
	// the same request in two shards: a shard directory copied under another index
	dup := filepath.Join(dir, "dup")
	require.NoError(t, os.CopyFS(dup, os.DirFS(s2)))
	rewriteShardIndex(t, dup, 1)
	code, _, errOut := runCmdLine("merge", s0, dup, s2, "-o", filepath.Join(dir, "m"))
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "must be in one shard only")
}

// rewriteShardIndex edits a run directory's simbench.shard.index.
func rewriteShardIndex(t *testing.T, dir string, index int) {
	t.Helper()
	path := filepath.Join(dir, results.ProfileJSONName)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(b, &doc))
	doc["input_config"].(map[string]any)["simbench"].(map[string]any)["shard"].(map[string]any)["index"] = index
	b, err = json.Marshal(doc)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, b, 0o644))
}

func TestShardFlags(t *testing.T) {
	trace := writeSessionTrace(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--shard", "3/3"}, "shard 3/3: want 0 <= index < count"},
		{[]string{"--shard", "1/3", "--shard-count", "3"}, "cannot be combined"},
		{[]string{"--shard-index", "1"}, "--shard-index needs --shard-count"},
		{[]string{"--shard-count", "3"}, "--shard-count needs --shard-index or $JOB_COMPLETION_INDEX"},
		{[]string{"--shard", "39/40"}, "shard 39/40 has no requests"},
		{[]string{"--start-at", "07:00"}, "--start-at \"07:00\": want an RFC 3339 time"},
	} {
		args := append([]string{"run", "--url", "http://127.0.0.1:1", "-m", "M", "--trace", trace, "-o", t.TempDir()}, tc.args...)
		code, _, errOut := runCmdLine(args...)
		assert.Equal(t, exitUsage, code, tc.args)
		assert.Contains(t, errOut, tc.want, tc.args)
	}
}

// Shards written before the workload section (the workload under
// simbench: workload_digest, workload_source, requests and
// shard.workload_requests) still merge.
func TestMergeReadsOlderShards(t *testing.T) {
	ts := httptest.NewServer(&openaitest.Server{ITL: time.Millisecond})
	defer ts.Close()
	trace, dir := writeSessionTrace(t), t.TempDir()
	var shards []string
	for k := range 2 {
		out := filepath.Join(dir, fmt.Sprint("s", k))
		code, _, errOut := runCmdLine("run", "--url", ts.URL, "-m", "M", "--trace", trace, "--quiet", "--shard", fmt.Sprintf("%d/2", k), "-o", out)
		require.Equal(t, 0, code, errOut)
		rewriteAsOlderShard(t, out)
		shards = append(shards, out)
	}
	merged := filepath.Join(dir, "merged")
	code, out, errOut := runCmdLine(append(append([]string{"merge"}, shards...), "-o", merged)...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "merged 2 shards: 15 records")

	p, err := results.LoadProfileJSON(filepath.Join(merged, results.ProfileJSONName))
	require.NoError(t, err)
	ic, err := results.ParseInputConfig(p.InputConfig)
	require.NoError(t, err)
	assert.Equal(t, trace, ic.Workload.Source)
	assert.Equal(t, 15, ic.Workload.Requests)
	assert.NotEmpty(t, ic.Workload.Digest)
	assert.Equal(t, 15, ic.Simbench.Merged.Records)
	assert.NotContains(t, string(p.InputConfig), "workload_digest")
}

// rewriteAsOlderShard moves a shard's input_config.workload back under
// simbench, as runs before the workload section wrote it.
func rewriteAsOlderShard(t *testing.T, dir string) {
	t.Helper()
	path := filepath.Join(dir, results.ProfileJSONName)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(runReadFile(t, path), &doc))
	ic := doc["input_config"].(map[string]any)
	wl, sb := ic["workload"].(map[string]any), ic["simbench"].(map[string]any)
	sh := sb["shard"].(map[string]any)
	sb["workload_digest"], sb["workload_source"], sb["requests"] = wl["digest"], wl["source"], sh["requests"]
	sh["workload_requests"] = wl["requests"]
	delete(sh, "requests")
	delete(ic, "workload")
	b, err := json.Marshal(doc)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, b, 0o644))
}

// TestMergeKeepsGoodput: shards run with --goodput merge into a run whose
// aggregate has the goodput metrics of the union, and shards with other
// SLOs are shards of another run.
func TestMergeKeepsGoodput(t *testing.T) {
	ts := httptest.NewServer(&openaitest.Server{ITL: time.Millisecond})
	defer ts.Close()
	trace, dir := writeSessionTrace(t), t.TempDir()
	shard := func(k int, goodput string) string {
		out := filepath.Join(dir, fmt.Sprint("s", k, goodput))
		code, _, errOut := runCmdLine("run", "--url", ts.URL, "-m", "M", "--trace", trace, "--quiet", "--shard", fmt.Sprintf("%d/2", k),
			"--goodput", goodput, "-o", out)
		require.Equal(t, 0, code, errOut)
		return out
	}
	s0, s1 := shard(0, "request_latency:100000"), shard(1, "request_latency:100000")
	merged := filepath.Join(dir, "merged")
	code, _, errOut := runCmdLine("merge", s0, s1, "-o", merged)
	require.Equal(t, 0, code, errOut)
	run, err := results.LoadRun(merged)
	require.NoError(t, err)
	valid, _ := run.Profile.Value(results.TagRequestCount, "avg")
	good, ok := run.Profile.Value(results.TagGoodRequestCount, "avg")
	require.True(t, ok, "the merged aggregate keeps goodput")
	assert.Equal(t, valid, good)

	other := shard(1, "request_latency:1")
	code, _, errOut = runCmdLine("merge", s0, other, "-o", filepath.Join(dir, "m2"))
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "are shards of different runs: input_config.input")
}

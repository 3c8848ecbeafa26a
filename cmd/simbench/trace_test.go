package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/simbench/simbench/peerruns"
	"github.com/simbench/simbench/traces"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const sliceTrace = "../../testdata/traces/conversation_slice.jsonl"

// simbench runs the CLI and returns the exit code, stdout and stderr.
func simbench(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(append([]string{"simbench"}, args...), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestTraceGolden(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"trace_info_text.golden", []string{"trace", "info", sliceTrace}},
		{"trace_info_json.golden", []string{"trace", "info", sliceTrace, "--format", "json"}},
		{"trace_filter_stdout.golden", []string{"trace", "filter", sliceTrace, "-o", "-",
			"--fixed-schedule-start-offset", "3000", "--end-offset-ms", "9000", "--speedup", "2", "--max-isl", "4000"}},
		{"trace_synth_poisson.golden", []string{"trace", "synth", "-o", "-", "--request-rate", "5", "--request-count", "6",
			"--isl", "1000", "--isl-stddev", "300", "--osl", "50", "--shared-prefix-tokens", "512", "--random-seed", "11"}},
		{"trace_synth_turns.golden", []string{"trace", "synth", "-o", "-", "--concurrency", "2", "--num-requests", "5",
			"--turns", "2", "--turn-delay-ms", "1500", "--synthetic-input-tokens-mean", "600", "--output-tokens-mean", "20"}},
		{"trace_synth_agentic.golden", []string{"trace", "synth", "-o", "-", "--agentic", "--concurrency", "2", "--num-conversations", "2",
			"--agent-turns", "4", "--agent-fanout-prob", "0.5", "--isl", "300", "--osl", "40", "--new-tokens", "100", "--hash-block-size", "64", "--seed", "5"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := simbench(t, tt.args...)
			require.Equal(t, 0, code, errOut)
			golden(t, tt.name, []byte(out))
		})
	}
}

func TestTraceInfoFullTrace(t *testing.T) {
	const full = "../../../shared/traces/conversation_trace.jsonl"
	if _, err := os.Stat(full); err != nil {
		t.Skip("full trace not available:", err)
	}
	code, out, errOut := simbench(t, "trace", "info", full)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "requests      12031 (0 warmup, 12031 with timestamps)")
	assert.Contains(t, out, "prefix reuse  37.36% of input tokens")
}

func TestTraceFilterWritesFile(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out.jsonl")
	code, stdout, stderr := simbench(t, "trace", "filter", sliceTrace, "-o", out, "--limit", "50", "--auto-offset",
		"--max-total-tokens", "20000", "--scale-lengths", "0.5", "--max-osl", "100")
	require.Equal(t, 0, code, stderr)
	assert.Empty(t, stderr)
	wl, warns, err := traces.LoadMooncake(out)
	require.NoError(t, err)
	assert.Empty(t, warns)
	assert.Len(t, wl.Requests, 50)
	assert.Equal(t, "kept 50 of 200 requests; wrote "+out+" (digest "+wl.Digest+")\n", stdout)
	for _, r := range wl.Requests {
		assert.LessOrEqual(t, r.OutputLength, 100)
		assert.LessOrEqual(t, r.InputLength+r.OutputLength, 20000)
	}
}

func TestTraceFilterAliasesAgree(t *testing.T) {
	_, a, _ := simbench(t, "trace", "filter", sliceTrace, "-o", "-", "--start-offset-ms", "1000", "--end-offset-ms", "5000", "--auto-offset=false")
	_, b, _ := simbench(t, "trace", "filter", "-o", "-", "--fixed-schedule-start-offset", "1000", "--fixed-schedule-end-offset", "5000", sliceTrace)
	assert.NotEmpty(t, a)
	assert.Equal(t, a, b)
	_, c, _ := simbench(t, "trace", "filter", sliceTrace, "-o", "-", "--auto-offset", "--limit", "3")
	_, d, _ := simbench(t, "trace", "filter", sliceTrace, "-o", "-", "--fixed-schedule-auto-offset", "--limit", "3")
	assert.Equal(t, c, d)
}

func TestTraceSynthAliasesAgree(t *testing.T) {
	_, a, _ := simbench(t, "trace", "synth", "-o", "-", "--request-rate", "2", "--request-count", "4", "--isl", "900",
		"--isl-stddev", "10", "--osl", "30", "--osl-stddev", "5", "--hash-block-size", "256", "--random-seed", "9")
	_, b, _ := simbench(t, "trace", "synth", "-o", "-", "--request-rate", "2", "--num-requests", "4", "--synthetic-input-tokens-mean", "900",
		"--synthetic-input-tokens-stddev", "10", "--output-tokens-mean", "30", "--output-tokens-stddev", "5", "--isl-block-size", "256", "--seed", "9")
	assert.NotEmpty(t, a)
	assert.Equal(t, a, b)
}

func TestTraceSynthWarnings(t *testing.T) {
	out := filepath.Join(t.TempDir(), "c.jsonl")
	code, stdout, stderr := simbench(t, "trace", "synth", "-o", out, "--concurrency", "8", "--request-count", "3", "--warmup-request-count", "2")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "warning: "+out+" has no timestamps and the JSONL format cannot record --concurrency 8; replay it with --concurrency 8\n"+
		"warning: the 2 warmup requests are marked \"warmup\": true, a simbench extension that AIPerf ignores (it would measure them)\n", stderr)
	assert.Contains(t, stdout, "wrote 5 requests (2 warmup) to "+out)
	wl, _, err := traces.LoadMooncake(out)
	require.NoError(t, err)
	assert.True(t, wl.Requests[1].Warmup)
	assert.False(t, wl.Requests[2].Warmup)
}

func TestTraceLoadWarningsGoToStderr(t *testing.T) {
	path := filepath.Join(t.TempDir(), "back.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(`{"timestamp": 9, "input_length": 1, "output_length": 1}
{"timestamp": 3, "input_length": 1, "output_length": 1}
`), 0o644))
	code, stdout, stderr := simbench(t, "trace", "info", path, "--format", "json")
	require.Equal(t, 0, code)
	assert.Contains(t, stdout, `"requests": 2`)
	assert.Equal(t, "warning: "+path+":2: timestamps go backwards on 1 row(s), first here (3 ms after 9 ms); requests keep file order\n", stderr)
}

func TestTraceErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	require.NoError(t, os.WriteFile(bad, []byte("{\"input_length\": 10, \"output_length\": 1}\n\n{\"input_length\": -3, \"output_length\": 1}\n"), 0o644))
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"no sub-command", []string{"trace"}, 2, "simbench: trace needs a sub-command: info, filter, synth or export\n"},
		{"unknown sub-command", []string{"trace", "stats"}, 2, "simbench: unknown trace sub-command \"stats\": want info, filter, synth or export\n"},
		{"info without file", []string{"trace", "info"}, 2, "simbench: trace info needs a trace FILE\n"},
		{"info with two files", []string{"trace", "info", "a", "b"}, 2, "simbench: trace info takes one trace FILE, got 2 arguments\n"},
		{"bad format", []string{"trace", "info", sliceTrace, "--format", "yaml"}, 2, "simbench: --format must be text or json, got \"yaml\"\n"},
		{"unknown flag", []string{"trace", "info", "--colour", sliceTrace}, 2, "simbench: trace info: unknown flag --colour; see 'simbench trace info --help'\n"},
		{"missing file", []string{"trace", "info", filepath.Join(dir, "none.jsonl")}, 1,
			"simbench: load trace: open " + filepath.Join(dir, "none.jsonl") + ": no such file or directory\n"},
		{"invalid row names file, line and field", []string{"trace", "info", bad}, 1,
			"simbench: " + bad + ":3: field \"input_length\": must be >= 0, got -3\n"},
		{"filter without output", []string{"trace", "filter", sliceTrace}, 2, "simbench: trace filter needs -o OUT.jsonl (or -o - for stdout)\n"},
		{"filter bad number", []string{"trace", "filter", sliceTrace, "-o", "-", "--limit", "many"}, 2,
			"simbench: invalid value \"many\" for flag -limit: not a decimal integer\n"},
		{"filter negative speedup", []string{"trace", "filter", sliceTrace, "-o", "-", "--speedup", "-2"}, 2,
			"simbench: --speedup must be a finite number >= 0, got -2\n"},
		{"filter window order", []string{"trace", "filter", sliceTrace, "-o", "-", "--start-offset-ms", "9", "--end-offset-ms", "3"}, 2,
			"simbench: --end-offset-ms (3) must be >= --start-offset-ms (9)\n"},
		{"filter empties the trace", []string{"trace", "filter", sliceTrace, "-o", "-", "--start-offset-ms", "1e12"}, 1,
			"simbench: " + sliceTrace + ": filter: no requests left\n"},
		{"filter unwritable output", []string{"trace", "filter", sliceTrace, "-o", filepath.Join(dir, "no", "out.jsonl")}, 1,
			"simbench: write trace: " + filepath.Join(dir, "no", "out.jsonl") + ": no such file or directory\n"},
		{"synth without load", []string{"trace", "synth", "-o", "-"}, 2,
			"simbench: give --concurrency N (closed loop: N requests in flight) or --request-rate R (open loop: R requests/s)\n"},
		{"synth without output", []string{"trace", "synth", "--concurrency", "1"}, 2, "simbench: trace synth needs -o OUT.jsonl (or -o - for stdout)\n"},
		{"synth with argument", []string{"trace", "synth", "x.jsonl"}, 2, "simbench: trace synth takes no arguments, got \"x.jsonl\"\n"},
		{"synth pattern without rate", []string{"trace", "synth", "-o", "-", "--arrival-pattern", "gamma"}, 2,
			"simbench: --arrival-pattern gamma needs --request-rate\n"},
		{"synth bad pattern", []string{"trace", "synth", "-o", "-", "--request-rate", "1", "--arrival-pattern", "burst"}, 2,
			"simbench: --arrival-pattern must be constant, poisson or gamma, got \"burst\"\n"},
		{"synth shape without gamma", []string{"trace", "synth", "-o", "-", "--request-rate", "1", "--gamma-shape", "2"}, 2,
			"simbench: --gamma-shape only applies to --arrival-pattern gamma\n"},
		{"synth agentic with --turns", []string{"trace", "synth", "-o", "-", "--agentic", "--concurrency", "1", "--turns", "3"}, 2,
			"simbench: --turns shapes plain requests, not --agentic sessions (see --num-conversations and the --agent-* flags)\n"},
		{"synth agent flag without --agentic", []string{"trace", "synth", "-o", "-", "--concurrency", "1", "--tool-delay-ms", "3"}, 2,
			"simbench: --tool-delay-ms needs --agentic\n"},
		{"synth agentic invalid", []string{"trace", "synth", "-o", "-", "--agentic", "--concurrency", "1", "--agent-fanout-prob", "1.5"}, 2,
			"simbench: synthesize --agentic: --agent-fanout-prob must be in [0, 1], got 1.5\n"},
		{"synth invalid spec", []string{"trace", "synth", "-o", "-", "--concurrency", "1", "--request-count", "0"}, 2,
			"simbench: synthesize: --request-count must be > 0, got 0\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := simbench(t, tt.args...)
			assert.Equal(t, tt.wantCode, code)
			assert.Equal(t, tt.wantErr, stderr)
		})
	}
}

func TestTraceHelp(t *testing.T) {
	for _, args := range [][]string{
		{"trace", "--help"}, {"trace", "info", "--help"}, {"trace", "filter", "-h"}, {"trace", "synth", "--help"},
	} {
		code, out, _ := simbench(t, args...)
		assert.Equal(t, 0, code, args)
		assert.Contains(t, out, "USAGE:", args)
		assert.Contains(t, out, "Example", args)
	}
}

// TestTraceExport writes the workload of other tools' runs as Mooncake
// JSONL: read back at the block size it prints, the trace is the same
// requests (the digest compare checks), and the replay line names what the
// JSONL cannot record. A run without a workload, a simbench run directory
// and a file of no tool are refused, each saying why.
func TestTraceExport(t *testing.T) {
	for _, tc := range []struct {
		run, replay string
		blockSize   int
	}{
		{"../../peerruns/testdata/inference-perf/20260218-150304-codellama-34b-tp2-general/stage_1", "--hash-block-size 100 --concurrency 22400", 100},
		{"../../peerruns/testdata/vllm-bench/vllm-0.19-detailed-c1.json", "--concurrency 1", traces.MooncakeBlockSize},
	} {
		t.Run(filepath.Base(tc.run), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "w.jsonl")
			code, stdout, stderr := simbench(t, "trace", "export", tc.run, "-o", out)
			require.Equal(t, 0, code, stderr)
			run, err := peerruns.Open(tc.run)
			require.NoError(t, err)
			back, _, err := traces.LoadMooncakeBlocks(out, tc.blockSize)
			require.NoError(t, err)
			assert.Equal(t, run.Workload.Digest, back.Digest, "the same requests")
			assert.Contains(t, stdout, fmt.Sprintf("wrote %d requests to %s (digest %s)", len(back.Requests), out, back.Digest))
			assert.Contains(t, stdout, "replay: simbench sim --trace "+out+" "+tc.replay+"\n")
			assert.Contains(t, stderr, "warning: ", "how the workload was rebuilt")
		})
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"../../peerruns/testdata/vllm-bench/vllm-0.11-e2el-c100.json"}, 1, "no workload to export: vllm bench serve's result does not record its dataset"},
		{[]string{"../../testdata/aiperf/qwen_concurrency1"}, 2, "not another tool's run"},
		{[]string{"a", "b"}, 2, "trace export takes one RUN, got 2 arguments"},
	} {
		code, _, stderr := simbench(t, append(append([]string{"trace", "export"}, tc.args...), "-o", filepath.Join(dir, "x.jsonl"))...)
		assert.Equal(t, tc.code, code, stderr)
		assert.Contains(t, stderr, tc.want)
	}
	assert.NoFileExists(t, filepath.Join(dir, "x.jsonl"), "nothing written for a refused run")
}

package traces

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func ptr[T any](v T) *T { return &v }

func TestSpecSynth(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec Spec
		mode string
		err  string
	}{
		{"closed loop", Spec{Concurrency: ptr(4)}, ModeConcurrency, ""},
		{"rate: poisson by default", Spec{RequestRate: ptr(2.0)}, ModePoisson, ""},
		{"rate and pattern", Spec{RequestRate: ptr(2.0), ArrivalPattern: ptr("gamma"), GammaShape: ptr(0.5)}, ModeGamma, ""},
		{"neither", Spec{}, "", "give --concurrency N"},
		{"pattern without rate", Spec{ArrivalPattern: ptr("constant"), Concurrency: ptr(1)}, "", "--arrival-pattern constant needs --request-rate"},
		{"gamma shape without gamma", Spec{RequestRate: ptr(1.0), GammaShape: ptr(2.0)}, "", "--gamma-shape only applies"},
		{"unknown pattern", Spec{RequestRate: ptr(1.0), ArrivalPattern: ptr("bursty")}, "", `got "bursty"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := tc.spec.Synth()
			if tc.err != "" {
				var se *SpecError
				require.ErrorAs(t, err, &se)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.mode, s.Mode)
			assert.Equal(t, DefaultSynth.ISL, s.ISL, "unset keys keep the defaults")
		})
	}
}

// TestSpecPrefixPromptLength: AIPerf's --prefix-prompt-length adds its
// prefix before the ISL tokens (issue 41 item 2), where
// shared_prefix_tokens counts it within them.
func TestSpecPrefixPromptLength(t *testing.T) {
	s, err := Spec{Concurrency: ptr(1), ISL: ptr(100), PrefixPromptLength: ptr(512), NumPrefixGroups: ptr(2)}.Synth()
	require.NoError(t, err)
	assert.Equal(t, 612, s.ISL)
	assert.Equal(t, 512, s.SharedPrefixTokens)
	wl, _, err := Spec{Concurrency: ptr(1), ISL: ptr(100), PrefixPromptLength: ptr(512), NumPrefixGroups: ptr(2), RequestCount: ptr(3)}.Build(0)
	require.NoError(t, err)
	assert.Equal(t, [][]int64{{0, 2}, {1, 3}, {0, 4}}, [][]int64{wl.Requests[0].HashIDs, wl.Requests[1].HashIDs, wl.Requests[2].HashIDs},
		"the first block is one of two shared prefixes")
	for _, tc := range []struct {
		spec Spec
		err  string
	}{
		{Spec{Concurrency: ptr(1), PrefixPromptLength: ptr(512), SharedPrefixTokens: ptr(512)}, "both set the shared prefix: give one"},
		{Spec{Concurrency: ptr(1), PrefixPromptLength: ptr(100)}, "--prefix-prompt-length (100) must be a multiple of --hash-block-size (512)"},
		{Spec{Concurrency: ptr(1), PrefixPromptLength: ptr(-1)}, "--prefix-prompt-length must be >= 0, got -1"},
	} {
		_, err := tc.spec.Synth()
		assert.ErrorContains(t, err, tc.err)
	}
	_, _, err = Spec{Trace: ptr("t.jsonl"), PrefixPromptLength: ptr(512)}.Build(0)
	assert.EqualError(t, err, "--prefix-prompt-length shapes a synthetic workload: it cannot be used with --trace")
}

func TestSpecBuildRefusesMixedKeys(t *testing.T) {
	_, _, err := Spec{Concurrency: ptr(1), Speedup: ptr(2.0), Limit: ptr(3)}.Build(0)
	assert.EqualError(t, err, "--speedup reshapes a trace: it needs --trace", "the first key in flag order")
	_, _, err = Spec{Trace: ptr("t.jsonl"), ISL: ptr(5)}.Build(0)
	assert.EqualError(t, err, "--isl shapes a synthetic workload: it cannot be used with --trace")
	_, _, err = Spec{Concurrency: ptr(1), TraceFormat: ptr(FormatAgenticMooncake)}.Build(0)
	assert.EqualError(t, err, "--trace-format says how to read --trace: it needs --trace")
	_, _, err = Spec{Trace: ptr("t.jsonl"), TraceFormat: ptr("otel")}.Build(0)
	assert.EqualError(t, err, `--trace-format "otel": want one of [mooncake agentic_mooncake dag_jsonl]`)
}

// TestSpecBuildBoundsConcurrency: --concurrency 1000000000 with a trace
// allocated a slot per request in flight until killed.
func TestSpecBuildBoundsConcurrency(t *testing.T) {
	_, _, err := Spec{Trace: ptr("t.jsonl"), Concurrency: ptr(1_000_000_000)}.Build(0)
	var se *SpecError
	require.ErrorAs(t, err, &se)
	assert.EqualError(t, err, "--concurrency must be at most 65536 requests in flight, got 1000000000")
}

func TestSpecBuildFillsTheDuration(t *testing.T) {
	wl, _, err := Spec{RequestRate: ptr(4.0)}.Build(2.5)
	require.NoError(t, err)
	assert.Len(t, wl.Requests, 10, "ceil(4 req/s × 2.5 s)")
	wl, _, err = Spec{RequestRate: ptr(4.0), RequestCount: ptr(3)}.Build(2.5)
	require.NoError(t, err)
	assert.Len(t, wl.Requests, 3, "an explicit request_count wins")
}

func TestSpecKeys(t *testing.T) {
	assert.Equal(t, []string{"concurrency=2", "isl=7"}, Spec{ISL: ptr(7), Concurrency: ptr(2)}.Keys())
}

// TestWriteWorkloadFileIsAtomic: a write that failed midway left a 0-byte
// workload.jsonl in a complete-looking run; now it leaves the file as it was.
func TestWriteWorkloadFileIsAtomic(t *testing.T) {
	dir := t.TempDir()
	good := &Workload{Requests: []Request{{InputLength: 10, OutputLength: 2}}}
	require.NoError(t, WriteWorkloadFile(dir, good))
	path := filepath.Join(dir, WorkloadFile)
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	bad := &Workload{Requests: []Request{{InputLength: 10, OutputLength: 2}, {HasTimestamp: true, TimestampMs: math.NaN()}}}
	err = WriteWorkloadFile(dir, bad)
	require.ErrorContains(t, err, path)
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "the older file untouched")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file left")
}

// TestSpecBuildRefusesEpochTimestamps: a trace stamped in epoch
// milliseconds made sim run forever and run wait silently; it is refused
// with the file, line and field unless --auto-offset starts the schedule at
// the first request. A start a few minutes in is kept, with a warning.
func TestSpecBuildRefusesEpochTimestamps(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, first float64) string {
		path := filepath.Join(dir, name)
		body := fmt.Sprintf(`{"timestamp": %.0f, "input_length": 10, "output_length": 2}`+"\n"+
			`{"timestamp": %.0f, "input_length": 10, "output_length": 2}`+"\n", first, first+100)
		require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
		return path
	}
	epoch := write("epoch.jsonl", 1_764_921_600_000)
	_, _, err := Spec{Trace: ptr(epoch)}.Build(0)
	var se *SpecError
	require.ErrorAs(t, err, &se)
	assert.EqualError(t, err, epoch+":1: timestamp: the first request is due 20427.3 days after time zero (epoch milliseconds?): "+
		"give --auto-offset to start the schedule at the first request")

	wl, _, err := Spec{Trace: ptr(epoch), AutoOffset: ptr(true)}.Build(0)
	require.NoError(t, err)
	assert.Equal(t, []float64{0, 100}, []float64{wl.Requests[0].TimestampMs, wl.Requests[1].TimestampMs})

	late := write("late.jsonl", 300_000)
	wl, warns, err := Spec{Trace: ptr(late)}.Build(0)
	require.NoError(t, err)
	assert.Equal(t, 300_000.0, wl.Requests[0].TimestampMs, "kept as given")
	require.Len(t, warns, 1)
	assert.Equal(t, late+":1: the first request is due 300 s after time zero: the run sends nothing until then (--auto-offset starts at the first request)", warns[0].String())
}

// TestSpecTraceAtItsBlockSize: a workload synthesised at 16 tokens a hash
// block, written as a trace, replays with --block-size 16; without it its
// hash_ids do not fit Mooncake's 512, and the error says where.
func TestSpecTraceAtItsBlockSize(t *testing.T) {
	wl, err := Synthesize(SynthSpec{Mode: ModePoisson, Rate: 2, RequestCount: 4, ISL: 592, OSL: 8, BlockSize: 16, Seed: 1})
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "workload.jsonl")
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, WriteJSONL(f, wl))
	require.NoError(t, f.Close())
	back, _, err := Spec{Trace: ptr(path), BlockSize: ptr(16)}.Build(0)
	require.NoError(t, err)
	assert.Equal(t, 16, back.BlockSize)
	assert.Equal(t, wl.Digest, back.Digest)
	_, _, err = Spec{Trace: ptr(path)}.Build(0)
	assert.ErrorContains(t, err, path+`:1: field "hash_ids": 37 block(s) do not fit input_length 592: at 512 tokens per block`)
}

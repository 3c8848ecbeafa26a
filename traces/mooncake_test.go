package traces

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const sliceTrace = "../testdata/traces/conversation_slice.jsonl"

func read(t *testing.T, text string) (*Workload, []Warning, error) {
	t.Helper()
	return ReadMooncake(strings.NewReader(text), "trace.jsonl")
}

func TestLoadMooncakeConversationTrace(t *testing.T) {
	if _, err := os.Stat(fullTrace); err != nil {
		t.Skip("full trace not available:", err)
	}
	wl, warns, err := LoadMooncake(fullTrace)
	require.NoError(t, err)
	assert.Empty(t, warns)
	require.Len(t, wl.Requests, 12031)
	assert.Equal(t, 512, wl.BlockSize)
	assert.Equal(t, fullTrace, wl.Source)
	assert.Len(t, wl.Digest, 64)
	first := wl.Requests[0]
	assert.Equal(t, Request{
		Row: 0, Line: 1, TimestampMs: 0, HasTimestamp: true, InputLength: 6758, OutputLength: 500,
		HashIDs: []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13},
	}, first)
	last := wl.Requests[12030]
	assert.Equal(t, 12031, last.Line)
	assert.Equal(t, 3536999.0, last.TimestampMs)
}

func TestLoadMooncakeSlice(t *testing.T) {
	wl, warns, err := LoadMooncake(sliceTrace)
	require.NoError(t, err)
	assert.Empty(t, warns)
	require.Len(t, wl.Requests, 200)
	assert.Equal(t, 7322, wl.Requests[1].InputLength)
	assert.Equal(t, 490, wl.Requests[1].OutputLength)
	for i, r := range wl.Requests {
		assert.Equal(t, i, r.Row)
		assert.Equal(t, i+1, r.Line)
		assert.Empty(t, r.SessionID)
	}
}

func TestLoadMooncakeMissingFile(t *testing.T) {
	_, _, err := LoadMooncake("no/such/trace.jsonl")
	require.Error(t, err)
	assert.True(t, errors.Is(err, os.ErrNotExist))
	assert.Contains(t, err.Error(), "no/such/trace.jsonl")
}

func TestReadMooncakeErrors(t *testing.T) {
	const good = `{"timestamp": 0, "input_length": 600, "output_length": 5, "hash_ids": [1, 2]}` + "\n\n"
	tests := []struct {
		name, line, field, want string
	}{
		{"truncated JSON", `{"timestamp": 0, "input_length": 10`, "",
			"trace.jsonl:3: malformed JSON: unexpected end of JSON input"},
		{"not an object", `[1, 2]`, "",
			"trace.jsonl:3: malformed row: want a JSON object, got JSON array"},
		{"trailing garbage", `{"input_length": 1, "output_length": 1} x`, "",
			"trace.jsonl:3: malformed JSON: invalid character 'x' after top-level value"},
		{"missing input_length", `{"timestamp": 0, "output_length": 5}`, "input_length",
			`trace.jsonl:3: field "input_length": missing: give input_length (or text_input)`},
		{"null input_length", `{"input_length": null, "output_length": 5}`, "input_length",
			`trace.jsonl:3: field "input_length": missing: give input_length (or text_input)`},
		{"negative input_length", `{"input_length": -3, "output_length": 5}`, "input_length",
			`trace.jsonl:3: field "input_length": must be >= 0, got -3`},
		{"fractional input_length", `{"input_length": 1.5, "output_length": 5}`, "input_length",
			`trace.jsonl:3: field "input_length": must be an integer token count of at most 16777216, got 1.5`},
		{"string input_length", `{"input_length": "12", "output_length": 5}`, "input_length",
			`trace.jsonl:3: field "input_length": must be a number, got "12"`},
		{"negative input_tokens alias", `{"input_tokens": -1, "output_length": 5}`, "input_tokens",
			`trace.jsonl:3: field "input_tokens": must be >= 0, got -1`},
		{"negative output_length", `{"input_length": 1, "output_length": -1}`, "output_length",
			`trace.jsonl:3: field "output_length": must be >= 0, got -1`},
		{"too few hash_ids", `{"input_length": 1000, "output_length": 1, "hash_ids": [7]}`, "hash_ids",
			`trace.jsonl:3: field "hash_ids": 1 block(s) do not fit input_length 1000: at 512 tokens per block it needs 2 (every block but the last is full: 0 < input_length − (blocks−1)·512 ≤ 512)`},
		{"too many hash_ids", `{"input_length": 512, "output_length": 1, "hash_ids": [7, 8]}`, "hash_ids",
			`trace.jsonl:3: field "hash_ids": 2 block(s) do not fit input_length 512: at 512 tokens per block it needs 1 (every block but the last is full: 0 < input_length − (blocks−1)·512 ≤ 512)`},
		{"hash_ids with zero input", `{"input_length": 0, "output_length": 1, "hash_ids": [7]}`, "hash_ids",
			`trace.jsonl:3: field "hash_ids": 1 block(s) do not fit input_length 0: at 512 tokens per block it needs 0 (every block but the last is full: 0 < input_length − (blocks−1)·512 ≤ 512)`},
		{"fractional hash id", `{"input_length": 10, "output_length": 1, "hash_ids": [1.5]}`, "hash_ids",
			`trace.jsonl:3: field "hash_ids": must be a list of integers, got JSON number 1.5`},
		{"string hash_ids", `{"input_length": 10, "output_length": 1, "hash_ids": "1"}`, "hash_ids",
			`trace.jsonl:3: field "hash_ids": must be a list of integers, got JSON string`},
		{"hash_ids with text only", `{"text_input": "hi", "output_length": 1, "hash_ids": [1]}`, "hash_ids",
			`trace.jsonl:3: field "hash_ids": needs input_length (hash_ids describe input_length tokens, not text_input)`},
		{"negative delay", `{"session_id": "a", "input_length": 1, "output_length": 1, "delay": -5}`, "delay",
			`trace.jsonl:3: field "delay": must be >= 0, got -5`},
		{"negative delay_ms alias", `{"input_length": 1, "output_length": 1, "delay_ms": -0.5}`, "delay_ms",
			`trace.jsonl:3: field "delay_ms": must be >= 0, got -0.5`},
		{"negative timestamp", `{"timestamp": -1, "input_length": 1, "output_length": 1}`, "timestamp",
			`trace.jsonl:3: field "timestamp": must be >= 0, got -1`},
		{"infinite timestamp", `{"timestamp": 1e400, "input_length": 1, "output_length": 1}`, "timestamp",
			`trace.jsonl:3: field "timestamp": must be a finite number, got 1e400`},
		{"timestamp and alias", `{"timestamp": 1, "created_time": 1, "input_length": 1, "output_length": 1}`, "created_time",
			`trace.jsonl:3: field "created_time": conflicts with "timestamp" (an alias); give only one`},
		{"bool session_id", `{"session_id": true, "input_length": 1, "output_length": 1}`, "session_id",
			`trace.jsonl:3: field "session_id": must be a string or a number, got true`},
		{"numeric text_input", `{"text_input": 5, "output_length": 1}`, "text_input",
			`trace.jsonl:3: field "text_input": must be a string, got JSON number`},
		{"string warmup", `{"input_length": 1, "output_length": 1, "warmup": "yes"}`, "warmup",
			`trace.jsonl:3: field "warmup": must be true or false, got JSON string`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The bad row is line 3; a later bad row must not be the one reported.
			_, _, err := read(t, good+tt.line+"\n{\"input_length\": -9}\n")
			require.Error(t, err)
			assert.Equal(t, tt.want, err.Error())
			var re *RowError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, "trace.jsonl", re.File)
			assert.Equal(t, 3, re.Line)
			assert.Equal(t, tt.field, re.Field)
		})
	}
}

func TestReadMooncakeEmpty(t *testing.T) {
	_, _, err := read(t, "\n  \n")
	require.EqualError(t, err, "trace.jsonl: no requests in trace")
}

func TestReadMooncakeLongLine(t *testing.T) {
	// 32768 hash ids: a prompt of MaxTokens, and an unknown member: a line
	// of ~1.5 MB.
	var b strings.Builder
	b.WriteString(`{"input_length": 16777216, "output_length": 1, "hash_ids": [0`)
	for i := 1; i < 32768; i++ {
		b.WriteString(", 1234567")
	}
	b.WriteString(`], "note": "` + strings.Repeat("x", 1200000) + `"}` + "\n")
	wl, _, err := read(t, b.String())
	require.NoError(t, err)
	assert.Len(t, wl.Requests[0].HashIDs, 32768)

	_, _, err = read(t, `{"input_length": 16777217, "output_length": 1}`)
	assert.EqualError(t, err, `trace.jsonl:1: field "input_length": must be an integer token count of at most 16777216, got 16777217`)
}

func TestReadMooncakeAliases(t *testing.T) {
	tests := []struct {
		name, line string
		want       Request
	}{
		{"created_time is timestamp in ms", `{"created_time": 1500.5, "input_length": 3, "output_length": 4}`,
			Request{TimestampMs: 1500.5, HasTimestamp: true, InputLength: 3, OutputLength: 4}},
		{"input_tokens and output_tokens", `{"timestamp": 2, "input_tokens": 513, "output_tokens": 9, "hash_ids": [4, 5]}`,
			Request{TimestampMs: 2, HasTimestamp: true, InputLength: 513, OutputLength: 9, HashIDs: []int64{4, 5}}},
		{"delay_ms", `{"session_id": "x", "input_length": 1, "output_length": 1, "delay_ms": 250}`,
			Request{SessionID: "x", DelayMs: 250, InputLength: 1, OutputLength: 1}},
		{"numeric session_id", `{"session_id": 17, "input_length": 1, "output_length": 1}`,
			Request{SessionID: "17", InputLength: 1, OutputLength: 1}},
		{"text_input without input_length", `{"text_input": "Hello <world>", "output_length": 20}`,
			Request{TextInput: "Hello <world>", OutputLength: 20}},
		{"integral float lengths, unknown keys, nulls", `{"timestamp": null, "input_length": 512.0, "output_length": 2e1, "hash_ids": [-3], "messages": [{"role": "user"}], "extra": {"a": [1, {"b": null}]}}`,
			Request{InputLength: 512, OutputLength: 20, HashIDs: []int64{-3}}},
		{"warmup extension", `{"timestamp": 1, "input_length": 1, "output_length": 1, "warmup": true}`,
			Request{TimestampMs: 1, HasTimestamp: true, InputLength: 1, OutputLength: 1, Warmup: true}},
		{"escaped key falls back to encoding/json", `{"time\u0073tamp": 7, "input_length": 1, "output_length": 1}`,
			Request{TimestampMs: 7, HasTimestamp: true, InputLength: 1, OutputLength: 1}},
		{"text_input with input_length", `{"text_input": "x y z", "input_length": 3, "output_length": 1}`,
			Request{TextInput: "x y z", InputLength: 3, OutputLength: 1}},
		{"CRLF line ending", "{\"input_length\": 2, \"output_length\": 1}\r\n",
			Request{InputLength: 2, OutputLength: 1}},
		{"empty hash_ids", `{"input_length": 0, "output_length": 1, "hash_ids": []}`,
			Request{OutputLength: 1}},
		{"negative zero", `{"timestamp": -0, "input_length": 1, "output_length": 1}`,
			Request{HasTimestamp: true, InputLength: 1, OutputLength: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wl, _, err := read(t, tt.line)
			require.NoError(t, err)
			tt.want.Line = 1
			assert.Equal(t, []Request{tt.want}, wl.Requests)
		})
	}
}

func TestReadMooncakeSessions(t *testing.T) {
	wl, warns, err := read(t, strings.Join([]string{
		`{"session_id": "a", "timestamp": 0, "input_length": 10, "output_length": 1}`,
		`{"session_id": "b", "timestamp": 5, "input_length": 10, "output_length": 1}`,
		`{"session_id": "a", "input_length": 20, "output_length": 1, "delay": 100}`,
		`{"input_length": 5, "output_length": 1, "timestamp": 6}`,
		`{"session_id": "a", "input_length": 30, "output_length": 1, "delay": 50}`,
		`{"session_id": "b", "input_length": 20, "output_length": 1}`,
	}, "\n"))
	require.NoError(t, err)
	var got []string
	for _, r := range wl.Requests {
		got = append(got, r.SessionID+":"+string(rune('0'+r.Turn)))
	}
	assert.Equal(t, []string{"a:0", "b:0", "a:1", ":0", "a:2", "b:1"}, got)
	require.Len(t, warns, 1)
	assert.Equal(t, Warning{"trace.jsonl", 3,
		"3 of 6 row(s) have no timestamp, first here; they are sent closed-loop and need a concurrency limit"}, warns[0])
}

func TestReadMooncakeWarnings(t *testing.T) {
	wl, warns, err := read(t, strings.Join([]string{
		`{"timestamp": 100, "input_length": 1, "output_length": 1}`,
		`{"timestamp": 50, "input_length": 1}`,
		`{"timestamp": 200, "input_length": 1, "output_length": 1, "session_id": "s", "delay": 3}`,
		`{"timestamp": 150.5, "input_length": 1}`,
	}, "\n"))
	require.NoError(t, err)
	assert.Len(t, wl.Requests, 4)
	assert.Equal(t, 0, wl.Requests[1].OutputLength)
	var got []string
	for _, w := range warns {
		got = append(got, w.String())
	}
	assert.Equal(t, []string{
		"trace.jsonl:2: timestamps go backwards on 2 row(s), first here (50 ms after 100 ms); requests keep file order",
		"trace.jsonl:2: 2 of 4 row(s) have no output_length, first here; they are sent without max_tokens (OutputLength 0)",
		"trace.jsonl:3: 1 session first turn(s) carry a delay, first here; there is no previous turn, so it is ignored",
	}, got)
}

func TestWriteJSONLFormat(t *testing.T) {
	wl := &Workload{Requests: []Request{
		{TimestampMs: 0, HasTimestamp: true, InputLength: 6758, OutputLength: 500, HashIDs: []int64{0, 1}},
		{SessionID: "s1", Turn: 1, DelayMs: 12.5, InputLength: 3, OutputLength: 1},
		{TimestampMs: 1.25, HasTimestamp: true, TextInput: "say \"hi\" <b>", Warmup: true},
	}}
	var buf bytes.Buffer
	require.NoError(t, WriteJSONL(&buf, wl))
	assert.Equal(t, `{"timestamp": 0, "input_length": 6758, "output_length": 500, "hash_ids": [0, 1]}
{"input_length": 3, "output_length": 1, "session_id": "s1", "delay": 12.5}
{"timestamp": 1.25, "text_input": "say \"hi\" \u003cb\u003e", "warmup": true}
`, buf.String())
}

func TestWriteJSONLRejectsNaN(t *testing.T) {
	err := WriteJSONL(&bytes.Buffer{}, &Workload{Requests: []Request{{DelayMs: nan()}}})
	require.ErrorContains(t, err, "request 0: timestamp/delay NaN is not a finite number")
}

func TestWriteJSONLByteIdenticalForMooncake(t *testing.T) {
	data, err := os.ReadFile(sliceTrace)
	require.NoError(t, err)
	wl, _, err := ReadMooncake(bytes.NewReader(data), "slice")
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, WriteJSONL(&buf, wl))
	assert.Equal(t, string(data), buf.String())
}

func TestRoundTrip(t *testing.T) {
	slice, _, err := LoadMooncake(sliceTrace)
	require.NoError(t, err)
	synth, err := Synthesize(SynthSpec{Mode: ModeGamma, Rate: 3.3, GammaShape: 0.5, RequestCount: 50, WarmupCount: 5,
		ISL: 900, ISLStddev: 400, OSL: 50, OSLStddev: 20, SharedPrefixTokens: 1024, NumPrefixGroups: 3, Turns: 3, TurnDelayMs: 0.1, Seed: 7})
	require.NoError(t, err)
	hand := &Workload{BlockSize: 512, Requests: []Request{
		{TimestampMs: 1.0 / 3, HasTimestamp: true, InputLength: 1, OutputLength: 1, SessionID: "x", HashIDs: []int64{-5}},
		{TimestampMs: 1e22, HasTimestamp: true, TextInput: "ünïcode\n\t\"", OutputLength: 3, SessionID: "x", Turn: 1, DelayMs: 1e-9},
		{TextInput: "t", InputLength: 7},
	}}
	// A workload synthesised at another block size reads back at it.
	small, err := Synthesize(SynthSpec{Mode: ModePoisson, Rate: 2, RequestCount: 8, ISL: 592, ISLStddev: 100, OSL: 20,
		SharedPrefixTokens: 64, NumPrefixGroups: 2, BlockSize: 16, Seed: 1})
	require.NoError(t, err)
	for _, wl := range []*Workload{slice, synth, hand, small} {
		t.Run(wl.Source, func(t *testing.T) {
			assertRoundTrip(t, wl)
		})
	}
}

// assertRoundTrip writes wl and reads it back at its block size: same
// requests, block size and digest.
func assertRoundTrip(t *testing.T, wl *Workload) {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, WriteJSONL(&buf, wl))
	back, _, err := ReadMooncakeBlocks(&buf, "back", wl.blockSize())
	require.NoError(t, err, "reading back:\n%s", buf.String())
	require.Len(t, back.Requests, len(wl.Requests))
	for i := range wl.Requests {
		want := wl.Requests[i]
		want.Row, want.Line = i, i+1
		assert.Equal(t, want, back.Requests[i], "request %d", i)
	}
	assert.Equal(t, ComputeDigest(wl.Requests), back.Digest)
	assert.Equal(t, wl.blockSize(), back.BlockSize)
}

// TestReadMooncakeBlocks: hash_ids are checked at the block size given,
// and the error names it with the file, line and field.
func TestReadMooncakeBlocks(t *testing.T) {
	const row = `{"input_length": 40, "output_length": 1, "hash_ids": [1, 2, 3]}`
	wl, _, err := ReadMooncakeBlocks(strings.NewReader(row), "w.jsonl", 16)
	require.NoError(t, err)
	assert.Equal(t, 16, wl.BlockSize)
	assert.Equal(t, []int64{1, 2, 3}, wl.Requests[0].HashIDs)
	_, _, err = ReadMooncake(strings.NewReader(row), "w.jsonl")
	assert.EqualError(t, err, `w.jsonl:1: field "hash_ids": 3 block(s) do not fit input_length 40: at 512 tokens per block it needs 1 (every block but the last is full: 0 < input_length − (blocks−1)·512 ≤ 512)`)
	_, _, err = ReadMooncakeBlocks(strings.NewReader(row), "w.jsonl", 32)
	assert.ErrorContains(t, err, `w.jsonl:1: field "hash_ids": 3 block(s) do not fit input_length 40: at 32 tokens per block it needs 2`)
	_, _, err = ReadMooncakeBlocks(strings.NewReader(row), "w.jsonl", 0)
	assert.EqualError(t, err, "w.jsonl: hash block size must be > 0, got 0")
}

// TestLoadMooncakeEndlessLine: a trace of /dev/zero failed as "bufio.Scanner:
// token too long"; the error names the file, the line and the bound.
func TestLoadMooncakeEndlessLine(t *testing.T) {
	_, _, err := LoadMooncake("/dev/zero")
	assert.EqualError(t, err, "/dev/zero:1: line longer than 64 MiB: not a JSONL trace")
}

// TestReadMooncakeParents: a session's DAG (simbench's parents extension)
// reads back, survives WriteJSONL and enters the digest; bad parents are
// refused naming file, line and field.
func TestReadMooncakeParents(t *testing.T) {
	dag := strings.Join([]string{
		`{"session_id": "a", "timestamp": 0, "input_length": 10, "output_length": 1}`,
		`{"session_id": "a", "input_length": 20, "output_length": 1, "parents": [0], "delay": 5}`,
		`{"session_id": "a", "input_length": 20, "output_length": 1, "parents": [0]}`,
		`{"session_id": "a", "input_length": 40, "output_length": 1, "parents": [1, 2]}`,
	}, "\n")
	wl, _, err := read(t, dag)
	require.NoError(t, err)
	var got [][]int
	for _, r := range wl.Requests {
		got = append(got, r.Parents)
	}
	assert.Equal(t, [][]int{nil, {0}, {0}, {1, 2}}, got)
	assertRoundTrip(t, wl)
	chain, _, err := read(t, strings.ReplaceAll(strings.ReplaceAll(dag, `"parents": [1, 2]`, `"parents": [2]`), `"parents": [0]}`, `"parents": [1]}`))
	require.NoError(t, err)
	assert.NotEqual(t, wl.Digest, chain.Digest, "parents are part of what is sent when")

	for _, tc := range []struct{ name, rows, want string }{
		{"first turn", `{"session_id": "a", "input_length": 1, "parents": [0]}`,
			`trace.jsonl:1: field "parents": a first turn (or a request without session_id) waits for no earlier turn`},
		{"no session", `{"input_length": 1}` + "\n" + `{"input_length": 1, "parents": [0]}`,
			`trace.jsonl:2: field "parents": a first turn (or a request without session_id) waits for no earlier turn`},
		{"later turn", `{"session_id": 1, "input_length": 1}` + "\n" + `{"session_id": 1, "input_length": 1, "parents": [1]}`,
			`trace.jsonl:2: field "parents": want earlier turns of the session (0..0) in ascending order, got [1]`},
		{"repeated", `{"session_id": 1, "input_length": 1}` + "\n" + `{"session_id": 1, "input_length": 1}` + "\n" +
			`{"session_id": 1, "input_length": 1, "parents": [1, 1]}`,
			`trace.jsonl:3: field "parents": want earlier turns of the session (0..1) in ascending order, got [1 1]`},
		{"not integers", `{"session_id": 1, "input_length": 1, "parents": [0.5]}`,
			`trace.jsonl:1: field "parents": must be a list of integers, got JSON number 0.5`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := read(t, tc.rows)
			require.Error(t, err)
			assert.Equal(t, tc.want, err.Error())
		})
	}
}

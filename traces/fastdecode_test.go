package traces

import (
	"bufio"
	"bytes"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/simbench/simbench/internal/jsonlex"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFastDecodeAccepts: real trace lines and the shapes below take the fast
// path and decode as the encoding/json path does.
func TestFastDecodeAccepts(t *testing.T) {
	data, err := os.ReadFile(sliceTrace)
	require.NoError(t, err)
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	lines = append(lines,
		`{"timestamp": 0, "input_length": 6758, "output_length": 500, "hash_ids": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]}`,
		`{"session_id": 3, "input_tokens": 1, "output_tokens": 2.0, "delay_ms": 1.5}`,
		`{"session_id": "s\u00e9\n", "created_time": 9, "input_length": 1e1, "delay": -0}`,
		`{"text_input": "hi \u00e9 <x>", "output_length": 2, "warmup": true}`,
		"{\"text_input\": \"caf\xc3\xa9 \xff\", \"session_id\": -0, \"warmup\": null}",
		`{"timestamp": null, "created_time": 3, "input_length": 1, "hash_ids": [], "x": {"a": [true, null, "\ud83d"]}}`,
		`{"input_length": 1, "hash_ids": [-9223372036854775808]}`, `{"input_length": 1, "hash_ids": [9223372036854775807]}`,
		`{"input_length": 2, "text_input": null, "timestamp": 4}`, `{"input_length": 10, "hash_ids": [null]}`,
		`{"input_length": 1, "hash_ids": null, "session_id": null, "warmup": false, "": 1}`,
	)
	for _, line := range lines {
		want, wantMissing, err := parseRowSlow([]byte(line), "f", 1, MooncakeBlockSize)
		require.NoError(t, err, line)
		got, gotMissing, ok := fastDecode([]byte(line), MooncakeBlockSize)
		require.True(t, ok, "fell back: %s", line)
		assert.Equal(t, want, got, line)
		assert.Equal(t, wantMissing, gotMissing, line)
	}
}

// TestFastDecodeFallsBack: the fast path refuses bad rows and the shapes it
// does not decode exactly; ReadMooncake then gives encoding/json's answer.
func TestFastDecodeFallsBack(t *testing.T) {
	for _, line := range []string{
		`[1, 2]`, `null`, `{`, `{"a":}`, `{"input_length": 01}`, `{"input_length": 1} x`,
		`{"timestamp": NaN, "input_length": 1}`, `{"timestamp": 1e400, "input_length": 1}`,
		`{"timestamp": -1, "input_length": 1}`, `{"timestamp": "1", "input_length": 1}`,
		`{"timestamp": 1, "created_time": 2, "input_length": 1}`, `{"delay": -1, "input_length": 1}`,
		`{"input_length": -3, "output_length": 5}`, `{"input_length": 1.5}`, `{"input_length": 3e9}`,
		`{"output_length": 5}`, `{"input_length": 1, "output_length": true}`,
		`{"input_length": 1000, "hash_ids": [1]}`, `{"input_length": 10, "hash_ids": [1.5]}`,
		`{"input_length": 1, "hash_ids": [9223372036854775808]}`,
		`{"input_length": 1, "hash_ids": [1], "hash_ids": [2]}`, `{"input_length": 2, "timestamp": 4, "timestamp": 5}`,
		`{"input_tokens": 1, "hash_ids": 5}`, `{"text_input": "x", "hash_ids": [1]}`,
		`{"Input_Length": 10}`, `{"input_length": 1, "ſession_id": 1}`, `{"input_length": 1, "warmup": 1}`,
		`{"input_length": 1, "session_id": true}`, `{"input_length": 1, "session_id": 1e400}`,
		`{"text_input": 5}`, `{"input_length": 2, "t\u0069mestamp": 4}`, `{"input_length": 1, "x": "\q"}`, "{\"input_length\": 1, \"x\": \"\x01\"}",
		`{"input_length": 1, "x": ` + strings.Repeat("[", jsonlex.MaxDepth) + strings.Repeat("]", jsonlex.MaxDepth) + `}`,
	} {
		_, _, ok := fastDecode([]byte(line), MooncakeBlockSize)
		assert.False(t, ok, "fast path accepted %s", line)
	}
}

// TestRowKeys: the fast path knows the members rawRow decodes, no more.
func TestRowKeys(t *testing.T) {
	var names []string
	for f := range reflect.TypeOf(rawRow{}).Fields() {
		names = append(names, f.Tag.Get("json"))
	}
	assert.ElementsMatch(t, names, []string(rowKeys))
}

package traces

import (
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const encRow = `{"timestamp": 0, "input_length": 10, "output_length": 2}` + "\n"

func utf16Of(s string, bigEndian, bom bool) string {
	var b []byte
	units := utf16.Encode([]rune(s))
	if bom {
		units = append([]uint16{0xFEFF}, units...)
	}
	for _, u := range units {
		if bigEndian {
			b = append(b, byte(u>>8), byte(u))
		} else {
			b = append(b, byte(u), byte(u>>8))
		}
	}
	return string(b)
}

// TestTraceEncodingIsNamed: a BOM or UTF-16 trace gave "invalid character
// 'ï' looking for beginning of value".
func TestTraceEncodingIsNamed(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"utf-8 bom", "\xEF\xBB\xBF" + encRow, "UTF-8 with a byte-order mark (EF BB BF)"},
		{"utf-16le bom", utf16Of(encRow, false, true), "UTF-16LE"},
		{"utf-16be bom", utf16Of(encRow, true, true), "UTF-16BE"},
		{"utf-16le", utf16Of(encRow, false, false), "UTF-16LE"},
		{"utf-16be", utf16Of(encRow, true, false), "UTF-16BE"},
		{"utf-32le bom", "\xFF\xFE\x00\x00{\x00\x00\x00", "UTF-32LE"},
		{"utf-32be", "\x00\x00\x00{", "UTF-32BE"},
	} {
		_, _, err := ReadMooncake(strings.NewReader(tc.text), "t.jsonl")
		require.Error(t, err, tc.name)
		assert.Equal(t, "t.jsonl:1: the file is "+tc.want+": save it as UTF-8 without a byte-order mark", err.Error(), tc.name)
	}
	for _, ok := range []string{encRow, "\n" + encRow, "  " + encRow, `{"text_input": "é ü", "output_length": 2}`} {
		_, _, err := ReadMooncake(strings.NewReader(ok), "t.jsonl")
		assert.NoError(t, err)
	}
	_, _, err := ReadMooncake(strings.NewReader("{"), "t.jsonl")
	assert.ErrorContains(t, err, "t.jsonl:1:", "a short file is read as it is")
}

// TestTraceRepeatedFieldIsAnError: encoding/json kept the last of a field
// given twice; unknown keys stay ignored, repeated or not.
func TestTraceRepeatedFieldIsAnError(t *testing.T) {
	for _, tc := range []struct{ line, field string }{
		{`{"timestamp": 0, "input_length": 10, "input_length": 20, "output_length": 2}`, "input_length"},
		{`{"timestamp": 0, "input_length": 10, "Input_Length": 20, "output_length": 2}`, "input_length"},
		{`{"hash_ids": [1], "timestamp": 0, "input_length": 10, "hash_ids": [2], "output_length": 2}`, "hash_ids"},
		{`{"session_id": "a", "input_length": 10, "SESSION_ID": "b"}`, "session_id"},
	} {
		_, _, err := ReadMooncake(strings.NewReader(encRow+tc.line+"\n"), "t.jsonl")
		assert.EqualError(t, err, `t.jsonl:2: field "`+tc.field+`": given twice in the row (a JSON decoder would keep one silently)`, tc.line)
	}
	wl, _, err := ReadMooncake(strings.NewReader(`{"x": 1, "x": 2, "timestamp": 0, "input_length": 10, "output_length": 2}`), "t.jsonl")
	require.NoError(t, err)
	assert.Equal(t, 10, wl.Requests[0].InputLength)
}

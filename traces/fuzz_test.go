package traces

import (
	"bufio"
	"bytes"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fuzzSeeds are real trace lines plus valid and invalid variants.
func fuzzSeeds(f *testing.F) {
	data, err := os.ReadFile(sliceTrace)
	require.NoError(f, err)
	sc := bufio.NewScanner(bytes.NewReader(data))
	for i := 0; sc.Scan() && i < 5; i++ {
		f.Add(append([]byte(nil), sc.Bytes()...))
	}
	for _, s := range []string{
		`{"timestamp": 0, "input_length": 6758, "output_length": 500, "hash_ids": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]}`,
		`{"session_id": 3, "input_tokens": 1, "output_tokens": 2, "delay_ms": 1.5}` + "\n" + `{"session_id": "3", "created_time": 9, "input_length": 1}`,
		`{"text_input": "hi \u00e9 <x>", "output_length": 2, "warmup": true}`,
		`{"timestamp": 1e400, "input_length": 1}`,
		`{"input_length": -3, "output_length": 5}`,
		`{"input_length": 1000, "hash_ids": [1]}`,
		`{"input_length": 10, "hash_ids": [1.5]}`,
		`{"Input_Length": 10, "HASH_IDS": [1], "extra": {"a": [true, null, "\ud83d"]}}`,
		`{"input_length": 1, "hash_ids": [9223372036854775807]}`,
		`{"input_length": 1, "hash_ids": [-9223372036854775808]}`,
		`{"input_length": 1, "hash_ids": [9223372036854775808]}`,
		`[1, 2]`, `null`, `{`, `{"a":}`, "\n\n", `{"input_length": 01}`,
		`{"timestamp": 5, "input_length": 2}` + "\n" + `{"timestamp": 3, "input_length": 2}`,
		`{"session_id": "s", "input_length": 2}` + "\n" + `{"session_id": "s", "input_length": 2, "parents": [0], "delay": 3}`,
		`{"session_id": "s", "input_length": 2, "parents": [-1, 9223372036854775807]}`,
	} {
		f.Add([]byte(s))
	}
}

// FuzzReadMooncake: reading never panics, and any accepted trace survives
// WriteJSONL → ReadMooncake unchanged.
func FuzzReadMooncake(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		wl, _, err := ReadMooncake(bytes.NewReader(data), "fuzz.jsonl")
		if err != nil {
			return
		}
		assertRoundTrip(t, wl)
		_ = Describe(wl)
	})
}

// FuzzFastDecode: whenever the fast decoder accepts a line, the encoding/json
// path accepts it too and decodes the same request.
func FuzzFastDecode(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, line []byte) {
		fast, fastMissing, ok := fastDecode(line, MooncakeBlockSize)
		if !ok {
			return
		}
		slow, slowMissing, err := parseRowSlow(line, "fuzz.jsonl", 1, MooncakeBlockSize)
		require.NoError(t, err, "fast path accepted input the slow path rejects: %q", line)
		assert.Equal(t, slow, fast, "line %q", line)
		assert.Equal(t, slowMissing, fastMissing, "missing output_length of %q", line)
	})
}

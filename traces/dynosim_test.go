package traces

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

const agenticDir = "../testdata/traces/agentic"

// TestAgenticMooncakeGolden reads DynoSim's own agentic_mooncake examples
// (its engine-stack test's two rows; its documentation's row, after the
// row it waits for) and compares the workload, written as simbench's
// workload.jsonl, its warnings and trace info's session table with golden
// files.
func TestAgenticMooncakeGolden(t *testing.T) {
	for _, tc := range []struct {
		file      string
		blockSize int
	}{
		{"dynosim_engine_stack.jsonl", 512},
		{"dynosim_docs.jsonl", 1024}, // its 4096 tokens in 4 blocks
	} {
		t.Run(tc.file, func(t *testing.T) { agenticGolden(t, tc.file, FormatAgenticMooncake, tc.blockSize) })
	}
}

// agenticGolden reads file of testdata/traces/agentic as format and
// compares the workload (simbench's workload.jsonl), its warnings and trace
// info's session table with FILE.golden; the workload must read back
// unchanged.
func agenticGolden(t *testing.T, file, format string, blockSize int) {
	t.Helper()
	wl, warns, err := LoadTrace(filepath.Join(agenticDir, file), format, blockSize)
	require.NoError(t, err)
	var got bytes.Buffer
	require.NoError(t, WriteJSONL(&got, wl))
	for _, w := range warns {
		got.WriteString("# warning: " + strings.TrimPrefix(w.String(), agenticDir+"/") + "\n")
	}
	require.NoError(t, Describe(wl).Agentic.writeText(&got))
	golden(t, filepath.Join(agenticDir, strings.TrimSuffix(file, ".jsonl")+".golden"), got.Bytes())
	assertRoundTrip(t, wl)
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to create it")
	assert.Equal(t, string(want), string(got))
}

func TestReadAgenticMooncakeErrors(t *testing.T) {
	row := func(id, extra string) string {
		return `{"request_id": "` + id + `", "input_length": 10, "output_length": 2` + extra + `}`
	}
	for _, tc := range []struct{ name, rows, want string }{
		{"no request_id", `{"input_length": 1, "output_length": 1}`,
			`t.jsonl:1: field "request_id": missing: every agentic_mooncake row names its request`},
		{"duplicate", row("a", "") + "\n" + row("a", ""), `t.jsonl:2: field "request_id": "a" is on line 1 already`},
		{"unknown parent", row("a", `, "wait_for": ["b"]`),
			`t.jsonl:1: field "wait_for": names request "b", which no earlier row has (rows come after the requests they wait for)`},
		{"two roots", row("a", "") + "\n" + row("b", "") + "\n" + row("c", `, "wait_for": ["a", "b"]`),
			`t.jsonl:3: field "wait_for": waits for requests of two sessions (rooted at "a" and "b"); a session has one root`},
		{"twice", row("a", "") + "\n" + row("c", `, "wait_for": ["a", "a"]`), `t.jsonl:2: field "wait_for": names request "a" twice`},
		{"no output", `{"request_id": "a", "input_length": 1}`,
			`t.jsonl:1: field "output_length": missing: an agentic_mooncake row gives its output length`},
		{"tool wait", row("a", "") + "\n" + row("b", `, "wait_for": ["a"], "tool_wait_ms": -1`),
			`t.jsonl:2: field "tool_wait_ms": must be >= 0, got -1`},
		{"branch", row("a", `, "branches": ["zz"]`), `t.jsonl:1: field "branches": names request "zz", which no row has`},
		{"bad id", row("a", "") + "\n" + row("b", `, "wait_for": [true]`), `t.jsonl:2: field "wait_for": must be a string or a number, got true`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := ReadAgenticMooncake(strings.NewReader(tc.rows), "t.jsonl", 16)
			require.Error(t, err)
			assert.Equal(t, tc.want, err.Error())
		})
	}
}

// FuzzReadAgenticMooncake: reading never panics, and an accepted trace
// survives WriteJSONL → ReadMooncake unchanged (its DAG as parents).
func FuzzReadAgenticMooncake(f *testing.F) {
	for _, name := range []string{"dynosim_engine_stack.jsonl", "dynosim_docs.jsonl"} {
		data, err := os.ReadFile(filepath.Join(agenticDir, name))
		require.NoError(f, err)
		f.Add(data)
	}
	f.Add([]byte(`{"request_id": 1, "input_length": 3, "output_length": 1}` + "\n" +
		`{"request_id": 2, "input_length": 3, "output_length": 1, "wait_for": [1], "tool_wait_ms": 1e-3}` + "\n" +
		`{"request_id": 3, "input_length": 3, "output_length": 1, "wait_for": [2, 1], "delay": 4}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		wl, _, err := ReadAgenticMooncake(bytes.NewReader(data), "fuzz.jsonl", 16)
		if err != nil {
			return
		}
		require.NoError(t, CheckParents(wl.Requests))
		assertRoundTrip(t, wl)
		_ = Describe(wl)
	})
}

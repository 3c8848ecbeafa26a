package main

import (
	"crypto/sha256"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/loadgen/openaitest"
	"github.com/simbench/simbench/results"
)

// TestOutputIsNotAnInput: `merge a b -o a` and `compare A B -o
// A/profile_export_aiperf.json` overwrote their own input; both are usage
// errors now and the input stays as it was.
func TestOutputIsNotAnInput(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	spec := runSpec{requests: 4, chunks: 3, workers: 1, intervalMs: 10,
		ttftMs: func(int) float64 { return 20 }, gapMs: func(int, int) float64 { return 5 }}
	writeRun(t, a, spec)
	writeRun(t, b, spec)
	aJSON, aRecs := filepath.Join(a, results.ProfileJSONName), filepath.Join(a, results.RecordsName)
	for _, tc := range []struct{ name, out string }{
		{"the run's aggregate", aJSON},
		{"the run's records", aRecs},
		{"a spelling of the same file", filepath.Join(root, "b", "..", "a", results.ProfileJSONName)},
		{"a new file inside the run", filepath.Join(a, "compare.txt")},
	} {
		t.Run("compare "+tc.name, func(t *testing.T) {
			before := readAll(t, aJSON, aRecs)
			code, _, errOut := compareCLI("compare", a, b, "-o", tc.out)
			assert.Equal(t, 2, code, errOut)
			assert.Contains(t, errOut, "is an input or inside one")
			assert.Equal(t, before, readAll(t, aJSON, aRecs), "inputs untouched")
		})
	}
	t.Run("compare file inputs", func(t *testing.T) {
		code, _, errOut := compareCLI("compare", aJSON, filepath.Join(b, results.ProfileJSONName), "-o", aRecs)
		assert.Equal(t, 2, code, errOut)
		assert.Contains(t, errOut, "is an input or inside one")
	})
	t.Run("compare beside the runs", func(t *testing.T) {
		code, _, errOut := compareCLI("compare", a, b, "-o", filepath.Join(root, "compare.txt"))
		assert.Equal(t, 0, code, errOut)
		assert.FileExists(t, filepath.Join(root, "compare.txt"))
	})
}

// TestMergeOutputIsNotAShard: `merge s0 s1 s2 -o s0` replaced shard 0 with
// the merged run.
func TestMergeOutputIsNotAShard(t *testing.T) {
	ts := httptest.NewServer(&openaitest.Server{ITL: time.Millisecond})
	defer ts.Close()
	trace, dir := writeSessionTrace(t), t.TempDir()
	var shards []string
	for _, spec := range []string{"0/2", "1/2"} {
		out := filepath.Join(dir, "s"+spec[:1])
		code, _, errOut := runCmdLine("run", "--url", ts.URL, "-m", "M", "--trace", trace, "--quiet", "--shard", spec, "-o", out)
		require.Equal(t, 0, code, errOut)
		shards = append(shards, out)
	}
	s0Recs := filepath.Join(shards[0], results.RecordsName)
	before := readAll(t, s0Recs)
	for _, out := range []string{shards[0], filepath.Join(shards[1], "merged")} {
		code, _, errOut := runCmdLine("merge", shards[0], shards[1], "-o", out)
		assert.Equal(t, 2, code, errOut)
		assert.Contains(t, errOut, "is an input or inside one")
	}
	assert.Equal(t, before, readAll(t, s0Recs), "shard untouched")
	code, _, errOut := runCmdLine("merge", shards[0], shards[1], "-o", filepath.Join(dir, "all"))
	assert.Equal(t, 0, code, errOut)
}

// readAll returns the SHA-256 of each file.
func readAll(t *testing.T, paths ...string) []string {
	t.Helper()
	out := make([]string, len(paths))
	for i, p := range paths {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		out[i] = fmt.Sprintf("%x", sha256.Sum256(b))
	}
	return out
}

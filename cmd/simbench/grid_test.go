package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/grid"
)

const testGrid = `parameters:
  - key: workers
    values: [1, 2]
  - key: speedup
    values: [1, 4]
`

// TestShardedGridEqualsGrid: three shards merged equal the unsharded grid
// bit for bit (every point's files, the summary and the Pareto PNG).
func TestShardedGridEqualsGrid(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	trace := writeRunTrace(t, 16, 20, 400, 12)
	gridFile := filepath.Join(dir, "grid.yaml")
	require.NoError(t, os.WriteFile(gridFile, []byte(testGrid), 0o644))
	simArgs := func(out string, extra ...string) []string {
		return append([]string{"sim", "--trace", trace, "--grid", gridFile, "--quiet", "-o", out}, extra...)
	}
	whole := filepath.Join(dir, "whole")
	code, _, errOut := runCmdLine(simArgs(whole)...)
	require.Equal(t, 0, code, errOut)
	// The old flag name still works, with a note.
	old := filepath.Join(dir, "old")
	code, _, errOut = runCmdLine("sim", "--trace", trace, "--sweep", gridFile, "--quiet", "-o", old)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "note: simbench sim --sweep is deprecated: use --grid")
	assert.Equal(t, treeFiles(t, whole), treeFiles(t, old))
	var shards []string
	for k := range 3 {
		out := filepath.Join(dir, fmt.Sprint("s", k))
		code, _, errOut := runCmdLine(simArgs(out, "--shard", fmt.Sprintf("%d/3", k))...)
		require.Equal(t, 0, code, errOut)
		shards = append(shards, out)
	}
	merged := filepath.Join(dir, "merged")
	code, out, errOut := runCmdLine(append(append([]string{"merge"}, shards...), "-o", merged)...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, grid.ParetoName)
	assert.Equal(t, treeFiles(t, whole), treeFiles(t, merged))

	var sum grid.Summary
	b, err := os.ReadFile(filepath.Join(whole, grid.SummaryName))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &sum))
	require.Len(t, sum.Results, 4)
	assert.Equal(t, 4, sum.Points)
	front := 0
	for i, r := range sum.Results {
		assert.Equal(t, i, r.Index)
		assert.Equal(t, fmt.Sprintf("point_%04d", i), r.Dir)
		assert.Contains(t, r.Metrics, grid.KeyOutputPerWorker)
		if r.ParetoTTFT {
			front++
		}
	}
	assert.Positive(t, front)
	assert.EqualValues(t, 2, sum.Results[3].Params["workers"])
	assert.EqualValues(t, 4, sum.Results[3].Params["speedup"])

	code, _, errOut = runCmdLine("merge", shards[0], shards[2], "-o", filepath.Join(dir, "m2"))
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "incomplete grid: shard 1/3 missing")
	code, _, errOut = runCmdLine("merge", shards[0], shards[1], shards[1], "-o", filepath.Join(dir, "m3"))
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "given twice")
	code, _, errOut = runCmdLine("sim", "--trace", trace, "--shard", "0/2", "-o", filepath.Join(dir, "x"))
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "--shard splits a --grid: it needs --grid")
}

// treeFiles maps every file under root (relative path) to its contents.
func treeFiles(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		rel, _ := filepath.Rel(root, path)
		out[rel] = string(b)
		return err
	}))
	return out
}

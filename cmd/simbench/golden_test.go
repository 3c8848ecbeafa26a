package main

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// update rewrites golden files: go test ./cmd/simbench/ -update
var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/name, or rewrites that file with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenFile(t, filepath.Join("testdata", name), got)
}

// goldenFile compares got with the file at path, or rewrites it with -update.
func goldenFile(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file %s: run go test -update", path)
	assert.Equal(t, string(want), string(got), "output differs from %s (run go test -update if the change is intended)", path)
}

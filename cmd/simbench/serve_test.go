package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestServeUsageErrors: serve refuses what it cannot serve with exit 2 and
// the flag at fault, before listening.
func TestServeUsageErrors(t *testing.T) {
	t.Parallel()
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("workers: 0\n"), 0o644))
	badFaults := filepath.Join(t.TempDir(), "faults.yaml")
	require.NoError(t, os.WriteFile(badFaults, []byte("faults:\n  cut: {rate: 2}\n"), 0o644))
	tests := []struct {
		name string
		args []string
		msg  string
	}{
		{"argument", []string{"serve", "x"}, `serve takes no arguments, got "x"`},
		{"config", []string{"serve", "--config", bad}, "--config " + bad},
		{"faults", []string{"serve", "--config", badFaults}, "--config " + badFaults + ": line 2: faults.cut.rate: must be in [0, 1], got 2"},
		{"speedup", []string{"serve", "--speedup", "0", "--addr", "127.0.0.1:0"}, "serve: speedup 0: want a finite number > 0"},
		{"truth exists", []string{"serve", "--truth", bad, "--addr", "127.0.0.1:0"}, "--truth: open " + bad + ": file exists (it is never overwritten)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, _, errOut := compareCLI(tc.args...)
			assert.Equal(t, exitUsage, code, errOut)
			assert.Contains(t, errOut, tc.msg)
		})
	}
}

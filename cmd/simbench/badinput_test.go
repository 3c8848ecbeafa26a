package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const fixtureRun = "../../testdata/aiperf/qwen_concurrency1/"

// Files that summarize and compare accepted silently (issue 14) are refused
// with exit 1 and a message naming file and field.
func TestBadFilesExitOne(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.jsonl")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	b, err := os.ReadFile(fixtureRun + "profile_export_aiperf.json")
	require.NoError(t, err)
	str := filepath.Join(dir, "str.json")
	require.NoError(t, os.WriteFile(str, bytes.Replace(b, []byte(`"avg": 30.814987671875,`), []byte(`"avg": "30.814987671875",`), 1), 0o644))
	require.True(t, bytes.Contains(b, []byte(`"avg": 30.814987671875,`)), "the fixture changed")
	good := fixtureRun + "profile_export_aiperf.json"

	tests := []struct {
		name string
		args []string
		msg  string
	}{
		{"summarize empty JSONL", []string{"summarize", empty, "-o", filepath.Join(dir, "out")}, "empty.jsonl: no records"},
		{"compare empty JSONL", []string{"compare", empty, good}, "empty.jsonl: no records"},
		{"compare a string statistic", []string{"compare", good, str}, `str.json: field "time_to_first_token": avg: want a finite number, got "30.81`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := compareCLI(tc.args...)
			assert.Equal(t, exitFailure, code, out)
			assert.Contains(t, errOut, tc.msg)
		})
	}
	_, err = os.Stat(filepath.Join(dir, "out"))
	assert.True(t, os.IsNotExist(err), "a refused summarize writes nothing")
}

// TestSummarizeRecoversATornLastLine: a write cut short (a full disk) leaves
// a last line without its newline; summarize keeps the whole lines and warns.
func TestSummarizeRecoversATornLastLine(t *testing.T) {
	b, err := os.ReadFile(fixtureRun + "profile_export.jsonl")
	require.NoError(t, err)
	torn := filepath.Join(t.TempDir(), "profile_export.jsonl")
	require.NoError(t, os.WriteFile(torn, bytes.TrimRight(b, "\n")[:len(b)-300], 0o644))
	code, out, errOut := compareCLI("summarize", torn, "-o", t.TempDir())
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "summarized 9 valid requests")
	assert.Contains(t, errOut, "warning: "+torn+":10: the last line is torn")
}

// TestFailedSimLeavesNoRun: a missing timing table used to leave an empty
// JSONL, a valid empty aggregate and workload.jsonl: a run that looked
// finished.
func TestFailedSimLeavesNoRun(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "table.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("timing:\n  model: table\n  table:\n    file: missing.csv\n"), 0o644))
	out := filepath.Join(dir, "run")
	code, _, errOut := compareCLI("sim", "--config", cfg, "--trace", "../../testdata/traces/conversation_slice.jsonl",
		"--limit", "5", "-o", out, "-q")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, errOut, "timing.table.file: open missing.csv")
	_, err := os.Stat(out)
	assert.True(t, os.IsNotExist(err), "no run directory: %v", err)
}

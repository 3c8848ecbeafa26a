package main

import (
	"bytes"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/simbench/simbench/loadgen/openaitest"
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

// TestRunExitCodes: a URL that cannot work is a usage error before any
// request; a run in which no request succeeded exits 1, files written.
func TestRunExitCodes(t *testing.T) {
	dir := t.TempDir()
	code, _, errOut := runCmdLine("run", "--url", "127.0.0.1:99999", "--model", "M", "--concurrency", "1",
		"--request-count", "2", "--isl", "8", "--osl", "4", "-o", filepath.Join(dir, "bad"), "-q")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, `--url "127.0.0.1:99999": port 99999 is not in 1..65535`)
	assert.NoDirExists(t, filepath.Join(dir, "bad"))

	srv := &openaitest.Server{FaultFor: func(int) openaitest.Fault { return openaitest.HTTP500 }}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	out := filepath.Join(dir, "failed")
	code, _, errOut = runCmdLine("run", "--url", ts.URL, "--model", "M", "--concurrency", "1", "--request-count", "3",
		"--isl", "8", "--osl", "4", "--no-server-metrics", "-o", out, "-q")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, errOut, "no request succeeded: 3 sent, 3 failed")
	assert.FileExists(t, filepath.Join(out, "profile_export_aiperf.json"), "the files are written all the same")
}

package main

import (
	"io"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/loadgen/openaitest"
	"github.com/simbench/simbench/realrun"
	"github.com/simbench/simbench/servermetrics"
)

func runWithMetrics(ts *httptest.Server, dir string, extra ...string) (int, string, string) {
	args := append([]string{"run", "--url", ts.URL, "-m", "M", "--concurrency", "2", "--request-count", "8",
		"--isl", "8", "--osl", "4", "-o", dir, "--server-metrics-interval", "100ms", "--progress-interval", "1h"}, extra...)
	return runCmdLine(args...)
}

// TestRunServerMetricsCLI: the breakdown is printed after the summary; the
// server-metrics flags are checked (realrun's tests cover the scraping).
func TestRunServerMetricsCLI(t *testing.T) {
	m, err := openaitest.NewMetrics("M", nil)
	require.NoError(t, err)
	ts := httptest.NewServer(&openaitest.Server{TTFT: 30 * time.Millisecond, ITL: 2 * time.Millisecond, Metrics: m})
	defer ts.Close()
	dir := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := runWithMetrics(ts, dir)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.FileExists(t, filepath.Join(dir, servermetrics.JSONName))
	assert.Contains(t, stdout, "TTFT breakdown (dynamo, "+openaitest.FamilyTTFT)
	assert.Less(t, strings.Index(stdout, "Time to First Token"), strings.Index(stdout, "TTFT breakdown"),
		"the breakdown follows the summary")

	code, _, stderr = runWithMetrics(ts, filepath.Join(t.TempDir(), "bad"), "--server-metrics", "ftp://x")
	assert.Equal(t, exitUsage, code, stderr)
	code, _, stderr = runWithMetrics(ts, filepath.Join(t.TempDir(), "bad"), "--server-metrics-interval", "0s")
	assert.Equal(t, exitUsage, code, stderr)
	assert.Contains(t, stderr, "--server-metrics-interval must be positive")
}

func TestRunInterruptedExitCode(t *testing.T) {
	assert.Equal(t, exitInterrupted, exitCode(realrun.ErrInterrupted, io.Discard))
}

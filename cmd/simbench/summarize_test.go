package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/simbench/simbench/results"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSummarizeReproducesNumpy is the foundation issue's acceptance check:
// summarize on a real AIPerf per-request export reproduces numpy's
// statistics for every record metric to 1e-9 relative.
func TestSummarizeReproducesNumpy(t *testing.T) {
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	code := run([]string{"simbench", "summarize", "../../testdata/aiperf/qwen_concurrency1/profile_export.jsonl", "-o", dir}, &out, &errOut)
	require.Equal(t, exitOK, code, errOut.String())
	assert.Contains(t, out.String(), "summarized 10 valid requests")

	p, err := results.LoadProfileJSON(filepath.Join(dir, results.ProfileJSONName))
	require.NoError(t, err)
	b, err := os.ReadFile("../../results/testdata/aiperf_fixture_numpy.json")
	require.NoError(t, err)
	var want map[string]map[string]float64
	require.NoError(t, json.Unmarshal(b, &want))
	require.NotEmpty(t, want)
	for tag, stats := range want {
		for _, stat := range []string{"avg", "min", "max", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "std"} {
			got, ok := p.Value(tag, stat)
			require.True(t, ok, "%s.%s missing", tag, stat)
			if stats[stat] == 0 {
				assert.InDelta(t, 0, got, 1e-12, "%s.%s", tag, stat)
			} else {
				assert.InEpsilon(t, stats[stat], got, 1e-9, "%s.%s", tag, stat)
			}
		}
	}
	_, err = os.Stat(filepath.Join(dir, results.ProfileCSVName))
	assert.NoError(t, err)
}

func TestSummarizeUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"no file", []string{"summarize", "-o", "x"}, exitUsage},
		{"no output", []string{"summarize", "f.jsonl"}, exitUsage},
		{"bad goodput", []string{"summarize", "f.jsonl", "-o", "x", "--goodput", "ttft"}, exitUsage},
		{"missing file", []string{"summarize", "/nonexistent/f.jsonl", "-o", t.TempDir()}, exitFailure},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			assert.Equal(t, tc.code, run(append([]string{"simbench"}, tc.args...), &out, &errOut), errOut.String())
		})
	}
}

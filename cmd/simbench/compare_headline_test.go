package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCompareHeadlineWorkloadCheck: compare never said that the two runs
// replayed different workloads (issue 41 item 3). The headline now says it
// in every format, as a warning, and --gate makes it a failure (exit 1).
func TestCompareHeadlineWorkloadCheck(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sim := func(name string, extra ...string) string {
		out := filepath.Join(dir, name)
		args := append([]string{"sim", "--trace", sliceTrace, "-o", out, "-q"}, extra...)
		code, _, stderr := simbench(t, args...)
		require.Equal(t, exitOK, code, stderr)
		return out
	}
	a, b := sim("a", "--limit", "8"), sim("b", "--limit", "8", "--workers", "2")
	other := sim("other", "--limit", "6")

	code, stdout, stderr := simbench(t, "compare", a, b)
	require.Equal(t, exitOK, code, stderr)
	assert.Regexp(t, `\n  workload:  same workload on both sides \(digest [0-9a-f]{12}, 8 requests from `, stdout)

	code, stdout, stderr = simbench(t, "compare", a, other)
	require.Equal(t, exitOK, code, stderr)
	assert.Regexp(t, `\n  verdict:   UNGATED \(no bound: --gate or --fail-above sets some\)\n`+
		`  workload:  warning: different workloads: the workload digests differ \(reference [0-9a-f]{12}, 8 requests from .*; `+
		`candidate [0-9a-f]{12}, 6 requests from .*\)\n  worst:     `, stdout)

	code, stdout, _ = simbench(t, "compare", a, other, "--format", "markdown")
	require.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "- **Workload:** ⚠️ different workloads: the workload digests differ")

	code, stdout, stderr = simbench(t, "compare", a, other, "--gate", "--format", "json")
	assert.Equal(t, exitFailure, code, "--gate fails on different workloads")
	assert.Contains(t, stderr, "simbench: --gate: different workloads: the workload digests differ")
	var got struct {
		Headline struct {
			Verdict  string `json:"verdict"`
			Detail   string `json:"detail"`
			Workload struct {
				Status           string   `json:"status"`
				ReferenceDigests []string `json:"reference_digests"`
			} `json:"workload"`
			Worst []struct {
				Metric string `json:"metric"`
				Stat   string `json:"stat"`
			} `json:"worst_offenders"`
		} `json:"headline"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &got), "the report is written all the same")
	assert.Equal(t, "fail", got.Headline.Verdict)
	assert.Contains(t, got.Headline.Detail, "different workloads")
	assert.Equal(t, "different", got.Headline.Workload.Status)
	assert.Len(t, got.Headline.Workload.ReferenceDigests, 1)
	for _, w := range got.Headline.Worst {
		assert.Contains(t, []string{"avg", "p50", "p90", "p99"}, w.Stat, "no std/min/max among the worst offenders")
	}
}

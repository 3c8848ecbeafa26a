package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFidelityOnTheCorpus: the corpus's stages, capped, give one row per
// prediction with a finite median for every metric, and one line a stage.
func TestFidelityOnTheCorpus(t *testing.T) {
	code, out, errOut := runCmdLine("fidelity", "--max-requests", "40", "../../testdata/silicon")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "## Median absolute error over 22 stages of 13 deployments")
	for _, row := range []string{"| default prior, leave-one-deployment-out |", "| default prior (fitted on every corpus deployment) |"} {
		i := strings.Index(out, row)
		require.GreaterOrEqual(t, i, 0, row)
		line := out[i : i+strings.Index(out[i:], "\n")]
		assert.Equal(t, 7, strings.Count(line, "%"), line)
		assert.NotContains(t, line, "NaN")
	}
	assert.Equal(t, 2, strings.Count(out, "| tv-64-qwen2-5-7b-instruct-tp1-roleplay-1-1-s0 |"))
}

func TestFidelityNeedsStages(t *testing.T) {
	code, _, errOut := runCmdLine("fidelity")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "fidelity takes one or more stage files")
	code, _, errOut = runCmdLine("fidelity", t.TempDir())
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, errOut, "no stage files")
}

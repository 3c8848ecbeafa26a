package main

import (
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFidelityOnTheCorpus: the corpus's stages, capped, give one row per
// prediction with a finite median for every metric and one line a stage;
// the same report as JSON (every stage and metric, measured and predicted,
// medians, calibration and sweeps, no NaN) and a PNG of two panels.
func TestFidelityOnTheCorpus(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	jsonPath, pngPath := filepath.Join(dir, "fidelity.json"), filepath.Join(dir, "fidelity.png")
	code, out, errOut := runCmdLine("fidelity", "--max-requests", "40", "--sim-seeds", "1", "--max-evals", "8", "--json", jsonPath, "--png", pngPath,
		"../../testdata/silicon")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "## Median absolute error over 28 stages of 17 deployments")
	for _, row := range []string{"| default prior, leave-one-deployment-out | 28 |", "| default prior, leave-one-model-out | 28 |",
		"| default prior (fitted on every corpus deployment) | 28 |",
		"| calibrated on the deployment's lightest stage | 11 |"} {
		i := strings.Index(out, row)
		require.GreaterOrEqual(t, i, 0, row)
		line := out[i : i+strings.Index(out[i:], "\n")]
		assert.Equal(t, 7, strings.Count(line, "%"), line)
		assert.NotContains(t, line, "NaN")
	}
	assert.Equal(t, 3, strings.Count(out, "| tv-64-qwen2-5-7b-instruct-tp1-roleplay-1-1-s0 |"), "no calibrated row for a one-stage deployment")
	assert.Contains(t, out, "| tv-64-qwen2-5-7b-instruct-tp1-roleplay-1-1 | – | one stage: no calibrated prediction")
	assert.Contains(t, out, "## Throughput error at each sweep's heaviest stage")

	raw, err := os.ReadFile(jsonPath)
	require.NoError(t, err)
	assert.NotContains(t, string(raw), "NaN")
	var rep struct {
		Stages      int `json:"stages"`
		MaxRequests int `json:"max_requests"`
		Predictions []struct {
			Key     string `json:"key"`
			Metrics []struct {
				Median *float64 `json:"median"`
			} `json:"median_abs_error_pct"`
		} `json:"predictions"`
		StageErrors []struct {
			Metrics []struct {
				Measured  *float64 `json:"measured"`
				Predicted []struct {
					Value, ErrorPct *float64
				} `json:"predicted"`
			} `json:"metrics"`
		} `json:"stage_errors"`
		Sweeps []struct {
			Stages []struct {
				Measured *float64 `json:"measured"`
			} `json:"stages"`
		} `json:"throughput"`
	}
	require.NoError(t, json.Unmarshal(raw, &rep))
	assert.Equal(t, 28, rep.Stages)
	assert.Equal(t, 40, rep.MaxRequests)
	require.Len(t, rep.Predictions, 4)
	keys := make([]string, len(rep.Predictions))
	for i, p := range rep.Predictions {
		keys[i] = p.Key
	}
	assert.Equal(t, []string{"a_priori", "a_priori_model", "in_sample", "calibrated"}, keys)
	assert.NotNil(t, rep.Predictions[3].Metrics[3].Median, "the calibrated ITL median")
	require.Len(t, rep.StageErrors, 28)
	assert.NotNil(t, rep.StageErrors[0].Metrics[0].Measured)
	assert.NotNil(t, rep.StageErrors[0].Metrics[0].Predicted[0].Value)
	assert.Len(t, rep.Sweeps, 11, "the deployments with two stages")

	f, err := os.Open(pngPath)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	assert.Equal(t, 1770, img.Bounds().Dx(), "the two a-priori panels and the calibrated one beside the legend")
}

// TestFidelityFormats: one deployment of two stages and one of one, in
// text (golden) and as JSON on stdout.
func TestFidelityFormats(t *testing.T) {
	t.Parallel()
	runs := "../../testdata/silicon/runs/"
	args := []string{"fidelity", "--max-requests", "40", "--sim-seeds", "1",
		runs + "tv-62-mistral-nemo-12b-tp2-general-lite-2-1-s0.json", runs + "tv-62-mistral-nemo-12b-tp2-general-lite-2-1-s1.json",
		runs + "tv-64-qwen2-5-7b-instruct-tp1-roleplay-1-1-s0.json"}
	code, out, errOut := runCmdLine(append(args, "--format", "text")...)
	require.Equal(t, exitOK, code, errOut)
	golden(t, "fidelity_text.golden", []byte(out))
	code, out, errOut = runCmdLine(append(args, "-f", "json")...)
	require.Equal(t, exitOK, code, errOut)
	var rep map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, 3.0, rep["stages"])
}

func TestFidelityNeedsStages(t *testing.T) {
	code, _, errOut := runCmdLine("fidelity")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "fidelity takes one or more stage files")
	code, _, errOut = runCmdLine("fidelity", t.TempDir())
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, errOut, "no stage files")
}

func TestFidelityBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--format", "html"}, `--format must be text, markdown or json, got "html"`},
		{[]string{"--sim-seeds", "0"}, "--sim-seeds must be >= 1"},
		{[]string{"--max-requests", "-1"}, "--max-requests must be >= 0"},
		{[]string{"--max-evals", "0"}, "--max-evals must be >= 1"},
	} {
		code, _, errOut := runCmdLine(append([]string{"fidelity", "../../testdata/silicon"}, tc.args...)...)
		assert.Equal(t, exitUsage, code, tc.args)
		assert.Contains(t, errOut, tc.want)
	}
}

// TestFidelityJSONFileIsWholeOrAbsent: a --json path in a missing
// directory is an error naming it, and leaves nothing behind.
func TestFidelityJSONFileIsWholeOrAbsent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing", "f.json")
	code, _, errOut := runCmdLine("fidelity", "--max-requests", "10", "--sim-seeds", "1", "--json", path,
		"../../testdata/silicon/runs/tv-64-qwen2-5-7b-instruct-tp1-roleplay-1-1-s0.json")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, errOut, path)
	assert.NoFileExists(t, path)
}

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// specYAML is Llama-3.1-8B on an H100 with EAGLE-3 drafting 4 tokens at
// the given per-position acceptance.
func specYAML(rates string) string {
	return "workers: 1\nengine:\n  type: vllm\n  speculative_config:\n    method: eagle3\n    num_speculative_tokens: 4\n" +
		"    acceptance_rate: " + rates + "\ntiming:\n  model: physics\nhardware:\n  gpu: h100\n  model: llama-3.1-8b\n"
}

// TestCompareSpecDecode is issue 42's "done when": compare shows the
// acceptance and the tokens per chunk of two simulated runs that differ
// only in their acceptance rates, side by side with the error.
func TestCompareSpecDecode(t *testing.T) {
	tmp := t.TempDir()
	var dirs []string
	for i, rates := range []string{"0.7", "[0.8, 0.6, 0.5, 0.4]"} {
		cfg := filepath.Join(tmp, "c"+string(rune('a'+i))+".yaml")
		require.NoError(t, os.WriteFile(cfg, []byte(specYAML(rates)), 0o644))
		dir := filepath.Join(tmp, "run"+string(rune('a'+i)))
		code, _, stderr := runCmdLine("sim", "--config", cfg, "--concurrency", "4", "--request-count", "24",
			"--isl", "200", "--osl", "60", "-o", dir)
		require.Equal(t, 0, code, stderr)
		dirs = append(dirs, dir)
	}
	code, stdout, stderr := runCmdLine("compare", dirs[0], dirs[1])
	require.Equal(t, 0, code, stderr)
	for _, title := range []string{"Tokens Per Chunk (tokens/chunk)", "Spec Decode Acceptance Rate", "Spec Decode Mean Accepted Length",
		"Spec Decode Acceptance Rate At", "Position 3 (ratio)"} {
		assert.Contains(t, stdout, title)
	}
	// The position-0 rates differ (0.7 against 0.8): a row with a non-zero error.
	i := strings.Index(stdout, "Spec Decode Acceptance Rate At")
	require.GreaterOrEqual(t, i, 0)
	row := stdout[i : i+strings.Index(stdout[i:], "\n")]
	assert.Regexp(t, regexp.MustCompile(`[+-]\d+\.\d\d%`), row)
	assert.NotContains(t, row, " 0.00%")
}

package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/plots/figures"
)

// TestPlotLoadSweep: plot takes a load-sweep directory and draws its
// throughput-vs-latency and attainment-vs-load figures; --records is a
// run's flag.
func TestPlotLoadSweep(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	sweep := filepath.Join(root, "sweep")
	writeLoadSweep(t, sweep, []float64{1, 2, 4, 8}, []float64{40, 60, 90, 200})
	out := filepath.Join(root, "plots")
	code, stdout, stderr := simbench(t, "plot", sweep, "-o", out)
	require.Equal(t, exitOK, code, stderr)
	for _, name := range []string{figures.SweepTradeoffsName, figures.SweepAttainmentName} {
		assert.Contains(t, stdout, "wrote "+filepath.Join(out, name))
		checkPNG(t, filepath.Join(out, name))
	}
	code, _, stderr = simbench(t, "plot", sweep, "-o", out, "--records", filepath.Join(root, "r.jsonl"))
	assert.Equal(t, exitUsage, code, stderr)
}

package sweep

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMergeRefusesLoadSweep(t *testing.T) {
	dir := t.TempDir()
	body := `{"kind": "load_sweep", "load": "concurrency", "loads": [1], "attainment_target": 0.9, "points": []}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, SummaryName), []byte(body), 0o644))
	_, err := Merge([]string{dir}, t.TempDir())
	require.Error(t, err)
	assert.Contains(t, err.Error(), `kind "load_sweep": a load sweep`)
	assert.Contains(t, err.Error(), filepath.Join(dir, SummaryName))
}

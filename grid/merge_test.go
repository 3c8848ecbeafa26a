package grid

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

// A grid's summary is grid_summary.json; the sweep_summary.json an older
// version wrote is still read, its kind checked.
func TestSummaryNames(t *testing.T) {
	shard := `{"kind": "config_grid", "sweep": "g.yaml", "points": 2, "shard": {"index": 0, "count": 2}}`
	for name, tc := range map[string]struct {
		file, body string
		isGrid     bool
		err        string
	}{
		"none":              {isGrid: false, err: "not a grid shard"},
		"grid":              {file: SummaryName, body: shard, isGrid: true},
		"legacy":            {file: LegacySummaryName, body: shard, isGrid: true},
		"legacy load sweep": {file: LegacySummaryName, body: `{"kind": "load_sweep"}`, isGrid: true, err: `kind "load_sweep"`},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.file != "" {
				require.NoError(t, os.WriteFile(filepath.Join(dir, tc.file), []byte(tc.body), 0o644))
			}
			assert.Equal(t, tc.isGrid, IsGrid(dir))
			s, err := loadSummary(dir)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, 2, s.Points)
			assert.Equal(t, "g.yaml", s.File)
		})
	}
}

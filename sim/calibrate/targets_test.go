package calibrate

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Runs of one name, such as a calibration plan run twice, get names of
// their own; the others keep theirs.
func TestLoadTargetsNamesRunsApart(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"before/c1", "after/c1", "x/plan/c2", "y/plan/c2", "other/c4"} {
		require.NoError(t, os.CopyFS(filepath.Join(root, d), os.DirFS("../../testdata/aiperf/qwen_concurrency1")))
	}
	tests := map[string]struct {
		dirs []string
		want []string
	}{
		"by parent": {[]string{"before/c1", "after/c1", "other/c4"}, []string{"before/c1", "after/c1", "c4"}},
		"by path":   {[]string{"x/plan/c2", "y/plan/c2"}, []string{filepath.Join(root, "x/plan/c2"), filepath.Join(root, "y/plan/c2")}},
		"distinct":  {[]string{"before/c1", "other/c4"}, []string{"c1", "c4"}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			var dirs []string
			for _, d := range tt.dirs {
				dirs = append(dirs, filepath.Join(root, d)+"/")
			}
			ts, err := LoadTargets(dirs)
			require.NoError(t, err)
			var got []string
			for _, tg := range ts {
				got = append(got, tg.Name)
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

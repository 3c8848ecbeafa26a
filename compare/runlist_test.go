package compare

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestExpandRuns(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	real := filepath.Join(root, "real")
	for i := range 2 {
		writeSmallRun(t, filepath.Join(real, RepeatDirName(i)), 30, 10)
	}
	runs, err := ExpandRuns(real)
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(real, "run_0001"), filepath.Join(real, "run_0002")}, runs)
	one := filepath.Join(real, "run_0001")
	runs, err = ExpandRuns(one + "," + one)
	require.NoError(t, err)
	assert.Equal(t, []string{one, one}, runs, "a run directory stands for itself")
	empty := filepath.Join(root, "empty")
	require.NoError(t, os.Mkdir(empty, 0o755))
	runs, err = ExpandRuns(empty)
	require.NoError(t, err)
	assert.Equal(t, []string{empty}, runs, "Open reports what is wrong with it")
	_, err = ExpandRuns(real + ",")
	assert.ErrorIs(t, err, ErrEmptyRunListElement)
	ins, err := OpenRuns([]string{one, one})
	require.NoError(t, err)
	assert.Len(t, ins, 2)
	_, err = OpenRuns([]string{empty})
	assert.Error(t, err)
}

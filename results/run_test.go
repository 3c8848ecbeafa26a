package results

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.json")
	require.NoError(t, WriteFile(path, func(w io.Writer) error { _, err := w.Write([]byte("one")); return err }))
	err := WriteFile(path, func(w io.Writer) error {
		_, _ = w.Write([]byte("half"))
		return errors.New("disk full")
	})
	require.ErrorContains(t, err, "disk full")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "one", string(b), "a failed write leaves the old file whole")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file left behind")

	require.NoError(t, WriteBytes(path, []byte("two")))
	b, err = os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "two", string(b))
	require.ErrorContains(t, WriteBytes(filepath.Join(dir, "no", "dir"), []byte("x")), filepath.Join(dir, "no", "dir"))
}

package results

import (
	"io"

	"github.com/simbench/simbench/internal/atomicfile"
)

// WriteFile writes path with write through a temporary file in the same
// directory, renamed into place once complete: the file is whole or absent,
// never half-written (a failed write removes the temporary file and leaves
// an older file untouched). An error names the file.
func WriteFile(path string, write func(io.Writer) error) error {
	return atomicfile.WriteFile(path, write)
}

// WriteBytes writes b to path as WriteFile does: whole or absent.
func WriteBytes(path string, b []byte) error {
	return WriteFile(path, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

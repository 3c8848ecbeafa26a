package results

import "io"

// WriteFile creates path and fills it with write; a write error names the
// file, and the close error is kept when the write succeeded.
func WriteFile(path string, write func(io.Writer) error) error { return writeFile(path, write) }

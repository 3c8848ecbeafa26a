// Package warning prints warnings, the one shape library packages return
// them in: values of type error (as golang.org/x/perf's benchmath does),
// never text written from inside the library. The command and the
// validation pipeline print them with Print.
package warning

import (
	"fmt"
	"io"
)

// Print writes each warning on its own line, "warning: " first, to w;
// a nil w drops them.
func Print(w io.Writer, warnings []error) {
	if w == nil {
		return
	}
	for _, e := range warnings {
		fmt.Fprintf(w, "warning: %v\n", e)
	}
}

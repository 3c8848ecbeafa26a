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

// To is a warn hook, the shape a library takes to hand warnings to its
// caller as they arise: it prints them to w with Print.
func To(w io.Writer) func([]error) {
	return func(ws []error) { Print(w, ws) }
}

package compare

import "fmt"

// Warning is a caveat about a comparison: a unit conversion, a pair that
// could not be compared, requests that did not join. It never stops the
// comparison; renderers print warnings as footnotes.
type Warning struct {
	Msg string
}

func (w Warning) Error() string { return w.Msg }

func warnf(format string, args ...any) Warning {
	return Warning{Msg: fmt.Sprintf(format, args...)}
}

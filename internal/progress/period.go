package progress

import (
	"io"
	"time"
)

// ForTime is the bar for a timed run on w and its update period: every
// 250 ms on a terminal, every 10 s otherwise, every interval when it is
// > 0.
func ForTime(w io.Writer, interval time.Duration) (*Bar, time.Duration) {
	tty := IsTerminal(w)
	every := 10 * time.Second
	if tty {
		every = 250 * time.Millisecond
	}
	if interval > 0 {
		every = interval
	}
	return New(w, tty), every
}

// ForCount is the bar for total items on w and its update period in
// items, or nil when no progress is wanted: quiet, or w is not a terminal
// and force is false. A terminal updates every 0.1%, plain lines every 5%.
func ForCount(w io.Writer, quiet, force bool, total int) (*Bar, int) {
	if quiet {
		return nil, 0
	}
	tty := IsTerminal(w)
	if !tty && !force {
		return nil, 0
	}
	every := max(1, total/20)
	if tty {
		every = max(1, total/1000)
	}
	return New(w, tty), every
}

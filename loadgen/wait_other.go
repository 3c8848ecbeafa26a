//go:build !linux

package loadgen

import "time"

// preciseSleep falls back to time.Sleep; the spin absorbs part of its
// lateness.
func preciseSleep(d time.Duration) { time.Sleep(d) }

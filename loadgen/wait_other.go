//go:build !linux

package loadgen

import "time"

// kicker does nothing here: Go timers alone, which the spin partly
// absorbs.
type kicker struct{}

func newKicker() kicker         { return kicker{} }
func (kicker) at(time.Duration) {}
func (kicker) close()           {}

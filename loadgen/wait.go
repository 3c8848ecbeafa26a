package loadgen

import (
	"context"
	"time"
)

// Waiting strategy. Go timers wake up to about 1 ms late on Linux (the
// netpoller sleeps in whole milliseconds), which alone puts the send-lag p99
// above 1 ms. So the waiter sleeps on a Go timer only while more than
// coarseWait remains (and can then be woken by a completion), sleeps
// precisely (nanosleep with a 1 ns timer slack on Linux) until spin before
// the deadline, and busy-waits the rest.
const (
	coarseWait  = 3 * time.Millisecond
	coarseEarly = 2500 * time.Microsecond // a Go timer wakes at most about this late
	// DefaultSpin is the busy-wait before each deadline. nanosleep wakes
	// within ~15 µs (p50) to ~80 µs (p99) on a loaded 2-vCPU VM.
	DefaultSpin = 50 * time.Microsecond
)

type waitResult int

const (
	waitReached   waitResult = iota // the deadline passed
	waitWoke                        // a completion arrived first (returned)
	waitCancelled                   // ctx ended
)

// waiter waits for deadlines given as offsets from one monotonic start.
type waiter struct {
	start time.Time
	spin  time.Duration
	timer *time.Timer
	spun  time.Duration // total busy-wait: the CPU price of precision
}

func newWaiter(start time.Time, spin time.Duration) *waiter {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &waiter{start: start, spin: max(spin, 0), timer: t}
}

// elapsed is the monotonic offset from the start.
func (w *waiter) elapsed() time.Duration { return time.Since(w.start) }

// until waits for deadline. While the coarse sleep is running, a completion
// on wake or the end of ctx returns early.
func (w *waiter) until(ctx context.Context, deadline time.Duration, wake <-chan completion) (completion, waitResult) {
	for {
		left := deadline - w.elapsed()
		switch {
		case left <= 0:
			return completion{}, waitReached
		case left > coarseWait:
			w.timer.Reset(left - coarseEarly)
			select {
			case <-w.timer.C:
			case c := <-wake:
				w.timer.Stop()
				return c, waitWoke
			case <-ctx.Done():
				w.timer.Stop()
				return completion{}, waitCancelled
			}
		case left > w.spin:
			preciseSleep(left - w.spin)
		default:
			t0 := w.elapsed()
			t := t0
			for t < deadline {
				t = w.elapsed()
			}
			w.spun += t - t0
			return completion{}, waitReached
		}
	}
}

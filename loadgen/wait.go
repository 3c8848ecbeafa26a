package loadgen

import (
	"context"
	"time"
)

// Waiting strategy. The waiter sleeps on a Go timer until spin before each
// deadline and busy-waits the rest. A Go timer alone is precise only while
// the process is busy: its P checks timers at every scheduling round (every
// few microseconds), and the woken driver runs next on that P. In an idle
// process the netpoller sleeps in whole milliseconds (epoll_wait's
// timeout), so the timer would wake up to about 1 ms late; the kicker (a
// timerfd in the netpoller, on Linux) wakes the netpoller at the deadline
// itself. The driver thus never sleeps in a system call of its own: a P
// held in a sleep is retaken by sysmon when the other P is busy, and on a
// saturated client the thread back from the sleep then queues for a P
// behind every runnable stream (send lag p50 about 100 ms at 2,000 req/s x
// 100-token streams on 2 vCPUs with a nanosleep, under 1 ms with this).
const (
	// DefaultSpin is the busy-wait before each deadline: what the
	// netpoller's wake-up takes on a loaded 2-vCPU VM.
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
	start  time.Time
	spin   time.Duration
	timer  *time.Timer
	kick   kicker
	kicked time.Duration // the deadline the kicker is armed for
	spun   time.Duration // total busy-wait: the CPU price of precision
}

func newWaiter(start time.Time, spin time.Duration) *waiter {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &waiter{start: start, spin: max(spin, 0), timer: t, kick: newKicker()}
}

// close releases the kicker.
func (w *waiter) close() { w.kick.close() }

// elapsed is the monotonic offset from the start.
func (w *waiter) elapsed() time.Duration { return time.Since(w.start) }

// until waits for deadline. A completion on wake or the end of ctx returns
// early, but for the final busy-wait.
func (w *waiter) until(ctx context.Context, deadline time.Duration, wake <-chan completion) (completion, waitResult) {
	for {
		left := deadline - w.elapsed()
		switch {
		case left <= 0:
			return completion{}, waitReached
		case left > w.spin:
			if w.kicked != deadline {
				w.kick.at(left - w.spin)
				w.kicked = deadline
			}
			w.timer.Reset(left - w.spin)
			select {
			case <-w.timer.C:
			case c := <-wake:
				w.timer.Stop()
				return c, waitWoke
			case <-ctx.Done():
				w.timer.Stop()
				return completion{}, waitCancelled
			}
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

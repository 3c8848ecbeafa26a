package loadgen

import (
	"syscall"
	"time"
)

// prSetTimerSlack is PR_SET_TIMERSLACK (linux/prctl.h).
const prSetTimerSlack = 29

// preciseSleep sleeps d with nanosleep after setting the calling thread's
// timer slack to 1 ns (the default 50 µs slack would delay every wake-up).
// The slack change stays with the thread; it only makes its timed waits
// more precise.
func preciseSleep(d time.Duration) {
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, 1, 0)
	ts := syscall.NsecToTimespec(int64(d))
	_ = syscall.Nanosleep(&ts, nil)
}

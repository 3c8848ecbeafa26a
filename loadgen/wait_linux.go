package loadgen

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// kicker is a non-blocking timerfd in the Go netpoller's epoll set: when
// it expires, an idle netpoller's epoll_wait returns at once (a readiness
// event), and the runtime then runs the timers due. Nobody reads it; its
// expirations only wake the poller. Without a timerfd (an error creating
// it) the waiter's Go timers wake up to 1 ms late in an idle process.
type kicker struct {
	f  *os.File
	fd int // f's descriptor (f.Fd would make it blocking)
}

func newKicker() kicker {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return kicker{}
	}
	return kicker{f: os.NewFile(uintptr(fd), "timerfd"), fd: fd} // non-blocking: registered with the netpoller
}

// at arms the timerfd to expire d from now (replacing an earlier setting).
func (k kicker) at(d time.Duration) {
	if k.f == nil {
		return
	}
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(max(d, 1)))}
	_ = unix.TimerfdSettime(k.fd, 0, &spec, nil)
}

func (k kicker) close() {
	if k.f != nil {
		_ = k.f.Close()
	}
}

package loadgen

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestKickerExpires: the armed timerfd becomes readable (what wakes the
// netpoller) and not before it is armed.
func TestKickerExpires(t *testing.T) {
	t.Parallel()
	k := newKicker()
	require.NotNil(t, k.f)
	defer k.close()
	fds := []unix.PollFd{{Fd: int32(k.fd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	require.NoError(t, err)
	assert.Zero(t, n, "readable before it was armed")
	k.at(time.Millisecond)
	n, err = unix.Poll(fds, 10_000)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
}

package interrupt

import (
	"bytes"
	"context"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWatch: the first signal cancels; a second within Grace of it (as
// `timeout` sends one to the process and one to its group) is the same
// stop and does not skip the final write; one after Grace exits at once,
// with ForcedExitCode, not the 130 that promises complete files.
func TestWatch(t *testing.T) {
	t.Parallel()
	sigs := make(chan os.Signal)
	var exited atomic.Int32
	exited.Store(-1)
	var errw syncBuffer
	var clock atomic.Int64 // virtual ns since the start
	var reads atomic.Int32 // the watcher reads the clock once per signal it takes
	now := func() time.Time { reads.Add(1); return time.Unix(0, clock.Load()) }
	ctx, stop := Watch(context.Background(), sigs, &errw, func(code int) { exited.Store(int32(code)) }, now)
	defer stop()
	sigs <- syscall.SIGTERM
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("first signal did not cancel")
	}
	assert.Contains(t, errw.String(), "again to exit at once")
	clock.Store(int64(Grace) / 2)
	sigs <- syscall.SIGTERM // taken by the watcher (unbuffered): it has been handled
	sigs <- syscall.SIGINT  // the watcher is back waiting: the previous one was ignored
	// Advance the clock only once the watcher has read it for the SIGINT:
	// read later, the clock would make that signal the exiting one and
	// leave the last send below without a receiver.
	require.Eventually(t, func() bool { return reads.Load() == 3 }, 5*time.Second, time.Millisecond)
	assert.Equal(t, int32(-1), exited.Load(), "a second signal within Grace does not exit")
	clock.Store(int64(Grace) + 1)
	sigs <- syscall.SIGINT
	require.Eventually(t, func() bool { return exited.Load() == ForcedExitCode }, 5*time.Second, time.Millisecond)
	assert.Contains(t, errw.String(), "exiting before the files are complete")
}

// syncBuffer is a bytes.Buffer safe for the watcher's writes and the
// test's reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

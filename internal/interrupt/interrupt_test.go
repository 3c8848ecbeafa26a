package interrupt

import (
	"bytes"
	"context"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWatch(t *testing.T) {
	t.Parallel()
	sigs := make(chan os.Signal, 2)
	var exited atomic.Int32
	// Watch writes its note before it cancels: reading errw after Done is
	// race-free.
	var errw bytes.Buffer
	ctx, stop := Watch(context.Background(), sigs, &errw, func(code int) { exited.Store(int32(code)) })
	defer stop()
	sigs <- syscall.SIGINT
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("first signal did not cancel")
	}
	assert.Contains(t, errw.String(), "again to exit at once")
	assert.Zero(t, exited.Load(), "the first signal does not exit")
	sigs <- syscall.SIGTERM
	require.Eventually(t, func() bool { return exited.Load() == ExitCode }, 5*time.Second, time.Millisecond)
}

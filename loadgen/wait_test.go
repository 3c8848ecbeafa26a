package loadgen

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWaiterNeverEarly: a deadline is reached, never before it, with and
// without the final busy-wait (only lateness depends on the machine).
func TestWaiterNeverEarly(t *testing.T) {
	t.Parallel()
	for _, spin := range []time.Duration{0, DefaultSpin, 5 * time.Millisecond} {
		w := newWaiter(time.Now(), spin)
		for _, d := range []time.Duration{-time.Millisecond, 0, 300 * time.Microsecond, 2 * time.Millisecond, 4 * time.Millisecond} {
			_, res := w.until(context.Background(), d, nil)
			assert.Equal(t, waitReached, res)
			assert.GreaterOrEqual(t, w.elapsed(), d, "spin %v deadline %v", spin, d)
		}
		w.close()
	}
}

// TestWaiterWokeAndCancelled: a completion or the end of ctx ends a long
// wait at once, and the kicker is armed once per deadline.
func TestWaiterWokeAndCancelled(t *testing.T) {
	t.Parallel()
	w := newWaiter(time.Now(), DefaultSpin)
	defer w.close()
	wake := make(chan completion, 1)
	wake <- completion{at: 7}
	c, res := w.until(context.Background(), time.Hour, wake)
	require.Equal(t, waitWoke, res)
	assert.Equal(t, time.Duration(7), c.at)
	assert.Equal(t, time.Hour, w.kicked)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, res = w.until(ctx, time.Hour, wake)
	assert.Equal(t, waitCancelled, res)
}

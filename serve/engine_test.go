package serve

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/sim"
	"github.com/simbench/simbench/traces"
)

// clock is a wall clock the test moves.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// heard collects a request's events.
type heard struct {
	tokens []int64
	rec    *results.Record
}

func (h *heard) Token(at int64)           { h.tokens = append(h.tokens, at) }
func (h *heard) Done(rec *results.Record) { h.rec = rec }

// TestEngineHoldsVirtualTimeToTheClock: with speedup 2, a request arriving
// 10 wall ms after the start enters the simulator at 20 virtual ms; its
// tokens (one 30 ms step each) are heard only once the clock has reached
// their wall times, 15 ms apart.
func TestEngineHoldsVirtualTimeToTheClock(t *testing.T) {
	t.Parallel()
	c := &clock{t: time.Unix(1000, 0)}
	start := c.t
	e, err := newEngine(linearCfg(30), 2, c.now)
	require.NoError(t, err)
	c.t = start.Add(10 * time.Millisecond)
	h := &heard{}
	require.NoError(t, e.submit(traces.Request{InputLength: 8, OutputLength: 3}, h))
	ms := int64(time.Millisecond)
	wantWall := []time.Duration{25 * time.Millisecond, 40 * time.Millisecond, 55 * time.Millisecond}
	for i, w := range wantWall {
		next, ok, err := e.step()
		require.NoError(t, err)
		require.True(t, ok)
		assert.Equal(t, start.Add(w), next, "token %d due", i)
		c.t = start.Add(w - time.Microsecond)
		_, _, err = e.step()
		require.NoError(t, err)
		assert.Len(t, h.tokens, i, "token %d heard before its time", i)
		c.t = start.Add(w)
		_, _, err = e.step()
		require.NoError(t, err)
		require.Len(t, h.tokens, i+1)
		assert.Equal(t, int64(w)*2/ms*ms, h.tokens[i], "token %d's virtual time", i)
	}
	require.NotNil(t, h.rec)
	assert.Equal(t, int64(20*ms), h.rec.StartNs-sim.Epoch)
	_, ok, err := e.step()
	require.NoError(t, err)
	assert.False(t, ok, "nothing left to do")
}

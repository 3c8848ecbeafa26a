package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A stall of 3 ms is due every 10 ms from 5 ms in, in a client of two
// slots. The first two sends due after that, one per slot, each wait the
// whole stall; sends between stalls go out when due, and the next stall
// holds the first two sends due after the next period.
func TestClientStallsHoldEachSlotOnce(t *testing.T) {
	c := newClientStalls(ClientConfig{StallMs: 3, StallEveryMs: 10}, 2)
	phase := c.due
	assert.Equal(t, msToNs(5), phase)
	assert.Equal(t, phase-1, c.hold(phase-1), "before the first stall is due")
	at := phase + msToNs(0.5)
	assert.Equal(t, at+msToNs(3), c.hold(at), "the send that begins the stall waits all of it")
	assert.Equal(t, at+msToNs(5), c.hold(at+msToNs(2)), "the other slot's send waits all of it too")
	assert.Equal(t, at+msToNs(2.5), c.hold(at+msToNs(2.5)), "a third send is not held")
	assert.Equal(t, phase+msToNs(9), c.hold(phase+msToNs(9)), "the next is not due before a period")
	next := phase + msToNs(10.2)
	assert.Equal(t, next+msToNs(3), c.hold(next))
	assert.Equal(t, next+msToNs(4), c.hold(next+msToNs(1)))
	assert.Equal(t, next+msToNs(2), c.hold(next+msToNs(2)))
}

func TestClientStallsNoneWithout(t *testing.T) {
	for _, f := range []ClientConfig{{}, {StallMs: 3}, {StallEveryMs: 10}} {
		c := newClientStalls(f, 1)
		assert.Nil(t, c)
		assert.Equal(t, int64(42), c.hold(42))
	}
}

// In a closed loop of two slots, one request of 2 tokens and one of 4
// (10 ms steps) free their slots at 20 and 40 ms, and the next two go out
// then. A stall due from 15 ms holds both of them, one per slot, for its
// whole length: the slots keep their phase rather than meeting at its end.
func TestClientStallsKeepTheSlotsPhase(t *testing.T) {
	f := ClientConfig{StallMs: 25, StallEveryMs: 30}
	cfg := constCfg("vllm", 10, 0)
	wl := workload(req(0, 2, 2), req(0, 2, 4), req(0, 2, 2), req(0, 2, 2))
	wl.Concurrency = 2
	for i := range wl.Requests {
		wl.Requests[i].HasTimestamp = false
	}
	secondRound := func(c ClientConfig) []float64 {
		cfg.Client = c
		recs, _ := runAll(t, cfg, wl)
		var out []float64
		for _, r := range recs[2:] {
			out = append(out, float64(r.StartNs-Epoch)/1e6)
		}
		return out
	}
	assert.Equal(t, []float64{20, 40}, secondRound(ClientConfig{}))
	assert.Equal(t, []float64{45, 65}, secondRound(f), "the stall began with the send due at 20 ms")
}

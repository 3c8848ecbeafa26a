package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A stall of 3 ms is due every 10 ms from 5 ms in. The first send due
// after that waits the whole stall; the sends due within it go out at its
// end; sends between stalls go out when due, and the next stall begins
// with the first send due after the next period.
func TestClientStallsHoldEverySend(t *testing.T) {
	c := newClientStalls(FrontendConfig{ClientStallMs: 3, ClientStallEveryMs: 10})
	phase := c.due
	assert.Equal(t, msToNs(5), phase)
	assert.Equal(t, phase-1, c.hold(phase-1), "before the first stall is due")
	at := phase + msToNs(0.5)
	end := at + msToNs(3)
	assert.Equal(t, end, c.hold(at), "the send that begins the stall waits all of it")
	assert.Equal(t, end, c.hold(at+msToNs(2)), "a send due within it waits out the rest")
	assert.Equal(t, end+1, c.hold(end+1), "after it, sends go out when due")
	assert.Equal(t, phase+msToNs(9), c.hold(phase+msToNs(9)), "the next is not due before a period")
	next := phase + msToNs(10.2)
	assert.Equal(t, next+msToNs(3), c.hold(next))
}

func TestClientStallsNoneWithout(t *testing.T) {
	for _, f := range []FrontendConfig{{}, {ClientStallMs: 3}, {ClientStallEveryMs: 10}} {
		c := newClientStalls(f)
		assert.Nil(t, c)
		assert.Equal(t, int64(42), c.hold(42))
	}
}

// In a closed loop of two slots, one request of 2 tokens and one of 4
// (10 ms steps) free their slots at 20 and 40 ms, and the next two go out
// then. A stall due from 15 ms holds the first of them, the other comes
// due within it, and both go out together at its end.
func TestClientStallsSendSlotsTogether(t *testing.T) {
	f := FrontendConfig{ClientStallMs: 25, ClientStallEveryMs: 30}
	cfg := constCfg("vllm", 10, 0)
	wl := workload(req(0, 2, 2), req(0, 2, 4), req(0, 2, 2), req(0, 2, 2))
	wl.Concurrency = 2
	for i := range wl.Requests {
		wl.Requests[i].HasTimestamp = false
	}
	secondRound := func(f FrontendConfig) []float64 {
		cfg.Frontend = f
		recs, _ := runAll(t, cfg, wl)
		var out []float64
		for _, r := range recs[2:] {
			out = append(out, float64(r.StartNs-Epoch)/1e6)
		}
		return out
	}
	assert.Equal(t, []float64{20, 40}, secondRound(FrontendConfig{}))
	assert.Equal(t, []float64{45, 45}, secondRound(f), "the stall began with the send due at 20 ms")
}

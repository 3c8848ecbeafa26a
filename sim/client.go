package sim

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/simbench/simbench/pacer"
)

// client is the load generator's own part of the run (the client:
// section): the order in which it sends simultaneous requests, and when a
// slot freed by a response sends again (its gap, then its stalls).
type client struct {
	gap    *clientGap
	stalls *clientStalls // nil: none
	ties   *rand.Rand    // nil: the workload's order
}

// newClient is c's client of slots concurrent sends.
func newClient(c ClientConfig, seed int64, slots int) client {
	cl := client{gap: newClientGap(c, seed), stalls: newClientStalls(c, slots)}
	if c.TieOrder == TieOrderRandom {
		cl.ties = rand.New(rand.NewPCG(uint64(seed), 0x71e5_0bde_7a11))
	}
	return cl
}

// order puts the sends released at one instant in the order they reach
// the frontend: the workload's, or with tie_order random shuffled.
func (c client) order(sends []pacer.Send) {
	if c.ties != nil {
		c.ties.Shuffle(len(sends), func(i, j int) { sends[i], sends[j] = sends[j], sends[i] })
	}
}

// freed is when the slot of a response that reached the client at t
// sends again: after the client's gap, and its stall when one is due.
func (c client) freed(t int64) int64 { return c.stalls.hold(t + c.gap.next()) }

// clientGap draws the load generator's gap after each response: the
// constant client.gap_ms, or, with gap_samples_ms, one of
// those measured gaps at random on its own seeded stream: dealt from a
// shuffled deck of them, so that every gap comes up equally often and the
// mean gap (hence throughput) is kept while the order is random. A real client's gap varies (a few ms, now and then a
// pause of seconds): with a constant one, closed-loop requests that finish
// together start together forever, which no real client does.
type clientGap struct {
	constNs int64
	samples []float64 // ms
	deck    []int
	rng     *rand.Rand
}

func newClientGap(c ClientConfig, seed int64) *clientGap {
	g := &clientGap{constNs: msToNs(c.GapMs), samples: c.GapSamplesMs}
	if len(g.samples) > 0 {
		g.rng = rand.New(rand.NewPCG(uint64(seed), 0xc11e_9a95))
	}
	return g
}

func (g *clientGap) next() int64 {
	if g.rng == nil {
		return g.constNs
	}
	if len(g.deck) == 0 {
		g.deck = g.rng.Perm(len(g.samples))
	}
	i := g.deck[len(g.deck)-1]
	g.deck = g.deck[:len(g.deck)-1]
	return msToNs(g.samples[i])
}

func validateSamples(key string, q []float64) error {
	for i, v := range q {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > 1e7 {
			return fmt.Errorf("%s[%d]: must be a finite number in [0, 1e7], got %g", key, i, v)
		}
	}
	return nil
}

// clientStalls are the load generator's own stalls (client.stall_ms, one
// every stall_every_ms). AIPerf runs each slot in a worker
// process of its own (the exports' worker_id), and a worker's stall holds
// its own sends, not the others': the send it begins waits the whole stall.
// The workers start together and do the same work, so they stall in step:
// a stall is due every period from half a period in, and it holds the
// first sends due from then, one per slot (slots of them), each for its
// whole length. The slots keep their phase. A stall of the whole client,
// which the sends of the slots finishing during it would all wait out,
// makes them send together at its end: in AIPerf's c4 GPU run the groups
// the slots had formed kept their step through the run's two stalls,
// which such a stall would have merged, and stalls of one slot at a time
// would have scattered. Their count decides a run's duration, hence its
// throughput: at a stall or two a run, a Poisson stream moved the
// simulated throughput of AIPerf's c1 and c4 GPU runs by −7 … +11 % from
// seed to seed, and a periodic one at a random phase gives a 30 s run none
// or one (+10 % or right on AIPerf's c8 run); half a period in, a run of R
// ms gets the whole number of them nearest R / period, the count it gets
// on average.
type clientStalls struct {
	lenNs, everyNs int64
	slots          int   // sends a stall holds: one per slot
	due            int64 // the next stall holds the first sends due from here
	left           int   // sends the current stall still holds
}

// newClientStalls gives cc's stalls of a client with slots concurrent
// sends (at least one; an open loop's sessions count as one); nil: none.
func newClientStalls(cc ClientConfig, slots int) *clientStalls {
	if cc.StallMs <= 0 || cc.StallEveryMs <= cc.StallMs {
		return nil
	}
	c := &clientStalls{lenNs: msToNs(cc.StallMs), everyNs: msToNs(cc.StallEveryMs), slots: max(1, slots)}
	c.due = c.everyNs / 2
	return c
}

// hold is when a send due at t goes out: t, or t and a stall's length
// when the stall holds it.
func (c *clientStalls) hold(t int64) int64 {
	if c == nil {
		return t
	}
	if c.left == 0 && t >= c.due {
		for c.due <= t {
			c.due += c.everyNs
		}
		c.left = c.slots
	}
	if c.left == 0 {
		return t
	}
	c.left--
	return t + c.lenNs
}

package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// clientGap draws the load generator's gap after each response: the
// constant frontend.client_gap_ms, or, with client_gap_samples_ms, one of
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

func newClientGap(f FrontendConfig, seed int64) *clientGap {
	g := &clientGap{constNs: msToNs(f.ClientGapMs), samples: f.ClientGapSamplesMs}
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

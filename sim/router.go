package sim

import (
	"math"
	"math/rand/v2"
)

// router picks the worker for a request when it reaches the frontend. It sees
// the workers' exact state (DynoSim's router works from delayed KV events and
// its own bookkeeping of active sequences).
type router interface {
	pick(r *request) int
}

func newRouter(cfg *RouterConfig, workers []*worker, rng *rand.Rand) router {
	switch cfg.Policy {
	case "random":
		return randomRouter{n: len(workers), rng: rng}
	case "least_loaded":
		return leastLoaded{workers: workers}
	case "kv":
		return &kvRouter{workers: workers, weight: cfg.OverlapWeight, temp: cfg.Temperature, rng: rng}
	default:
		return &roundRobin{n: len(workers)}
	}
}

type roundRobin struct{ n, next int }

func (rr *roundRobin) pick(*request) int {
	w := rr.next
	rr.next = (rr.next + 1) % rr.n
	return w
}

type randomRouter struct {
	n   int
	rng *rand.Rand
}

func (r randomRouter) pick(*request) int { return r.rng.IntN(r.n) }

// leastLoaded picks the worker with the fewest active (waiting and running)
// requests; ties go to the lowest index.
type leastLoaded struct{ workers []*worker }

func (l leastLoaded) pick(*request) int {
	best := 0
	for i, w := range l.workers {
		if w.active() < l.workers[best].active() {
			best = i
		}
	}
	return best
}

// kvRouter is Dynamo's KV-aware router (DefaultWorkerSelector):
//
//	cost(w) = overlap_weight × prefill_blocks(w) + decode_blocks(w)
//	prefill_blocks(w) = (prompt tokens still to compute on w + ISL − cached(w)) / block_size
//	decode_blocks(w)  = KV blocks of the requests active on w
//
// where cached(w) is the request's prefix already cached on w. Temperature 0
// takes the cheapest worker (ties at random); above 0 it samples with
// p ∝ exp(−(cost − min)/((max − min)·T)).
type kvRouter struct {
	workers []*worker
	weight  float64
	temp    float64
	rng     *rand.Rand
	cost    []float64
}

func (k *kvRouter) pick(r *request) int {
	k.cost = k.cost[:0]
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, w := range k.workers {
		pending, blocks := w.load()
		cached := w.overlap(r.hashes) * w.bs
		prefill := float64(pending+r.isl-min(cached, r.isl)) / float64(w.bs)
		c := k.weight*prefill + float64(blocks)
		k.cost = append(k.cost, c)
		lo, hi = min(lo, c), max(hi, c)
	}
	if k.temp > 0 && hi > lo {
		return k.sample(lo, hi)
	}
	return k.argmin(lo)
}

func (k *kvRouter) argmin(lo float64) int {
	ties := 0
	for _, c := range k.cost {
		if c == lo {
			ties++
		}
	}
	n := 0
	if ties > 1 {
		n = k.rng.IntN(ties)
	}
	for i, c := range k.cost {
		if c == lo {
			if n == 0 {
				return i
			}
			n--
		}
	}
	return 0
}

func (k *kvRouter) sample(lo, hi float64) int {
	total := 0.0
	for i, c := range k.cost {
		k.cost[i] = math.Exp(-(c - lo) / ((hi - lo) * k.temp))
		total += k.cost[i]
	}
	x := k.rng.Float64() * total
	for i, p := range k.cost {
		if x < p {
			return i
		}
		x -= p
	}
	return len(k.cost) - 1
}

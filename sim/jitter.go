package sim

import (
	"math"
	"math/rand/v2"
)

// jitter is a step's random time around its modelled mean, from a stream
// seeded by the run's seed and the worker, so runs stay deterministic. It
// has two parts, each of mean 1 relative to the model:
//
//   - a lognormal factor of a given coefficient of variation (timing.jitter);
//   - host stalls (timing.stall_ms, stall_cv, stalls_per_step): every step
//     waits out a Poisson number of stalls, each of a lognormal duration of
//     mean stall_ms, and computes for the rest of its modelled mean. A CPU
//     engine on a shared host shows this: its threads meet at a barrier
//     after every operation of a step, and when one of them lost its vCPU
//     the others wait for the host to give it back. On a 2-vCPU VM, four in
//     five decode gaps at concurrency 1 took 4 ms and the fifth 10–45 ms
//     more (at concurrency 4 one in four), and a 40 ms prefill was no
//     likelier to stall than a 4 ms decode: the stalls come per step, not
//     per millisecond of work. Timed inside Ollama's runner they are in
//     llama_decode, with the CPUs 30 % idle; with one ggml thread they
//     vanish.
type jitter struct {
	rng       *rand.Rand
	mu, sigma float64
	stall     float64 // mean ns of a stall
	smu, ssig float64 // a stall's lognormal factor (mean 1): log-mean, log-sd
	perStep   float64 // mean stalls per step
}

// newJitter returns nil when the steps are deterministic.
func newJitter(t TimingConfig, seed int64, worker int) *jitter {
	stalls := t.StallMs > 0 && t.StallsPerStep > 0
	if t.Jitter <= 0 && !stalls {
		return nil
	}
	j := &jitter{rng: rand.New(rand.NewPCG(uint64(seed), 0x6a17_7e40+uint64(worker)))}
	if t.Jitter > 0 {
		s2 := math.Log1p(t.Jitter * t.Jitter)
		j.mu, j.sigma = -s2/2, math.Sqrt(s2)
	}
	if stalls {
		j.stall, j.perStep = t.StallMs*1e6, t.StallsPerStep
		if t.StallCV > 0 {
			s2 := math.Log1p(t.StallCV * t.StallCV)
			j.smu, j.ssig = -s2/2, math.Sqrt(s2)
		}
	}
	return j
}

// apply returns a step of modelled mean ns as drawn (at least 1 ns); a nil
// jitter returns ns unchanged.
func (j *jitter) apply(ns int64) int64 {
	if j == nil {
		return ns
	}
	if j.perStep > 0 {
		return max(1, int64(math.Round(j.stalled(float64(ns)))))
	}
	return max(1, int64(math.Round(float64(ns)*j.factor())))
}

// factor is one lognormal draw of mean 1 (1 without spread).
func (j *jitter) factor() float64 {
	if j.sigma == 0 {
		return 1
	}
	return math.Exp(j.mu + j.sigma*j.rng.NormFloat64())
}

// stalled draws a step of mean d with stalls: its computing part, d less
// the stalls' mean share, spread by the lognormal factor, plus a Poisson
// number of stalls, StallRate of them on average.
func (j *jitter) stalled(d float64) float64 {
	rate := StallRate(d, j.stall, j.perStep)
	out := (d - rate*j.stall) * j.factor()
	for range poisson(j.rng, rate) {
		f := 1.0
		if j.ssig > 0 {
			f = math.Exp(j.smu + j.ssig*j.rng.NormFloat64())
		}
		out += j.stall * f
	}
	return out
}

// maxStallShare is the largest share of a step's mean its stalls may
// take: the rest computes. On the CPU engine at concurrency 1 stalls took
// 55 % of a decode step's mean (4 ms clean of 8.3).
const maxStallShare = 0.8

// StallRate is the mean number of stalls of mean duration stall in a step
// of mean d: perStep, or fewer in a step so short that perStep of them
// would take more than maxStallShare of it, so that its mean stays d. sim
// draws with it and calibrate fits with it.
func StallRate(d, stall, perStep float64) float64 {
	return min(perStep, maxStallShare*d/stall)
}

// poisson draws a Poisson count of a small mean (a step's stalls) by
// Knuth's product of uniforms, from the worker's own stream. math/rand/v2
// has no Poisson sampler, and gonum's distuv.Poisson builds a rand.Rand on
// every draw, an allocation per step in the simulator's step loop.
func poisson(rng *rand.Rand, mean float64) int {
	limit, p, n := math.Exp(-mean), rng.Float64(), 0
	for p > limit {
		n++
		p *= rng.Float64()
	}
	return n
}

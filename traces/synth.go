package traces

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// Synthesis modes (SynthSpec.Mode).
const (
	ModeConcurrency = "concurrency" // closed loop: Concurrency requests in flight, no timestamps
	ModeConstant    = "constant"    // open loop: one request every 1/Rate s
	ModePoisson     = "poisson"     // open loop: exponential inter-arrivals, mean 1/Rate s
	ModeGamma       = "gamma"       // open loop: gamma inter-arrivals, shape GammaShape, mean 1/Rate s
	// ModePoissonSpan is inference-perf's "constant" load type: exponential
	// inter-arrivals rescaled so that a phase's n requests span n/Rate s
	// (Poisson arrivals with their count fixed), not evenly spaced ones.
	ModePoissonSpan = "poisson-span"
)

// maxSynthRequests bounds a synthetic workload (memory safety).
const maxSynthRequests = 10_000_000

// pcgStream is the fixed second PCG word; Seed is the first.
const pcgStream = 0x9e3779b97f4a7c15

// SynthSpec describes a synthetic workload; see Synthesize.
type SynthSpec struct {
	Mode           string  // "concurrency"|"constant"|"poisson"|"gamma"; "" = poisson if Rate > 0, else concurrency
	Concurrency    int     // concurrency mode: requests in flight; rate modes: cap (0 = unlimited)
	RequestCount   int     // measured requests (warmup not included)
	WarmupCount    int     // warmup requests sent first, marked Warmup
	Rate           float64 // req/s (session starts/s when Turns > 1) for rate modes
	GammaShape     float64 // gamma: shape k; 1 = poisson; 0 = 1
	ISL, ISLStddev int     // input length: normal, rounded, clamped >= 1
	OSL, OSLStddev int     // output length: normal, rounded, clamped >= 1
	// ISLRange and OSLRange clip the draws to [min, max] before rounding,
	// as inference-perf's length distributions do; zero is no clip.
	ISLRange, OSLRange [2]int
	SharedPrefixTokens int     // shared prefix length, a multiple of BlockSize
	NumPrefixGroups    int     // number of distinct shared prefixes, default 1
	BlockSize          int     // tokens per hash block, default 512
	Seed               int64   // PCG seed; same spec and seed, same workload
	Turns              int     // turns per session, default 1
	TurnDelayMs        float64 // delay before each later turn
}

// Synthesize generates a deterministic workload from s.
//
// Requests: WarmupCount warmup requests followed by RequestCount measured
// ones, in sessions of Turns turns (a phase's last session may be shorter;
// sessions never mix warmup and measured turns). Sessions are numbered
// "s0", "s1", … when Turns > 1; single-turn requests have no SessionID.
//
// Timing: in concurrency mode no request has a timestamp and Concurrency is
// s.Concurrency. In rate modes each session's first turn gets a timestamp:
// the first at 0 ms, then inter-arrival gaps (constant 1000/Rate ms,
// exponential, or gamma with shape k and mean 1000/Rate ms), rounded to the
// microsecond; Concurrency is a cap. In poisson-span mode each phase
// (warmup, measured) draws one exponential gap per session, the first
// before its first session, and rescales them to sum to sessions/Rate s,
// as inference-perf's constant load timer does for a stage's requests;
// the phase's times then count from its first session. Later turns have
// no timestamp and DelayMs = TurnDelayMs.
//
// Lengths and prefixes: ISL and OSL are drawn from normal distributions.
// hash_ids has ceil(ISL/BlockSize) blocks. Sessions are assigned round-robin
// to NumPrefixGroups groups; the first SharedPrefixTokens/BlockSize blocks of
// a first turn are the group's shared ids (only full blocks are shared, so a
// short request shares fewer), the rest are unique. A later turn's prompt is
// the previous turn's prompt plus a new ISL draw (the model's reply is not
// carried forward, as in AIPerf's history mode): it keeps the previous
// turn's full blocks and adds unique ones.
func Synthesize(s SynthSpec) (*Workload, error) {
	s, err := s.normalized()
	if err != nil {
		return nil, fmt.Errorf("synthesize: %w", err)
	}
	g := &synth{
		spec:   s,
		rng:    rand.New(rand.NewPCG(uint64(s.Seed), pcgStream)),
		nextID: int64(s.NumPrefixGroups) * int64(s.SharedPrefixTokens/s.BlockSize),
	}
	reqs := g.generate()
	return &Workload{
		Requests:    reqs,
		BlockSize:   s.BlockSize,
		Concurrency: s.Concurrency,
		Source:      s.describe(),
		Digest:      ComputeDigest(reqs),
	}, nil
}

// normalized fills defaults and validates; messages use AIPerf's flag names.
func (s SynthSpec) normalized() (SynthSpec, error) {
	s.setDefaults()
	errs := s.modeErrors()
	check := func(bad bool, format string, args ...any) {
		if bad {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	check(s.RequestCount <= 0, "--request-count must be > 0, got %d", s.RequestCount)
	check(s.WarmupCount < 0, "--warmup-request-count must be >= 0, got %d", s.WarmupCount)
	check(s.RequestCount+s.WarmupCount > maxSynthRequests, "at most %d requests (--request-count + --warmup-request-count)", maxSynthRequests)
	check(s.ISL < 1 || s.ISL > MaxTokens, "--isl must be in [1, %d], got %d", MaxTokens, s.ISL)
	check(s.OSL < 1 || s.OSL > MaxTokens, "--osl must be in [1, %d], got %d", MaxTokens, s.OSL)
	check(s.ISLStddev < 0, "--isl-stddev must be >= 0, got %d", s.ISLStddev)
	check(s.OSLStddev < 0, "--osl-stddev must be >= 0, got %d", s.OSLStddev)
	check(badRange(s.ISLRange), "the input length range must be 1 <= min <= max, got %d..%d", s.ISLRange[0], s.ISLRange[1])
	check(badRange(s.OSLRange), "the output length range must be 1 <= min <= max, got %d..%d", s.OSLRange[0], s.OSLRange[1])
	check(s.BlockSize < 1, "--hash-block-size must be > 0, got %d", s.BlockSize)
	check(s.NumPrefixGroups < 1, "--num-prefix-groups must be > 0, got %d", s.NumPrefixGroups)
	check(s.Turns < 1, "--turns must be > 0, got %d", s.Turns)
	check(!finiteNonNeg(s.TurnDelayMs), "--turn-delay-ms must be a finite number >= 0, got %v", s.TurnDelayMs)
	check(s.SharedPrefixTokens < 0, "--shared-prefix-tokens must be >= 0, got %d", s.SharedPrefixTokens)
	check(s.BlockSize > 0 && s.SharedPrefixTokens%s.BlockSize != 0,
		"--shared-prefix-tokens (%d) must be a multiple of --hash-block-size (%d): only whole blocks can be shared",
		s.SharedPrefixTokens, s.BlockSize)
	return s, errors.Join(errs...)
}

func (s *SynthSpec) setDefaults() {
	if s.Mode == "" {
		s.Mode = ModeConcurrency
		if s.Rate > 0 {
			s.Mode = ModePoisson
		}
	}
	if s.GammaShape == 0 {
		s.GammaShape = 1
	}
	if s.BlockSize == 0 {
		s.BlockSize = MooncakeBlockSize
	}
	if s.NumPrefixGroups == 0 {
		s.NumPrefixGroups = 1
	}
	if s.Turns == 0 {
		s.Turns = 1
	}
}

func (s SynthSpec) modeErrors() []error {
	var errs []error
	switch s.Mode {
	case ModeConcurrency:
		if err := CheckConcurrency(s.Concurrency, true); err != nil {
			errs = append(errs, err)
		}
		if s.Rate != 0 {
			errs = append(errs, fmt.Errorf("--request-rate (%v) is not used in concurrency mode; use --arrival-pattern", s.Rate))
		}
	case ModeConstant, ModePoisson, ModeGamma, ModePoissonSpan:
		if !finiteNonNeg(s.Rate) || s.Rate == 0 {
			errs = append(errs, fmt.Errorf("--request-rate must be > 0 for --arrival-pattern %s, got %v", s.Mode, s.Rate))
		}
		if err := CheckConcurrency(s.Concurrency, false); err != nil {
			errs = append(errs, err)
		}
		if !finiteNonNeg(s.GammaShape) {
			errs = append(errs, fmt.Errorf("--gamma-shape must be > 0, got %v", s.GammaShape))
		}
	default:
		errs = append(errs, fmt.Errorf("--arrival-pattern must be constant, poisson or gamma (or mode concurrency), got %q", s.Mode))
	}
	return errs
}

// MaxConcurrency bounds the requests in flight, far beyond one client's
// connections (as sim's workers are bounded): a typo such as --concurrency
// 1000000000 would otherwise allocate a slot per request in flight until
// the process is killed.
const MaxConcurrency = 1 << 16

// CheckConcurrency checks a closed loop's requests in flight (closed: in
// [1, MaxConcurrency]) or a rate mode's cap (in [0, MaxConcurrency], 0 = no
// cap).
func CheckConcurrency(n int, closed bool) error {
	switch {
	case closed && n <= 0:
		return fmt.Errorf("--concurrency must be > 0 in concurrency mode, got %d", n)
	case n < 0:
		return fmt.Errorf("--concurrency must be >= 0 (0 = no cap), got %d", n)
	case n > MaxConcurrency:
		return fmt.Errorf("--concurrency must be at most %d requests in flight, got %d", MaxConcurrency, n)
	}
	return nil
}

func finiteNonNeg(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) && v >= 0 }

func (s SynthSpec) describe() string {
	load := fmt.Sprintf("concurrency=%d", s.Concurrency)
	if s.Mode != ModeConcurrency {
		load = fmt.Sprintf("rate=%g cap=%d", s.Rate, s.Concurrency)
		if s.Mode == ModeGamma {
			load += fmt.Sprintf(" shape=%g", s.GammaShape)
		}
	}
	return fmt.Sprintf("synthetic:%s %s requests=%d warmup=%d isl=%d±%d osl=%d±%d shared_prefix=%dx%d block=%d turns=%d delay=%gms seed=%d",
		s.Mode, load, s.RequestCount, s.WarmupCount, s.ISL, s.ISLStddev, s.OSL, s.OSLStddev,
		s.SharedPrefixTokens, s.NumPrefixGroups, s.BlockSize, s.Turns, s.TurnDelayMs, s.Seed) + describeRanges(s)
}

// badRange reports a length clip that is set but empty or below 1.
func badRange(r [2]int) bool {
	return r != [2]int{} && (r[0] < 1 || r[1] < r[0])
}

// describeRanges names the length clips that are set.
func describeRanges(s SynthSpec) string {
	var out string
	for _, r := range []struct {
		name string
		span [2]int
	}{{"isl_range", s.ISLRange}, {"osl_range", s.OSLRange}} {
		if r.span != [2]int{} {
			out += fmt.Sprintf(" %s=%d..%d", r.name, r.span[0], r.span[1])
		}
	}
	return out
}

// synth holds the generator state.
type synth struct {
	spec     SynthSpec
	rng      *rand.Rand
	nextID   int64
	clockMs  float64
	sessions int
	span     []float64 // poisson-span: the current phase's start times, ms, by session from the phase's first
	spanFrom int       // the session span[0] is of
}

func (g *synth) generate() []Request {
	s := g.spec
	reqs := make([]Request, 0, s.WarmupCount+s.RequestCount)
	for _, phase := range []struct {
		n      int
		warmup bool
	}{{s.WarmupCount, true}, {s.RequestCount, false}} {
		if s.Mode == ModePoissonSpan {
			g.drawSpan(ceilDiv(phase.n, s.Turns))
		}
		for left := phase.n; left > 0; {
			turns := min(s.Turns, left)
			reqs = g.session(reqs, turns, phase.warmup)
			left -= turns
		}
	}
	return reqs
}

// session appends one session of turns requests.
func (g *synth) session(reqs []Request, turns int, warmup bool) []Request {
	s := g.spec
	k := g.sessions
	g.sessions++
	id := ""
	if s.Turns > 1 {
		id = fmt.Sprintf("s%d", k)
	}
	ts, hasTs := g.arrival(k)
	var prev *Request
	for t := 0; t < turns; t++ {
		r := Request{
			Row: len(reqs), SessionID: id, Turn: t, Warmup: warmup,
			OutputLength: g.length(s.OSL, s.OSLStddev, s.OSLRange),
		}
		add := g.length(s.ISL, s.ISLStddev, s.ISLRange)
		if t == 0 {
			r.TimestampMs, r.HasTimestamp = ts, hasTs
			r.InputLength = add
			r.HashIDs = g.firstHashIDs(add, k%s.NumPrefixGroups)
		} else {
			r.DelayMs = s.TurnDelayMs
			r.InputLength = min(prev.InputLength+add, MaxTokens)
			r.HashIDs = g.extendHashIDs(prev, r.InputLength)
		}
		reqs = append(reqs, r)
		prev = &reqs[len(reqs)-1]
	}
	return reqs
}

// arrival returns the k-th session's start time in rate modes.
func (g *synth) arrival(k int) (float64, bool) {
	s := g.spec
	if s.Mode == ModeConcurrency {
		return 0, false
	}
	mean := 1000 / s.Rate
	switch {
	case s.Mode == ModePoissonSpan:
		g.clockMs = g.span[k-g.spanFrom] // the phase's, drawn whole (drawSpan)
	case k == 0:
	case s.Mode == ModeConstant:
		g.clockMs += mean
	case s.Mode == ModePoisson:
		g.clockMs += g.rng.ExpFloat64() * mean
	case s.Mode == ModeGamma:
		g.clockMs += gammaSample(g.rng, s.GammaShape) * mean / s.GammaShape
	}
	return math.Round(g.clockMs*1000) / 1000, true // µs precision keeps files readable
}

// drawSpan draws the start times of the next n sessions (a phase) in
// poisson-span mode, as inference-perf's constant load timer does: n
// exponential gaps, the first before the first session, rescaled to sum
// to n/Rate s. The times count from the first session, so the phase spans
// its duration less its first gap. A phase's times are drawn before its
// sessions' lengths: the rescaling needs every gap.
func (g *synth) drawSpan(n int) {
	g.spanFrom, g.span = g.sessions, g.span[:0]
	if n == 0 {
		return
	}
	gaps := make([]float64, n)
	var total float64
	for i := range gaps {
		gaps[i] = g.rng.ExpFloat64()
		total += gaps[i]
	}
	scale := float64(n) * 1000 / g.spec.Rate / total
	g.span = append(g.span, 0)
	for i, at := 1, 0.0; i < n; i++ {
		at += gaps[i] * scale
		g.span = append(g.span, at)
	}
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// length draws round(N(mean, stddev)) clamped to [1, MaxTokens].
// length draws a length of the normal distribution (mean, stddev),
// clipped to span when it is set, rounded, and at least 1.
func (g *synth) length(mean, stddev int, span [2]int) int {
	if stddev == 0 {
		return mean
	}
	v := float64(mean) + float64(stddev)*g.rng.NormFloat64()
	if span != [2]int{} {
		v = math.Max(float64(span[0]), math.Min(v, float64(span[1])))
	}
	return int(math.Max(1, math.Min(math.Round(v), MaxTokens)))
}

func (g *synth) firstHashIDs(isl, group int) []int64 {
	bs := g.spec.BlockSize
	shared := min(g.spec.SharedPrefixTokens/bs, isl/bs)
	ids := make([]int64, blocksFor(isl, bs))
	for j := range ids {
		if j < shared {
			ids[j] = int64(group)*int64(g.spec.SharedPrefixTokens/bs) + int64(j)
			continue
		}
		ids[j] = g.take()
	}
	return ids
}

func (g *synth) extendHashIDs(prev *Request, isl int) []int64 {
	bs := g.spec.BlockSize
	keep := prev.InputLength / bs
	ids := make([]int64, blocksFor(isl, bs))
	copy(ids, prev.HashIDs[:keep])
	for j := keep; j < len(ids); j++ {
		ids[j] = g.take()
	}
	return ids
}

func (g *synth) take() int64 {
	id := g.nextID
	g.nextID++
	return id
}

// gammaSample draws from Gamma(shape k, scale 1) by Marsaglia and Tsang's
// method (with the U^(1/k) boost for k < 1).
func gammaSample(rng *rand.Rand, k float64) float64 {
	if k < 1 {
		return gammaSample(rng, k+1) * math.Pow(rng.Float64(), 1/k)
	}
	d := k - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := rng.Float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}

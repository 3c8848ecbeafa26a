package traces

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// AgenticSpec describes synthetic agent sessions; see SynthesizeAgentic.
type AgenticSpec struct {
	// Base gives the arrivals (Mode, Concurrency, Rate, GammaShape), the
	// first prompt of an agent (ISL, ISLStddev: normal), every turn's
	// output (OSL, OSLStddev: normal), BlockSize and Seed; its RequestCount,
	// WarmupCount, Turns, TurnDelayMs and shared prefixes are not used.
	Base     SynthSpec
	Sessions int // agent sessions
	// Turns is the mean number of turns of a session's main agent, and
	// SubTurns that of a sub-agent: 1 + Poisson(mean − 1).
	Turns, SubTurns float64
	// FanOutProb is the chance that a main-agent turn other than the last
	// spawns sub-agents, FanOut their mean number: 1 + Poisson(FanOut − 1).
	// The main agent's next turn waits for all of them.
	FanOutProb, FanOut float64
	// ToolDelayMs is the median tool wait before a later turn (after the
	// turns it waits for end): lognormal with log-space σ ToolDelaySigma
	// (0: always the median). A sub-agent's first turn starts at once.
	ToolDelayMs, ToolDelaySigma float64
	// NewTokens is the median number of tokens a later turn adds to the
	// context it continues (a tool result, the sub-agents' reports):
	// lognormal with log-space σ NewTokensSigma, at least 1.
	NewTokens      int
	NewTokensSigma float64
}

// DefaultAgentic holds the defaults of trace synth --agentic's flags.
var DefaultAgentic = AgenticSpec{Sessions: 20, Turns: 8, SubTurns: 3, FanOutProb: 0.25, FanOut: 2,
	ToolDelayMs: 1000, ToolDelaySigma: 1, NewTokens: 300, NewTokensSigma: 1}

// Bounds of the agentic distributions' parameters (memory safety).
const (
	maxAgentTurns  = 500
	maxAgentFanOut = 64
	maxSigma       = 10
)

// SynthesizeAgentic generates a deterministic workload of agent sessions:
// each session's main agent runs its turns one after another; a turn
// continues the previous turn's context (its prompt plus its output) with
// NewTokens more, after a tool wait. After a main-agent turn, with
// probability FanOutProb, sub-agents start at once, each with a fresh
// context (a first prompt of its own) and turns of its own; the main
// agent's next turn waits for their last turns (a join) and continues the
// main agent's own context. Prompts are prefix-consistent hash_ids
// (BuildSession). Sessions are "agent-0", "agent-1", …; in rate modes each
// session's first turn has a timestamp from the arrival pattern, in
// concurrency mode none (Concurrency caps sessions in flight).
func SynthesizeAgentic(a AgenticSpec) (*Workload, error) {
	if err := a.validate(); err != nil {
		return nil, fmt.Errorf("synthesize --agentic: %w", err)
	}
	base := a.Base
	base.RequestCount, base.WarmupCount, base.Turns, base.TurnDelayMs = 1, 0, 1, 0
	base.SharedPrefixTokens, base.NumPrefixGroups = 0, 1
	base, err := base.normalized()
	if err != nil {
		return nil, fmt.Errorf("synthesize --agentic: %w", err)
	}
	a.Base = base
	g := &agentSynth{spec: a, synth: synth{spec: base, rng: rand.New(rand.NewPCG(uint64(base.Seed), pcgStream))}}
	reqs, err := g.generate()
	if err != nil {
		return nil, fmt.Errorf("synthesize --agentic: %w", err)
	}
	return &Workload{Requests: reqs, BlockSize: base.BlockSize, Concurrency: base.Concurrency,
		Source: a.describe(), Digest: ComputeDigest(reqs)}, nil
}

func (a AgenticSpec) validate() error {
	var errs []error
	check := func(bad bool, format string, args ...any) {
		if bad {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	within := func(v, lo, hi float64) bool { return v >= lo && v <= hi } // false for NaN
	check(a.Sessions < 1 || a.Sessions > maxSynthRequests, "--num-conversations must be in [1, %d], got %d", maxSynthRequests, a.Sessions)
	check(!within(a.Turns, 1, maxAgentTurns), "--agent-turns must be in [1, %d], got %v", maxAgentTurns, a.Turns)
	check(!within(a.SubTurns, 1, maxAgentTurns), "--agent-subturns must be in [1, %d], got %v", maxAgentTurns, a.SubTurns)
	check(!within(a.FanOutProb, 0, 1), "--agent-fanout-prob must be in [0, 1], got %v", a.FanOutProb)
	check(!within(a.FanOut, 1, maxAgentFanOut), "--agent-fanout must be in [1, %d], got %v", maxAgentFanOut, a.FanOut)
	check(!within(a.ToolDelayMs, 0, 24*3600e3), "--tool-delay-ms must be in [0, 86400000] (a day), got %v", a.ToolDelayMs)
	check(!within(a.ToolDelaySigma, 0, maxSigma), "--tool-delay-sigma must be in [0, %d], got %v", maxSigma, a.ToolDelaySigma)
	check(a.NewTokens < 1 || a.NewTokens > MaxTokens, "--new-tokens must be in [1, %d], got %d", MaxTokens, a.NewTokens)
	check(!within(a.NewTokensSigma, 0, maxSigma), "--new-tokens-sigma must be in [0, %d], got %v", maxSigma, a.NewTokensSigma)
	return errors.Join(errs...)
}

func (a AgenticSpec) describe() string {
	b := a.Base
	load := fmt.Sprintf("concurrency=%d", b.Concurrency)
	if b.Mode != ModeConcurrency {
		load = fmt.Sprintf("%s rate=%g cap=%d", b.Mode, b.Rate, b.Concurrency)
	}
	return fmt.Sprintf("synthetic:agentic %s sessions=%d turns=%g subturns=%g fanout=%g@%g tool_delay=%gms·σ%g "+
		"new_tokens=%d·σ%g isl=%d±%d osl=%d±%d block=%d seed=%d", load, a.Sessions, a.Turns, a.SubTurns, a.FanOut,
		a.FanOutProb, a.ToolDelayMs, a.ToolDelaySigma, a.NewTokens, a.NewTokensSigma, b.ISL, b.ISLStddev,
		b.OSL, b.OSLStddev, b.BlockSize, b.Seed)
}

// agentSynth draws agent sessions; synth gives arrivals and lengths.
type agentSynth struct {
	spec  AgenticSpec
	synth synth
	next  int64 // next fresh hash id
}

func (g *agentSynth) generate() ([]Request, error) {
	var reqs []Request
	for k := range g.spec.Sessions {
		ts, hasTs := g.synth.arrival(k)
		specs := g.session()
		if len(reqs)+len(specs) > maxSynthRequests {
			return nil, fmt.Errorf("more than %d requests: fewer --num-conversations or --agent-turns", maxSynthRequests)
		}
		sess, err := BuildSession(fmt.Sprintf("agent-%d", k), specs, g.spec.Base.BlockSize, &g.next)
		if err != nil {
			return nil, err
		}
		sess[0].TimestampMs, sess[0].HasTimestamp = ts, hasTs
		for i := range sess {
			if sess[i].InputLength > MaxTokens {
				return nil, fmt.Errorf("session agent-%d turn %d: the context grows to %d tokens, more than %d: fewer --agent-turns or --new-tokens",
					k, i, sess[i].InputLength, MaxTokens)
			}
			sess[i].Row = len(reqs)
			reqs = append(reqs, sess[i])
		}
	}
	return reqs, nil
}

// session draws one session's turns: the main agent's, each followed by
// the sub-agents it spawns.
func (g *agentSynth) session() []TurnSpec {
	a, b := &g.spec, &g.spec.Base
	turns := 1 + g.poisson(a.Turns-1)
	specs := []TurnSpec{{NewTokens: g.synth.length(b.ISL, b.ISLStddev, b.ISLRange), OutputLength: g.synth.length(b.OSL, b.OSLStddev, b.OSLRange)}}
	prev := 0
	for t := 1; t < turns; t++ {
		parents := []int{prev}
		if g.synth.rng.Float64() < a.FanOutProb {
			for range 1 + g.poisson(a.FanOut-1) {
				specs = g.subAgent(specs, prev)
				parents = append(parents, len(specs)-1)
			}
		}
		slices.Sort(parents)
		ctx := prev
		specs = append(specs, TurnSpec{Parents: parents, Context: &ctx, NewTokens: g.newTokens(),
			OutputLength: g.synth.length(b.OSL, b.OSLStddev, b.OSLRange), DelayMs: g.toolDelay()})
		prev = len(specs) - 1
	}
	return specs
}

// subAgent appends a sub-agent spawned when turn parent ends.
func (g *agentSynth) subAgent(specs []TurnSpec, parent int) []TurnSpec {
	b := &g.spec.Base
	specs = append(specs, TurnSpec{Parents: []int{parent}, Fresh: true,
		NewTokens: g.synth.length(b.ISL, b.ISLStddev, b.ISLRange), OutputLength: g.synth.length(b.OSL, b.OSLStddev, b.OSLRange)})
	for range g.poisson(g.spec.SubTurns - 1) {
		specs = append(specs, TurnSpec{Parents: []int{len(specs) - 1}, NewTokens: g.newTokens(),
			OutputLength: g.synth.length(b.OSL, b.OSLStddev, b.OSLRange), DelayMs: g.toolDelay()})
	}
	return specs
}

// poisson draws from Poisson(mean) by Knuth's product of uniforms (mean
// is at most maxAgentTurns, so exp(−mean) stays a normal float).
func (g *agentSynth) poisson(mean float64) int {
	limit, k := math.Exp(-mean), 0
	for p := g.synth.rng.Float64(); p > limit; p *= g.synth.rng.Float64() {
		k++
	}
	return k
}

// lognormal draws median·exp(σ·N(0, 1)).
func (g *agentSynth) lognormal(median, sigma float64) float64 {
	if sigma == 0 {
		return median
	}
	return median * math.Exp(sigma*g.synth.rng.NormFloat64())
}

func (g *agentSynth) toolDelay() float64 {
	return math.Round(g.lognormal(g.spec.ToolDelayMs, g.spec.ToolDelaySigma)*1000) / 1000 // µs
}

func (g *agentSynth) newTokens() int {
	v := math.Round(g.lognormal(float64(g.spec.NewTokens), g.spec.NewTokensSigma))
	return int(math.Max(1, math.Min(v, MaxTokens)))
}

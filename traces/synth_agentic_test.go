package traces

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func agenticSpec(mut func(*AgenticSpec)) AgenticSpec {
	a := DefaultAgentic
	a.Base = SynthSpec{Mode: ModeConcurrency, Concurrency: 4, ISL: 800, ISLStddev: 100, OSL: 120, OSLStddev: 30, BlockSize: 64, Seed: 7}
	if mut != nil {
		mut(&a)
	}
	return a
}

// TestSynthesizeAgenticDeterministic: one spec and seed, one workload; a
// different seed, a different one; the file reads back unchanged.
func TestSynthesizeAgenticDeterministic(t *testing.T) {
	a, err := SynthesizeAgentic(agenticSpec(nil))
	require.NoError(t, err)
	b, err := SynthesizeAgentic(agenticSpec(nil))
	require.NoError(t, err)
	assert.Equal(t, a, b)
	c, err := SynthesizeAgentic(agenticSpec(func(s *AgenticSpec) { s.Base.Seed = 8 }))
	require.NoError(t, err)
	assert.NotEqual(t, a.Digest, c.Digest)
	assert.Equal(t, 4, a.Concurrency)
	require.NoError(t, CheckParents(a.Requests))
	assertRoundTrip(t, a)
}

// TestSynthesizeAgenticShape: the drawn sessions follow the distributions
// (means within a few standard errors over many sessions), sub-agents start
// when their parent ends with a fresh context, and the main agent's next
// turn joins them and continues its own context.
func TestSynthesizeAgenticShape(t *testing.T) {
	const sessions = 2000
	wl, err := SynthesizeAgentic(agenticSpec(func(s *AgenticSpec) {
		s.Sessions, s.ToolDelaySigma, s.NewTokensSigma = sessions, 0, 0
	}))
	require.NoError(t, err)
	info := Describe(wl).Agentic
	require.NotNil(t, info)
	// A session has 1 + Poisson(7) main turns, each of the 7 later ones
	// preceded with p = 0.25 by 1 + Poisson(1) sub-agents of 1 + Poisson(2)
	// turns: 8 + 7·0.25·2·3 = 18.5 turns on average.
	assert.InDelta(t, 18.5, meanTurns(wl, sessions), 0.6)
	assert.InDelta(t, 1000, info.ToolWaitMs.P50, 1e-9, "σ 0: every later turn waits the median")
	joins := 0
	for i, r := range wl.Requests {
		if len(r.Parents) < 2 {
			continue
		}
		joins++
		main := &wl.Requests[i-r.Turn+r.Parents[0]]
		assert.Equal(t, main.InputLength+main.OutputLength+300, r.InputLength, "a join continues the main agent's context")
		assert.Equal(t, main.HashIDs, r.HashIDs[:len(main.HashIDs)])
		for _, p := range r.Parents[1:] {
			assert.Greater(t, p, r.Parents[0], "sub-agents are spawned after the main turn they join")
			assert.NotEqual(t, wl.Requests[i-r.Turn].HashIDs[0], wl.Requests[i-r.Turn+p].HashIDs[0], "a sub-agent's context is its own")
		}
	}
	assert.InDelta(t, 0.25*7*sessions, float64(joins), 0.1*0.25*7*sessions, "7 later main turns a session, a quarter of them joins")
}

func meanTurns(wl *Workload, sessions int) float64 {
	return float64(len(wl.Requests)) / float64(sessions)
}

func TestSynthesizeAgenticErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		mut  func(*AgenticSpec)
		want string
	}{
		{"sessions", func(s *AgenticSpec) { s.Sessions = 0 }, "--num-conversations must be in [1, 10000000], got 0"},
		{"turns", func(s *AgenticSpec) { s.Turns = math.NaN() }, "--agent-turns must be in [1, 500], got NaN"},
		{"fan-out", func(s *AgenticSpec) { s.FanOutProb = 2 }, "--agent-fanout-prob must be in [0, 1], got 2"},
		{"sigma", func(s *AgenticSpec) { s.ToolDelaySigma = -1 }, "--tool-delay-sigma must be in [0, 10], got -1"},
		{"closed loop", func(s *AgenticSpec) { s.Base.Concurrency = 0 }, "--concurrency must be > 0 in concurrency mode, got 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := SynthesizeAgentic(agenticSpec(tc.mut))
			require.ErrorContains(t, err, tc.want)
		})
	}
}

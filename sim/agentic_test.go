package sim

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/traces"
)

// TestAgentContextReuse: an agent session whose context grows turn by turn
// (traces.BuildSession, 64-token trace blocks) on one worker with prefix
// caching (16-token engine blocks): turn n's cache hit is turn n−1's whole
// prompt, aligned down to the engine block.
func TestAgentContextReuse(t *testing.T) {
	next := int64(1)
	reqs, err := traces.BuildSession("agent", []traces.TurnSpec{
		{NewTokens: 100, OutputLength: 7},
		{NewTokens: 50, OutputLength: 9, DelayMs: 3},
		{NewTokens: 3, OutputLength: 20, DelayMs: 1},
		{NewTokens: 200, OutputLength: 2},
	}, 64, &next)
	require.NoError(t, err)
	wl := workload(reqs...)
	wl.BlockSize, wl.Concurrency = 64, 1
	cfg := constCfg("vllm", 1, 0.01)
	cfg.Engine.EnablePrefixCaching = true
	recs, _ := runAll(t, cfg, wl)
	var hits, want []int
	for i, r := range recs {
		hits = append(hits, r.Sim.CachedTokens)
		if i > 0 {
			want = append(want, reqs[i-1].InputLength/16*16)
		} else {
			want = append(want, 0)
		}
	}
	assert.Equal(t, []int{100, 157, 169, 389}, []int{reqs[0].InputLength, reqs[1].InputLength, reqs[2].InputLength, reqs[3].InputLength})
	assert.Equal(t, want, hits)
	assert.Equal(t, []int{0, 96, 144, 160}, hits)
}

// TestAgentDAGDeterministic: an agent session with sub-agent branches and
// a join, replayed twice with the same seed, gives the same records.
func TestAgentDAGDeterministic(t *testing.T) {
	next := int64(1)
	var reqs []traces.Request
	for _, id := range []string{"a", "b", "c"} {
		s, err := traces.BuildSession(id, []traces.TurnSpec{
			{NewTokens: 300, OutputLength: 20},
			{Parents: []int{0}, NewTokens: 80, OutputLength: 30, DelayMs: 40},
			{Parents: []int{0}, NewTokens: 120, OutputLength: 10, DelayMs: 15},
			{Parents: []int{1, 2}, NewTokens: 50, OutputLength: 5, DelayMs: 25},
		}, 16, &next)
		require.NoError(t, err)
		reqs = append(reqs, s...)
	}
	run := func() []string {
		wl := workload(slices.Clone(reqs)...)
		wl.Concurrency = 2
		cfg := DefaultConfig()
		cfg.Engine.BlockSize, cfg.Workers = 16, 2
		recs, _ := runAll(t, cfg, wl)
		var out []string
		for _, r := range recs {
			out = append(out, fmt.Sprintf("%d %s %d %d %d %d", r.TraceRow, r.Worker, r.IntendedNs, r.StartNs, r.EndNs, r.Sim.CachedTokens))
		}
		return out
	}
	first := run()
	assert.Equal(t, first, run())
}

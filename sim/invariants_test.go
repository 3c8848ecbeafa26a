package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/servermetrics"
	"github.com/simbench/simbench/traces"
)

// randomWorkload mixes open-loop single requests, multi-turn sessions with
// delays, prompts sharing prefixes, and a few warmup requests.
func randomWorkload(seed uint64, n int, closed bool) *traces.Workload {
	rng := rand.New(rand.NewPCG(seed, 1))
	var reqs []traces.Request
	warm := rng.IntN(3)
	for i := 0; len(reqs) < n; i++ {
		turns := 1
		if rng.IntN(4) == 0 && len(reqs) >= warm { // warmup sessions are single-turn
			turns = 2 + rng.IntN(3)
		}
		at := rng.Float64() * 20000
		var ids []int64
		for t := 0; t < turns && len(reqs) < n; t++ {
			isl := 1 + rng.IntN(2000)
			ids = prefixIDs(rng, ids, isl)
			r := traces.Request{InputLength: isl, OutputLength: 1 + rng.IntN(200), HashIDs: ids,
				Warmup: len(reqs) < warm}
			if turns > 1 {
				r.SessionID, r.Turn = fmt.Sprintf("s%d", i), t
				if t > 0 {
					r.DelayMs = rng.Float64() * 500
				}
			}
			if !closed && t == 0 {
				r.TimestampMs, r.HasTimestamp = at, true
			}
			reqs = append(reqs, r)
		}
	}
	wl := workload(reqs...)
	if closed {
		wl.Concurrency = 1 + rng.IntN(16)
	} else if rng.IntN(2) == 0 {
		wl.Concurrency = 1 + rng.IntN(16)
	}
	return wl
}

// prefixIDs returns hash ids for isl tokens at 16 per block: a shared
// system prompt, the previous turn's blocks when growing, then fresh ids.
func prefixIDs(rng *rand.Rand, prev []int64, isl int) []int64 {
	n := (isl + 15) / 16
	ids := make([]int64, 0, n)
	if len(prev) > 0 && len(prev) < n {
		ids = append(ids, prev...)
	} else {
		for k := 0; k < min(n, 3); k++ {
			ids = append(ids, int64(rng.IntN(2)*100+k))
		}
	}
	for len(ids) < n {
		ids = append(ids, 1_000_000+rng.Int64N(1<<40))
	}
	return ids[:n]
}

// checkSteps verifies the engines' accounting after every step boundary
// (plain comparisons: it runs thousands of times).
func checkSteps(t *testing.T) Option {
	return withHook(func(s *simulator) {
		for _, w := range s.workers {
			if msg := stepViolation(s, w); msg != "" {
				t.Fatalf("%s at %d ns: %s", w.name, s.now, msg)
			}
		}
	})
}

func stepViolation(s *simulator, w *worker) string {
	if len(w.running) > max(s.cfg.Engine.MaxNumSeqs, s.cfg.Engine.LlamaCpp.Parallel) {
		return fmt.Sprintf("%d running requests", len(w.running))
	}
	if w.kv == nil {
		for _, sl := range w.slots {
			if sl.req != nil && sl.req.computed > w.slotCtx {
				return fmt.Sprintf("slot holds %d tokens > %d", sl.req.computed, w.slotCtx)
			}
		}
		return ""
	}
	if !w.kv.check() {
		return fmt.Sprintf("KV held %d idle %d capacity %d", w.kv.held, w.kv.idle, w.kv.capacity)
	}
	private := 0
	for _, r := range w.running {
		private += r.private
	}
	if private > w.kv.held {
		return fmt.Sprintf("running requests hold %d private blocks > %d held", private, w.kv.held)
	}
	return ""
}

func TestInvariantsRandomWorkloads(t *testing.T) {
	engines := []string{"vllm", "sglang", "llamacpp"}
	routers := []string{"round_robin", "random", "least_loaded", "kv"}
	for seed := uint64(1); seed <= 12; seed++ {
		engine, router := engines[seed%3], routers[seed%4]
		t.Run(fmt.Sprintf("%d-%s-%s", seed, engine, router), func(t *testing.T) {
			wl := randomWorkload(seed, 150, seed%5 == 0)
			cfg := DefaultConfig()
			cfg.Seed = int64(seed)
			cfg.Workers = 1 + int(seed%3)
			cfg.Engine.Type, cfg.Router.Policy = engine, router
			cfg.Engine.BlockSize = []int{16, 32, 48}[seed%3]
			cfg.Engine.NumGPUBlocks = (1800 + 100*int(seed)) / cfg.Engine.BlockSize
			cfg.Engine.MaxNumBatchedTokens = 512
			cfg.Engine.MaxNumSeqs = 8
			cfg.Engine.Preemption = []string{"lifo", "fifo"}[seed%2]
			cfg.Engine.SGLang.ChunkedPrefillSize = 700
			cfg.Engine.LlamaCpp = LlamaCppConfig{Parallel: 3, CtxSize: 3 * 1500, NBatch: 256}
			cfg.Router.Temperature = float64(seed%2) * 0.5
			cfg.Frontend.ResponseOverheadMs = float64(seed % 2)
			cfg.Frontend.RequestOverheadMs = float64(seed%3) * 0.7
			if engine == "vllm" && seed%2 == 0 { // a CPU tier under a cache that evicts
				cfg.Engine.KVOffload = &KVOffloadConfig{CPUBlocks: 64, BandwidthGBs: 0.5}
			}
			recs, sum := runAll(t, cfg, wl, checkSteps(t))
			checkRecords(t, wl, recs)
			assert.Equal(t, len(wl.Requests), sum.Completed+sum.Rejected)
			t.Logf("preemptions %d rejected %d reuse %.2f offload loads %d", sum.Preemptions, sum.Rejected, sum.PrefixCacheReusedRatio, sum.Workers[0].OffloadLoadedBlocks)
		})
	}
}

func checkRecords(t *testing.T, wl *traces.Workload, recs []*results.Record) {
	t.Helper()
	for i, r := range recs {
		src := &wl.Requests[i]
		if r.Error != nil {
			assert.Equal(t, RejectedType, r.Error.Type)
			assert.NotEmpty(t, r.Error.Message)
			continue
		}
		checkRecord(t, src, r)
	}
	checkSessions(t, wl, recs)
	checkConcurrency(t, wl, recs)
}

func checkRecord(t *testing.T, src *traces.Request, r *results.Record) {
	t.Helper()
	require.Len(t, r.Chunks, src.OutputLength, "row %d", src.Row)
	assert.Equal(t, src.OutputLength, r.OutputTokens)
	assert.Equal(t, src.OutputLength, r.RequestedOutputTokens)
	assert.Equal(t, src.Warmup, r.Warmup)
	assert.GreaterOrEqual(t, r.StartNs, r.IntendedNs)
	prev := r.StartNs
	for _, c := range r.Chunks {
		assert.Equal(t, 1, c.Tokens)
		assert.GreaterOrEqual(t, c.AtNs, prev)
		prev = c.AtNs
	}
	assert.Equal(t, prev, r.EndNs)
	// The stages partition TTFT exactly, every one of them, in order.
	var sum int64
	names := make([]string, 0, len(r.Sim.TTFTBreakdown))
	for _, st := range r.Sim.TTFTBreakdown {
		assert.GreaterOrEqual(t, st.Ns, int64(0), "row %d stage %s", src.Row, st.Name)
		sum += st.Ns
		names = append(names, st.Name)
	}
	assert.Equal(t, []string{StageFrontendRequest, StageQueueWait, StagePrefill, StageBehindOther, StageFirstEmission}, names)
	assert.Equal(t, r.Chunks[0].AtNs-r.StartNs, sum, "row %d: TTFT breakdown", src.Row)
	assert.Equal(t, r.AckNs-r.StartNs, r.Sim.TTFTBreakdown[0].Ns, "row %d: frontend request", src.Row)
	assert.Equal(t, r.Sim.PrefillStartNs-r.AckNs, r.Sim.QueueWaitNs, "row %d: queue wait", src.Row)
	assert.Equal(t, r.Sim.TTFTBreakdown[1].Ns, r.Sim.QueueWaitNs)
	assert.LessOrEqual(t, r.Sim.PrefillStartNs, r.Sim.PrefillEndNs)
	// A recomputation after preemption may find the whole prompt cached.
	assert.LessOrEqual(t, r.Sim.CachedTokens, r.InputTokens)
	if r.Sim.Preemptions == 0 {
		assert.Less(t, r.Sim.CachedTokens, r.InputTokens)
	}
}

// checkSessions: a later turn starts after the previous one ended plus its
// delay.
func checkSessions(t *testing.T, wl *traces.Workload, recs []*results.Record) {
	last := map[string]int{}
	for i, src := range wl.Requests {
		if src.SessionID == "" {
			continue
		}
		if p, ok := last[src.SessionID]; ok {
			assert.GreaterOrEqual(t, recs[i].StartNs, recs[p].EndNs+msToNs(src.DelayMs), "session %s turn %d", src.SessionID, src.Turn)
		}
		last[src.SessionID] = i
	}
}

// checkConcurrency: never more than Concurrency requests in flight.
func checkConcurrency(t *testing.T, wl *traces.Workload, recs []*results.Record) {
	if wl.Concurrency == 0 {
		return
	}
	for _, r := range recs {
		inFlight := 0
		for _, o := range recs {
			if o.StartNs <= r.StartNs && r.StartNs < o.EndNs {
				inFlight++
			}
		}
		assert.LessOrEqual(t, inFlight, wl.Concurrency)
	}
}

func TestDeterministic(t *testing.T) {
	wl := randomWorkload(99, 200, false)
	cfg := DefaultConfig()
	cfg.Workers, cfg.Router.Policy, cfg.Router.Temperature, cfg.Seed = 3, "kv", 0.7, 5
	a, sa := runAll(t, cfg, wl)
	b, sb := runAll(t, cfg, wl)
	require.Equal(t, a, b)
	require.Equal(t, sa, sb)

	dir := t.TempDir()
	for _, sub := range []string{"one", "two"} {
		_, err := WriteRun(context.Background(), filepath.Join(dir, sub), cfg, wl, nil)
		require.NoError(t, err)
	}
	for _, name := range []string{results.RecordsName, results.ProfileJSONName, results.ProfileCSVName, SummaryName,
		servermetrics.JSONName, servermetrics.CSVName, servermetrics.TTFTBreakdownName} {
		one, err := os.ReadFile(filepath.Join(dir, "one", name))
		require.NoError(t, err)
		two, err := os.ReadFile(filepath.Join(dir, "two", name))
		require.NoError(t, err)
		assert.Equal(t, string(one), string(two), name)
	}
}

// A different seed changes random routing.
func TestSeedMatters(t *testing.T) {
	wl := randomWorkload(3, 100, false)
	cfg := DefaultConfig()
	cfg.Workers, cfg.Router.Policy = 4, "random"
	a, _ := runAll(t, cfg, wl)
	cfg.Seed = 1
	b, _ := runAll(t, cfg, wl)
	differ := false
	for i := range a {
		differ = differ || a[i].Worker != b[i].Worker
	}
	assert.True(t, differ)
}

package sim

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/traces"
)

// Two requests at t=0, ISL 100 and OSL 3, a 150-token budget, steps of
// 10 ms + 0.1 ms per prompt token:
//
//	step 1  0→25  A prompt 100 + B chunk 50 (150 tokens)   A:1
//	step 2 25→40  A decode + B chunk 50 (50 prompt tokens)  A:2 B:1
//	step 3 40→50  A, B decode                               A:3 B:2
//	step 4 50→60  B decode                                  B:3
func TestVLLMChunkedPrefillStamps(t *testing.T) {
	cfg := constCfg("vllm", 10, 0.1)
	cfg.Engine.MaxNumBatchedTokens = 150
	recs, sum := runAll(t, cfg, workload(req(0, 100, 3), req(0, 100, 3)))
	a, b := recs[0], recs[1]
	assert.Equal(t, []float64{25, 40, 50}, stampsMs(a))
	assert.Equal(t, []float64{40, 50, 60}, stampsMs(b))
	// A alone would take 10+10 ms; the other 5 ms of step 1 are B's chunk.
	assert.Equal(t, map[string]float64{StageFrontendRequest: 0, StageQueueWait: 0, StagePrefill: 20, StageBehindOther: 5, StageFirstEmission: 0}, stages(a))
	// B's chunks alone: 15 ms each; step 1 was 25 ms.
	assert.Equal(t, map[string]float64{StageFrontendRequest: 0, StageQueueWait: 0, StagePrefill: 30, StageBehindOther: 10, StageFirstEmission: 0}, stages(b))
	assert.Equal(t, int64(4), sum.Steps)
	assert.Equal(t, 3, a.OutputTokens)
	assert.Equal(t, Epoch+40*ms, b.Sim.PrefillEndNs)
	assert.Equal(t, Epoch, b.Sim.PrefillStartNs)
}

// A at 0 ms, B at 15 ms (mid-step), ISL 100, OSL 3, steps of 10 ms + 0.1 ms
// per prompt token. vllm mixes B's prompt with A's decode; sglang runs B's
// prompt alone first, so A's second token waits (a decode stall).
func TestVLLMvsSGLangStall(t *testing.T) {
	wl := workload(req(0, 100, 3), req(15, 100, 3))
	for _, tc := range []struct {
		engine string
		a, b   []float64
	}{
		{"vllm", []float64{20, 40, 50}, []float64{40, 50, 60}},
		{"sglang", []float64{20, 50, 60}, []float64{40, 50, 60}},
	} {
		t.Run(tc.engine, func(t *testing.T) {
			recs, _ := runAll(t, constCfg(tc.engine, 10, 0.1), wl)
			assert.Equal(t, tc.a, stampsMs(recs[0]))
			assert.Equal(t, tc.b, stampsMs(recs[1]))
			// B waited 5 ms for step 1 to end, then computed alone.
			assert.Equal(t, map[string]float64{StageFrontendRequest: 0, StageQueueWait: 5, StagePrefill: 20, StageBehindOther: 0, StageFirstEmission: 0}, stages(recs[1]))
		})
	}
}

// Two slots, n_batch 64, two requests at 0 with ISL 100 and OSL 3, steps of
// 10 ms + 0.1 ms per prompt token. Decode tokens go first, then prompt
// chunks in slot order:
//
//	step 1  0.0→16.4  A 64                      (64 tokens)
//	step 2 16.4→32.8  A 36, B 28                A:1
//	step 3 32.8→49.1  A decode, B 63            A:2
//	step 4 49.1→60.0  A decode, B 9             A:3 B:1
//	step 5 60.0→70.0  B decode                  B:2
//	step 6 70.0→80.0  B decode                  B:3
func TestLlamaCppSlotsStamps(t *testing.T) {
	cfg := constCfg("llamacpp", 10, 0.1)
	cfg.Engine.LlamaCpp = LlamaCppConfig{Parallel: 2, CtxSize: 512, NBatch: 64}
	recs, _ := runAll(t, cfg, workload(req(0, 100, 3), req(0, 100, 3)))
	assert.InDeltaSlice(t, []float64{32.8, 49.1, 60}, stampsMs(recs[0]), 1e-9)
	assert.InDeltaSlice(t, []float64{60, 70, 80}, stampsMs(recs[1]), 1e-9)
}

// One slot: the second request waits for it, then reuses the slot's cached
// prompt (the same 6 full blocks of 16 tokens): only 4 tokens are computed.
func TestLlamaCppPromptCache(t *testing.T) {
	cfg := constCfg("llamacpp", 10, 0.1)
	cfg.Engine.EnablePrefixCaching = true
	cfg.Engine.LlamaCpp = LlamaCppConfig{Parallel: 1, CtxSize: 512, NBatch: 512}
	ids := []int64{1, 2, 3, 4, 5, 6, 7}
	a, b := req(0, 100, 2), req(0, 100, 2)
	a.HashIDs, b.HashIDs = ids, ids
	recs, _ := runAll(t, cfg, workload(a, b))
	assert.Equal(t, []float64{20, 30}, stampsMs(recs[0]))
	// B: queue 30 ms for the slot, then 4 tokens: 10.4 ms.
	assert.InDeltaSlice(t, []float64{40.4, 50.4}, stampsMs(recs[1]), 1e-9)
	assert.Equal(t, 96, recs[1].Sim.CachedTokens)
	assert.InDelta(t, 30.0, stages(recs[1])[StageQueueWait], 1e-9)
}

// Ten KV blocks of 16 tokens; A and B (ISL 64, OSL 40) need 7 blocks each
// at the end, so A's 6th block preempts B (the newest) at step 18. B's
// prompt blocks stay cached; A's 7th block (step 34) evicts B's last prompt
// block; B resumes after A at step 41 from a 48-token prefix hit and
// recomputes 33 tokens (64 prompt + 17 generated − 48); its 7th block later
// evicts one of A's idle prompt blocks.
func TestVLLMPreemptionRecompute(t *testing.T) {
	cfg := constCfg("vllm", 10, 0)
	cfg.Engine.NumGPUBlocks = 10
	cfg.Engine.EnablePrefixCaching = true
	recs, sum := runAll(t, cfg, workload(req(0, 64, 40), req(0, 64, 40)))
	a, b := recs[0], recs[1]
	var wantA, wantB []float64
	for k := 1; k <= 40; k++ {
		wantA = append(wantA, float64(10*k))
	}
	for k := 1; k <= 17; k++ {
		wantB = append(wantB, float64(10*k))
	}
	for k := 41; k <= 63; k++ {
		wantB = append(wantB, float64(10*k))
	}
	assert.Equal(t, wantA, stampsMs(a))
	assert.Equal(t, wantB, stampsMs(b))
	assert.Equal(t, 0, a.Sim.Preemptions)
	assert.Equal(t, 1, b.Sim.Preemptions)
	assert.Equal(t, 48, b.Sim.CachedTokens)
	assert.Equal(t, int64(1), sum.Preemptions)
	assert.Equal(t, 10, sum.Workers[0].KVPeakBlocks)
	assert.Equal(t, int64(2), sum.Workers[0].Evictions)
}

// With fifo the oldest running request is the victim: A preempts itself at
// step 18 and B, now alone, finishes first.
func TestVLLMPreemptionFIFO(t *testing.T) {
	cfg := constCfg("vllm", 10, 0)
	cfg.Engine.NumGPUBlocks = 10
	cfg.Engine.EnablePrefixCaching = true
	cfg.Engine.Preemption = "fifo"
	recs, _ := runAll(t, cfg, workload(req(0, 64, 40), req(0, 64, 40)))
	assert.Equal(t, 1, recs[0].Sim.Preemptions)
	assert.Equal(t, 0, recs[1].Sim.Preemptions)
	assert.Less(t, recs[1].EndNs, recs[0].EndNs)
	assert.Equal(t, 170.0, stampsMs(recs[0])[16]) // A's 17th token, before the preemption
	for _, r := range recs {
		assert.Len(t, r.Chunks, 40)
	}
}

// sglang retracts the decoding request with the fewest output tokens.
func TestSGLangRetraction(t *testing.T) {
	cfg := constCfg("sglang", 10, 0)
	cfg.Engine.NumGPUBlocks = 10
	cfg.Engine.SGLang.NewTokenRatio = 0
	recs, sum := runAll(t, cfg, workload(req(0, 64, 40), req(5, 64, 40)))
	assert.Equal(t, int64(1), sum.Preemptions)
	// A started first and has more output: B is retracted.
	assert.Equal(t, 0, recs[0].Sim.Preemptions)
	assert.Equal(t, 1, recs[1].Sim.Preemptions)
	for _, r := range recs {
		assert.Len(t, r.Chunks, 40)
	}
}

func TestRejectedNeverFits(t *testing.T) {
	cfg := constCfg("vllm", 10, 0)
	cfg.Engine.NumGPUBlocks = 4 // 64 tokens
	long, zero := req(0, 60, 10), req(0, 10, 0)
	recs, sum := runAll(t, cfg, workload(req(0, 10, 5), long, zero))
	require.Nil(t, recs[0].Error)
	require.NotNil(t, recs[1].Error)
	assert.Equal(t, RejectedType, recs[1].Error.Type)
	assert.Contains(t, recs[1].Error.Message, "needs 5 KV blocks")
	assert.Contains(t, recs[2].Error.Message, "output_length is 0")
	assert.Equal(t, 2, sum.Rejected)
	assert.Len(t, sum.RejectReasons, 2)

	cfg = constCfg("llamacpp", 10, 0)
	cfg.Engine.LlamaCpp = LlamaCppConfig{Parallel: 2, CtxSize: 100, NBatch: 64}
	recs, _ = runAll(t, cfg, workload(req(0, 45, 6), req(0, 45, 7)))
	assert.Nil(t, recs[0].Error)
	assert.Contains(t, recs[1].Error.Message, "slot context of 50 tokens")
}

func TestFrontendOverheads(t *testing.T) {
	cfg := constCfg("vllm", 10, 0)
	cfg.Frontend = FrontendConfig{RequestOverheadMs: 3, ResponseOverheadMs: 2}
	recs, _ := runAll(t, cfg, workload(req(0, 10, 2)))
	r := recs[0]
	assert.Equal(t, []float64{15, 25}, stampsMs(r))
	assert.Equal(t, Epoch+25*ms, r.EndNs)
	assert.Equal(t, map[string]float64{StageFrontendRequest: 3, StageQueueWait: 0, StagePrefill: 10, StageBehindOther: 0, StageFirstEmission: 2}, stages(r))
}

// frontend.concurrency: a handler prepares one request at a time, so three
// sent together reach the engine 3, 6 and 9 ms later: the first starts a
// 10 ms step alone (a 2-token prompt at 10 ms a step), the other two meet
// in the next step. Unbounded, all three arrive at 3 ms and share one.
func TestFrontendConcurrency(t *testing.T) {
	cases := []struct {
		conc int
		ack  []float64
		ttft []float64
	}{
		{0, []float64{3, 3, 3}, []float64{13, 13, 13}},
		{1, []float64{3, 6, 9}, []float64{13, 23, 23}},
		{2, []float64{3, 3, 6}, []float64{13, 13, 23}},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.conc), func(t *testing.T) {
			cfg := constCfg("vllm", 10, 0)
			cfg.Frontend = FrontendConfig{RequestOverheadMs: 3, Concurrency: tc.conc}
			recs, _ := runAll(t, cfg, workload(req(0, 2, 2), req(0, 2, 2), req(0, 2, 2)))
			var ack, ttft []float64
			for _, r := range recs {
				ack = append(ack, float64(r.AckNs-r.StartNs)/1e6)
				ttft = append(ttft, stampsMs(r)[0])
			}
			assert.Equal(t, tc.ack, ack)
			assert.Equal(t, tc.ttft, ttft)
		})
	}
}

// frontend.cpu_share: 4 ms of each request's 6 ms is CPU on one event loop
// (share 2/3). Three sent together share it: each gets a third of the
// core, so their CPU ends at 12 ms and all reach the engine at 14 ms and
// share one step. One sent 20 ms later, after the loop is free, takes its
// 6 ms alone.
func TestFrontendCPUShare(t *testing.T) {
	cases := []struct {
		name  string
		sends []float64
		ack   []float64
	}{
		{"together", []float64{0, 0, 0}, []float64{14, 14, 14}},
		{"apart", []float64{0, 20}, []float64{6, 6}},
		// 0–1 ms: the first alone (1 ms of CPU done); then two share: the
		// first's 3 ms left take 6, to 7 ms, while the second does 3 of its
		// 4; its last 1 ms alone, to 8. Each then waits its 2 ms: they
		// reach the engine at 9 and 10 ms.
		{"staggered", []float64{0, 1}, []float64{9, 9}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := constCfg("vllm", 10, 0)
			cfg.Frontend = FrontendConfig{RequestOverheadMs: 6, CPUShare: 2.0 / 3}
			var reqs []traces.Request
			for _, at := range tc.sends {
				reqs = append(reqs, req(at, 2, 2))
			}
			recs, _ := runAll(t, cfg, workload(reqs...))
			var ack []float64
			for _, r := range recs {
				ack = append(ack, math.Round(float64(r.AckNs-r.StartNs)/1e3)/1e3)
			}
			assert.Equal(t, tc.ack, ack)
		})
	}
}

// Requests without a hash_ids tail still share the blocks they do list.
func TestPrefixReuseAcrossRequests(t *testing.T) {
	cfg := constCfg("vllm", 10, 0.1)
	cfg.Engine.EnablePrefixCaching = true
	a, b := req(0, 100, 2), req(100, 100, 2)
	a.HashIDs = []int64{1, 2, 3, 4, 5, 6, 7}
	b.HashIDs = []int64{1, 2, 3, 9, 10, 11, 12}
	wl := workload(a, b)
	recs, sum := runAll(t, cfg, wl)
	assert.Equal(t, 0, recs[0].Sim.CachedTokens)
	assert.Equal(t, 48, recs[1].Sim.CachedTokens)
	assert.InDelta(t, 48.0/200, sum.PrefixCacheReusedRatio, 1e-12)
	// B computes 52 tokens: 15.2 ms.
	assert.InDeltaSlice(t, []float64{115.2, 125.2}, stampsMs(recs[1]), 1e-9)
}

// Ollama's runner: each slot computes up to n_batch prompt tokens per step
// whatever the other slots do. Two slots, n_batch 64, ISL 100, OSL 3, steps
// of 10 ms + 0.1 ms per prompt token:
//
//	step 1  0.0→22.8  A 64, B 64                (128 tokens)
//	step 2 22.8→40.0  A 36, B 36                A:1 B:1
//	step 3 40.0→50.0  A, B decode               A:2 B:2
//	step 4 50.0→60.0  A, B decode               A:3 B:3
func TestLlamaCppPerSlotBatch(t *testing.T) {
	cfg := constCfg("llamacpp", 10, 0.1)
	cfg.Engine.LlamaCpp = LlamaCppConfig{Parallel: 2, CtxSize: 512, NBatch: 64, Batch: LlamaCppBatchPerSlot}
	recs, _ := runAll(t, cfg, workload(req(0, 100, 3), req(0, 100, 3)))
	for _, r := range recs {
		assert.InDeltaSlice(t, []float64{40, 50, 60}, stampsMs(r), 1e-9)
	}
}

// frontend.arrival_stall_ms, 10 ms steps: the server's work on a request
// takes CPU from the steps beside it, in flight or to come.
func TestArrivalStall(t *testing.T) {
	// The server works on each request for its 10 ms overhead after the
	// send; a step beside that work is stretched by stall × the share of
	// it the step overlaps. A is alone (its window beside an idle engine);
	// B's window [at, at+10) meets A's step [20, 30); C's meets none.
	cases := []struct {
		name      string
		stall, at float64
		a, b      []float64
		busyMs    float64
	}{
		{"none", 0, 20, []float64{20, 30, 40, 50, 60}, []float64{40, 50}, 70},
		{"whole window", 10, 20, []float64{20, 40, 50, 60, 70}, []float64{50, 60}, 80},
		{"part of it", 10, 24, []float64{20, 36, 46, 56, 66}, []float64{46, 56}, 76},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := constCfg("vllm", 10, 0)
			cfg.Frontend.RequestOverheadMs = 10
			cfg.Frontend.ArrivalStallMs = tc.stall
			recs, sum := runAll(t, cfg, workload(req(0, 2, 5), req(tc.at, 2, 2), req(100, 2, 2)))
			assert.Equal(t, tc.a, stampsMs(recs[0]))
			assert.Equal(t, tc.b, stampsMs(recs[1]))
			assert.Equal(t, []float64{120, 130}, stampsMs(recs[2]))
			assert.InDelta(t, tc.busyMs/1e3, sum.Workers[0].BusySeconds, 1e-12)
		})
	}
}

// engine.llamacpp.reuse_lag_steps (Ollama's runner), 10 ms steps, two
// slots: B (OSL 8) starts at 0; A (OSL 2) reaches the runner mid-step (5
// ms) and C (OSL 2) at 25 ms, with both slots taken. Without the lag A
// joins step 2 and frees its slot at the end of step 3, which C takes in
// step 4. With a lag of one A joins step 3, its slot frees at the end of
// step 4, stays empty for step 5, and C takes it in step 6. When no other
// slot runs, a freed slot is taken at once.
func TestLlamaCppReuseLag(t *testing.T) {
	for _, tc := range []struct {
		lag  int
		a, c []float64
	}{{0, []float64{20, 30}, []float64{40, 50}}, {1, []float64{30, 40}, []float64{60, 70}}} {
		t.Run(fmt.Sprint(tc.lag), func(t *testing.T) {
			cfg := constCfg("llamacpp", 10, 0)
			cfg.Engine.LlamaCpp = LlamaCppConfig{Parallel: 2, CtxSize: 512, NBatch: 64, ReuseLagSteps: tc.lag}
			recs, _ := runAll(t, cfg, workload(req(0, 2, 8), req(5, 2, 2), req(25, 2, 2)))
			assert.Equal(t, []float64{10, 20, 30, 40, 50, 60, 70, 80}, stampsMs(recs[0]))
			assert.Equal(t, tc.a, stampsMs(recs[1]))
			assert.Equal(t, tc.c, stampsMs(recs[2]))
		})
	}
	t.Run("idle", func(t *testing.T) {
		cfg := constCfg("llamacpp", 10, 0)
		cfg.Engine.LlamaCpp = LlamaCppConfig{Parallel: 1, CtxSize: 512, NBatch: 64, ReuseLagSteps: 1}
		recs, _ := runAll(t, cfg, workload(req(0, 2, 2), req(0, 2, 2)))
		assert.Equal(t, []float64{30, 40}, stampsMs(recs[1]))
	})
	// A request that reaches the runner during a step (at 5 ms, a free
	// slot waiting) joins the step after next with the lag, the next one
	// without; when nothing else runs after the step in flight, the next.
	// One that reaches an idle runner at the same instant as another comes
	// behind the step the other starts: with the lag it too joins step 3.
	for _, tc := range []struct {
		name     string
		lag, osl int
		at       float64
		b        []float64
	}{
		{"arrival/0", 0, 4, 5, []float64{20, 30}},
		{"arrival/1", 1, 4, 5, []float64{30, 40}},
		{"arrival/1/last-step", 1, 1, 5, []float64{20, 30}},
		{"same-instant/0", 0, 4, 0, []float64{10, 20}},
		{"same-instant/1", 1, 4, 0, []float64{30, 40}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := constCfg("llamacpp", 10, 0)
			cfg.Engine.LlamaCpp = LlamaCppConfig{Parallel: 2, CtxSize: 512, NBatch: 64, ReuseLagSteps: tc.lag}
			recs, _ := runAll(t, cfg, workload(req(0, 2, tc.osl), req(tc.at, 2, 2)))
			assert.Equal(t, tc.b, stampsMs(recs[1]))
		})
	}
}

// client.tie_order: three prompts sent at once to one slot (10 ms + 0.1
// ms per prompt token a step) are served in the workload's order, or, with
// random, in a seeded order: the same seed gives the same order, and
// different seeds give different ones.
// TestAsyncScheduling: with the step after the one in flight planned
// already, a request reaching a busy engine (at 15 ms, during step 2) joins
// step 4, not step 3; at the same instant as another on an idle engine, or
// when nothing runs after the step in flight, the step it would have
// joined anyway. Both vllm and sglang plan so, by default.
func TestAsyncScheduling(t *testing.T) {
	for _, engine := range []string{"vllm", "sglang"} {
		for _, tc := range []struct {
			name  string
			async *bool
			osl   int
			at    float64
			b     []float64
		}{
			{"busy/off", ptr(false), 6, 15, []float64{30, 40}},
			{"busy/on", ptr(true), 6, 15, []float64{40, 50}},
			{"busy/engine-default", nil, 6, 15, []float64{40, 50}},
			{"last-step/on", ptr(true), 2, 15, []float64{30, 40}},
			{"same-instant/on", ptr(true), 6, 0, []float64{10, 20}},
		} {
			t.Run(engine+"/"+tc.name, func(t *testing.T) {
				cfg := constCfg(engine, 10, 0)
				cfg.Engine.AsyncScheduling = tc.async
				recs, _ := runAll(t, cfg, workload(req(0, 2, tc.osl), req(tc.at, 2, 2)))
				assert.Equal(t, tc.b, stampsMs(recs[1]))
			})
		}
	}
}

func TestTieOrder(t *testing.T) {
	first := func(order string, seed int64) []float64 {
		cfg := constCfg("llamacpp", 10, 0.1)
		cfg.Seed = seed
		cfg.Engine.LlamaCpp = LlamaCppConfig{Parallel: 1, CtxSize: 512, NBatch: 64}
		cfg.Client.TieOrder = order
		recs, _ := runAll(t, cfg, workload(req(0, 10, 1), req(0, 20, 1), req(0, 30, 1)))
		return []float64{stampsMs(recs[0])[0], stampsMs(recs[1])[0], stampsMs(recs[2])[0]}
	}
	assert.InDeltaSlice(t, []float64{11, 23, 36}, first(TieOrderTrace, 0), 1e-9)
	orders := map[string]bool{}
	for seed := range int64(8) {
		got := first(TieOrderRandom, seed)
		assert.Equal(t, got, first(TieOrderRandom, seed), "seed %d is deterministic", seed)
		orders[fmt.Sprint(got)] = true
	}
	assert.Greater(t, len(orders), 2, "random tie order: %v", orders)
}

// frontend.template_tokens: the engine computes the template's tokens on
// top of the workload's prompt and counts them in it (10 ms + 0.1 ms per
// prompt token: a 10-token prompt with a 5-token template takes 11.5 ms).
func TestTemplateTokens(t *testing.T) {
	cfg := constCfg("vllm", 10, 0.1)
	cfg.Frontend.TemplateTokens = 5
	recs, _ := runAll(t, cfg, workload(req(0, 10, 2)))
	assert.InDeltaSlice(t, []float64{11.5, 21.5}, stampsMs(recs[0]), 1e-9)
	assert.Equal(t, 15, recs[0].InputTokens)
}

// frontend.prompt_token_ms with two handlers (Ollama's server on two
// cores), 10 ms + 0.1 ms per prompt token a step, a lag of one step: a
// 100- and a 10-token prompt sent at once, the long one first. The short
// one is prepared sooner (0.1 ms against 1 ms), starts a step alone and
// decodes alone in the next; the long one, arriving mid-step, joins the
// third. Without the per-token work both are ready at once and the
// workload's first, the long one, starts the engine; the short one
// comes behind it and starts when the long one is done (step 3).
func TestFrontendPromptTokens(t *testing.T) {
	for _, tc := range []struct {
		tokenMs     float64
		long, short float64
	}{{0.01, 41.1, 11.1}, {0, 20, 41}} {
		t.Run(fmt.Sprint(tc.tokenMs), func(t *testing.T) {
			cfg := constCfg("llamacpp", 10, 0.1)
			cfg.Engine.LlamaCpp = LlamaCppConfig{Parallel: 2, CtxSize: 512, NBatch: 512, ReuseLagSteps: 1}
			cfg.Frontend.Concurrency, cfg.Frontend.PromptTokenMs = 2, tc.tokenMs
			recs, _ := runAll(t, cfg, workload(req(0, 100, 2), req(0, 10, 3)))
			assert.InDelta(t, tc.long, stampsMs(recs[0])[0], 1e-9)
			assert.InDelta(t, tc.short, stampsMs(recs[1])[0], 1e-9)
		})
	}
}

// frontend.hold_for_slot: one slot, 5 ms from send to the engine, 10 ms +
// 0.1 ms per prompt token a step; two 10-token prompts of 2 tokens sent at
// once. The first decodes from 5 to 26 ms (prefill 11 ms, a decode 10).
// Without the gate the second waits in the engine's queue and takes the
// slot as it frees (first token 37 ms); held by the server, it starts its
// 5 ms to the engine only then (42 ms).
func TestHoldForSlot(t *testing.T) {
	for _, tc := range []struct {
		hold   bool
		second []float64
	}{{false, []float64{37, 47}}, {true, []float64{42, 52}}} {
		t.Run(fmt.Sprint(tc.hold), func(t *testing.T) {
			cfg := constCfg("llamacpp", 10, 0.1)
			cfg.Engine.LlamaCpp = LlamaCppConfig{Parallel: 1, CtxSize: 512, NBatch: 64}
			cfg.Frontend.RequestOverheadMs, cfg.Frontend.HoldForSlot = 5, tc.hold
			recs, _ := runAll(t, cfg, workload(req(0, 10, 2), req(0, 10, 2)))
			assert.InDeltaSlice(t, []float64{16, 26}, stampsMs(recs[0]), 1e-9)
			assert.InDeltaSlice(t, tc.second, stampsMs(recs[1]), 1e-9)
		})
	}
}

// The gate lets at most parallel requests through: a burst of 9 on 4
// slots, each held one reaching the engine only as one through it finishes,
// so the engine never holds a waiting request; every request finishes.
func TestHoldForSlotBurst(t *testing.T) {
	cfg := constCfg("llamacpp", 10, 0.1)
	cfg.Engine.LlamaCpp = LlamaCppConfig{Parallel: 4, CtxSize: 4096, NBatch: 512, ReuseLagSteps: 1}
	cfg.Frontend.RequestOverheadMs, cfg.Frontend.HoldForSlot = 3, true
	var reqs []traces.Request
	for i := range 9 {
		reqs = append(reqs, req(0, 20+i, 4))
	}
	maxWaiting, maxThrough := 0, 0
	hook := withHook(func(s *simulator) {
		maxWaiting = max(maxWaiting, s.workers[0].waiting.len()+len(s.workers[0].running))
		maxThrough = max(maxThrough, s.front.(*gateFrontend).in)
	})
	recs, _ := runAll(t, cfg, workload(reqs...), hook)
	require.Len(t, recs, 9)
	assert.LessOrEqual(t, maxWaiting, 4)
	assert.Equal(t, 4, maxThrough)
	for _, r := range recs {
		assert.Nil(t, r.Error)
		assert.Len(t, r.Chunks, 4)
	}
}

// TestSGLangChunkDefault: chunked_prefill_size 0 is SGLang's default for
// the device's memory, as its server_args picks it.
func TestSGLangChunkDefault(t *testing.T) {
	for _, tc := range []struct {
		gpu, cpu string
		want     int
	}{
		{"rtx-4090", "", 2048},
		{"a100-40gb", "", 4096},
		{"l40s", "", 4096},
		{"h100", "", 8192},
		{"a100", "", 8192},
		{"h200", "", 8192},
		{"b200", "", 16384},
		{"gb200", "", 16384},
		{"h100", "x86-64-v3-2vcpu", 4096},
	} {
		t.Run(tc.gpu+tc.cpu, func(t *testing.T) {
			h := DefaultConfig().Hardware
			h.GPU, h.CPU = tc.gpu, tc.cpu
			got, err := sglangChunk(h)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestSGLangChunkBudget: a prompt longer than the budget is prefilled in
// budget-sized chunks, one step each: with the default on a 24 GB GPU
// (2048) a 5000-token prompt takes three prefill steps; set to 8192, one.
func TestSGLangChunkBudget(t *testing.T) {
	for _, tc := range []struct {
		chunk, steps int
	}{{0, 3}, {8192, 1}} {
		cfg := constCfg("sglang", 10, 0)
		cfg.Hardware.GPU = "rtx-4090"
		cfg.Engine.MaxNumBatchedTokens = 8192
		cfg.Engine.SGLang.ChunkedPrefillSize = tc.chunk
		recs, _ := runAll(t, cfg, workload(req(0, 5000, 1)))
		assert.InDelta(t, float64(tc.steps*10), stampsMs(recs[0])[0], 1e-9, "chunk %d", tc.chunk)
	}
}

package sim

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"strings"
)

// Validate checks every value; the error names the offending key.
func (c Config) Validate() error {
	checks := []func() error{c.validateTop, c.Engine.validate, c.Router.validate(c.Workers),
		c.Timing.validate, c.Hardware.validate, c.validateSpec, c.Frontend.validate, c.Client.validate, c.ServerMetrics.validate, c.validateDisaggregation,
		c.validateMemory}
	for _, check := range checks {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// Upper bounds of sizes, far beyond any real deployment (they stop a typo
// such as workers: 100000000 from exhausting memory; each worker costs the
// simulator about 100 KB and its KV index).
const (
	maxWorkers       = 4096    // engine replicas behind one router
	maxBlockSize     = 4096    // tokens per KV block (vLLM: at most 256)
	maxSeqs          = 1 << 16 // running requests per worker
	maxStepTokens    = 1 << 21 // tokens in one engine step
	maxContextTokens = 1 << 24 // 16.8 M tokens of context
	maxTensorPar     = 1024    // GPUs per replica
	// maxIndexBytes bounds the KV-block index allocated up front for all
	// workers together.
	maxIndexBytes = 4 << 30
)

func (c Config) validateTop() error {
	return firstErr(inRange("workers", c.Workers, 1, maxWorkers), c.validateHold())
}

// validateStalls: a stall must end before the next is due.
func (c ClientConfig) validateStalls() error {
	if c.StallMs > 0 && c.StallEveryMs <= c.StallMs {
		return fmt.Errorf("client.stall_every_ms: the stalls come one after another; want more than stall_ms (%g), got %g", c.StallMs, c.StallEveryMs)
	}
	return nil
}

// validateMode: an explicit frontend.mode agrees with the keys that set a
// discipline of their own.
func (f FrontendConfig) validateMode() error {
	if f.Mode == "" {
		return nil
	}
	if err := oneOf("frontend.mode", f.Mode, FrontendModes()...); err != nil {
		return err
	}
	switch {
	case f.CPUShare > 0 && f.Mode != FrontendEventLoop:
		return fmt.Errorf("frontend.cpu_share: the event loop's share; frontend.mode is %s, want event_loop", f.Mode)
	case f.Mode == FrontendEventLoop && f.CPUShare == 0:
		return errors.New("frontend.mode: event_loop needs frontend.cpu_share > 0")
	case f.HoldForSlot && f.Mode != FrontendHoldForSlot:
		return fmt.Errorf("frontend.hold_for_slot: the gate; frontend.mode is %s, want hold_for_slot", f.Mode)
	case f.Mode == FrontendHandlers && f.Concurrency == 0:
		return errors.New("frontend.mode: handlers needs frontend.concurrency >= 1")
	case f.Mode == FrontendUnbounded && f.Concurrency > 0:
		return fmt.Errorf("frontend.concurrency: %d handlers; frontend.mode is unbounded, want handlers", f.Concurrency)
	}
	return nil
}

// validateLoop: frontend.cpu_share is one event loop's processor sharing,
// another discipline than concurrency's handlers, and the server's work
// under it has no window known at the send (arrival_stall_ms, the gate).
func (f FrontendConfig) validateLoop() error {
	switch {
	case f.CPUShare == 0:
		return nil
	case f.Concurrency > 0:
		return fmt.Errorf("frontend.cpu_share: one event loop shared by all requests; frontend.concurrency is %d handlers, want 0 (set one of them)", f.Concurrency)
	case f.ArrivalStallMs > 0:
		return errors.New("frontend.cpu_share: not with frontend.arrival_stall_ms (a CPU engine's server, whose work is modelled by concurrency)")
	case f.HoldForSlot:
		return errors.New("frontend.cpu_share: not with frontend.hold_for_slot (Ollama's server, whose work is modelled by concurrency)")
	}
	return nil
}

// validateHold: frontend.hold_for_slot is one server's gate in front of
// its llama.cpp runner's slots.
func (c Config) validateHold() error {
	switch {
	case c.Frontend.Discipline() != FrontendHoldForSlot:
		return nil
	case c.Engine.Type != "llamacpp":
		return fmt.Errorf("frontend.hold_for_slot: holds requests for engine.llamacpp.parallel slots; engine.type is %q, want llamacpp", c.Engine.Type)
	case c.Disaggregated():
		return errors.New("frontend.hold_for_slot: one server in front of one runner; serving is disaggregated, want 1 aggregated worker")
	case c.Workers != 1:
		return fmt.Errorf("frontend.hold_for_slot: one server in front of one runner; workers is %d, want 1 aggregated", c.Workers)
	}
	return nil
}

// validateMemory bounds what the workers' KV indexes take up front
// (llama.cpp's slots have none).
func (c Config) validateMemory() error {
	if c.Engine.Type == "llamacpp" {
		return nil
	}
	blocks, err := c.KVBlocks()
	if err != nil {
		return err
	}
	per := int64(8 * min(max(16, 2*blocks), 1<<22)) // newHashIndex's cells
	if total := per * int64(c.Workers); total > maxIndexBytes {
		return fmt.Errorf("workers: %d workers × %d KV blocks need %.1f GiB of KV index up front, more than %d GiB; "+
			"use fewer workers, a larger engine.block_size or a smaller engine.num_gpu_blocks",
			c.Workers, blocks, float64(total)/(1<<30), maxIndexBytes>>30)
	}
	return nil
}

// inRange checks lo <= v <= hi, naming the bound in the error.
func inRange(key string, v, lo, hi int) error {
	if v < lo || v > hi {
		return fmt.Errorf("%s: must be in [%d, %d], got %d", key, lo, hi, v)
	}
	return nil
}

func oneOf(key, v string, allowed ...string) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return fmt.Errorf("%s: must be one of %s, got %q", key, strings.Join(allowed, ", "), v)
}

func positive(key string, v int) error {
	if v <= 0 {
		return fmt.Errorf("%s: must be > 0, got %d", key, v)
	}
	return nil
}

func atMost(key string, v, hi int) error {
	if v > hi {
		return fmt.Errorf("%s: at most %d, got %d", key, hi, v)
	}
	return nil
}

func nonNegative(key string, v int) error {
	if v < 0 {
		return fmt.Errorf("%s: must be >= 0, got %d", key, v)
	}
	return nil
}

// finiteIn checks lo <= v <= hi (and that v is a number).
func finiteIn(key string, v, lo, hi float64) error {
	if math.IsNaN(v) || v < lo || v > hi {
		return fmt.Errorf("%s: must be in [%g, %g], got %g", key, lo, hi, v)
	}
	return nil
}

// maxStallsPerStep bounds timing.stalls_per_step: more than a few stalls
// in every step is not a stall but the step's own cost.
const maxStallsPerStep = 10

// bothOrNeither refuses one of a pair of settings that only work together.
func bothOrNeither(ka string, a float64, kb string, b float64) error {
	if (a > 0) != (b > 0) {
		return fmt.Errorf("%s and %s: set both or neither, got %g and %g", ka, kb, a, b)
	}
	return nil
}

// needs refuses a setting that means nothing without another.
func needs(ka string, a float64, kb string, b float64) error {
	if a > 0 && b <= 0 {
		return fmt.Errorf("%s: needs %s, got %g without it", ka, kb, a)
	}
	return nil
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func (e EngineConfig) validate() error {
	return firstErr(
		oneOf("engine.type", e.Type, "vllm", "sglang", "llamacpp"),
		inRange("engine.block_size", e.BlockSize, 1, maxBlockSize),
		nonNegative("engine.num_gpu_blocks", e.NumGPUBlocks),
		atMost("engine.num_gpu_blocks", e.NumGPUBlocks, maxKVBlocks),
		finiteIn("engine.gpu_memory_utilization", e.GPUMemoryUtilization, 0.01, 1),
		inRange("engine.max_num_seqs", e.MaxNumSeqs, 0, maxSeqs),
		inRange("engine.max_num_batched_tokens", e.MaxNumBatchedTokens, 0, maxStepTokens),
		oneOf("engine.preemption", e.Preemption, "lifo", "fifo"),
		inRange("engine.max_model_len", e.MaxModelLen, 0, maxContextTokens),
		inRange("engine.sglang.chunked_prefill_size", e.SGLang.ChunkedPrefillSize, 0, maxStepTokens),
		finiteIn("engine.sglang.new_token_ratio", e.SGLang.NewTokenRatio, 0, 1),
		inRange("engine.llamacpp.parallel", e.LlamaCpp.Parallel, 1, maxSeqs),
		inRange("engine.llamacpp.ctx_size", e.LlamaCpp.CtxSize, 0, maxContextTokens),
		inRange("engine.llamacpp.n_batch", e.LlamaCpp.NBatch, 1, maxStepTokens),
		inRange("engine.llamacpp.reuse_lag_steps", e.LlamaCpp.ReuseLagSteps, 0, 1000),
		oneOf("engine.llamacpp.batch", cmp.Or(e.LlamaCpp.Batch, LlamaCppBatchShared), LlamaCppBatchShared, LlamaCppBatchPerSlot),
		e.validateCtx(),
		e.validateAsync(),
	)
}

// validateAsync refuses async_scheduling where it means nothing: a llama.cpp
// runner plans each step after the last (its lag is reuse_lag_steps).
func (e EngineConfig) validateAsync() error {
	if e.AsyncScheduling != nil && *e.AsyncScheduling && e.Type == "llamacpp" {
		return errors.New("engine.async_scheduling: vllm and sglang plan a step ahead; engine.type is llamacpp, whose lag is engine.llamacpp.reuse_lag_steps")
	}
	return nil
}

func (e EngineConfig) validateCtx() error {
	if e.LlamaCpp.CtxSize < e.LlamaCpp.Parallel*2 {
		return fmt.Errorf("engine.llamacpp.ctx_size: must be >= 2 tokens per slot (%d slots), got %d",
			e.LlamaCpp.Parallel, e.LlamaCpp.CtxSize)
	}
	return nil
}

func (r RouterConfig) validate(workers int) func() error {
	return func() error {
		return firstErr(
			oneOf("router.policy", r.Policy, "round_robin", "random", "least_loaded", "kv"),
			finiteIn("router.overlap_weight", r.OverlapWeight, 0, 1e6),
			finiteIn("router.temperature", r.Temperature, 0, 1e6),
		)
	}
}

func (t TimingConfig) validate() error {
	return firstErr(
		oneOf("timing.model", t.Model, TimingModels()...),
		finiteIn("timing.speedup", t.Speedup, 1e-6, 1e6),
		finiteIn("timing.jitter", t.Jitter, 0, 2),
		finiteIn("timing.stall_ms", t.StallMs, 0, 1e6),
		finiteIn("timing.stall_cv", t.StallCV, 0, 10),
		finiteIn("timing.stalls_per_step", t.StallsPerStep, 0, maxStallsPerStep),
		bothOrNeither("timing.stall_ms", t.StallMs, "timing.stalls_per_step", t.StallsPerStep),
		needs("timing.stall_cv", t.StallCV, "timing.stall_ms", t.StallMs),
		finiteIn("timing.drift_cv", t.DriftCV, 0, 1),
		finiteIn("timing.drift_period_ms", t.DriftPeriodMs, 0, 1e9),
		bothOrNeither("timing.drift_cv", t.DriftCV, "timing.drift_period_ms", t.DriftPeriodMs),
		t.validateModel(),
	)
}

func (t TimingConfig) validateModel() error {
	switch t.Model {
	case "poly":
		return t.Poly.validate()
	case "linear":
		return t.Linear.validate()
	case "roofline":
		return firstErr(finiteIn("timing.roofline.efficiency", t.Roofline.Efficiency, 1e-3, 1),
			finiteIn("timing.roofline.step_overhead_ms", t.Roofline.StepOverheadMs, 0, 1e6))
	case "physics":
		return t.Physics.validate()
	default: // table
		if t.Table.File == "" {
			return errors.New("timing.table.file: required with timing.model table")
		}
	}
	return nil
}

func (p PolyConfig) validate() error {
	if len(p.Prefill) != 3 {
		return fmt.Errorf("timing.poly.prefill: want 3 coefficients [p0, p1, p2], got %d", len(p.Prefill))
	}
	if len(p.Decode) != 3 {
		return fmt.Errorf("timing.poly.decode: want 3 coefficients [d0, d1, d2], got %d", len(p.Decode))
	}
	for i, v := range append(append([]float64(nil), p.Prefill...), p.Decode...) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("timing.poly: coefficient %d is not finite", i)
		}
	}
	if err := finiteIn("timing.poly.decode_floor_ms", p.DecodeFloorMs, 0, 1e6); err != nil {
		return err
	}
	if t, ms := quadMin([3]float64(p.Prefill), 1, maxStepTokens); !(ms > 0) {
		return fmt.Errorf("timing.poly.prefill: a prefill of %.0f tokens takes %.4g ms; step times must be positive for 1..%d tokens", t, ms, maxStepTokens)
	}
	if u, ms := quadMin([3]float64(p.Decode), 0, 1); !(max(ms, p.DecodeFloorMs) > 0) {
		return fmt.Errorf("timing.poly.decode: a decode step at KV utilisation %.3g takes %.4g ms; step times must be positive (or set decode_floor_ms)", u, ms)
	}
	return nil
}

// quadMin returns where on [lo, hi] c0 + c1·x + c2·x² is least, and its value there.
func quadMin(c [3]float64, lo, hi float64) (x, v float64) {
	f := func(x float64) float64 { return c[0] + c[1]*x + c[2]*x*x }
	x, v = lo, f(lo)
	cands := []float64{hi}
	if c[2] > 0 {
		cands = append(cands, min(max(-c[1]/(2*c[2]), lo), hi))
	}
	for _, y := range cands {
		if fy := f(y); fy < v {
			x, v = y, fy
		}
	}
	return x, v
}

func (p PhysicsConfig) validate() error {
	return firstErr(
		finiteIn("timing.physics.compute_efficiency", p.ComputeEfficiency, 1e-6, 1e3),
		finiteIn("timing.physics.memory_efficiency", p.MemoryEfficiency, 1e-6, 1e3),
		finiteIn("timing.physics.attention_efficiency", p.AttentionEfficiency, 0, 1e3),
		finiteIn("timing.physics.kv_efficiency", p.KVEfficiency, 0, 1e3),
		finiteIn("timing.physics.step_overhead_ms", p.StepOverheadMs, 0, 1e6),
		finiteIn("timing.physics.seq_overhead_ms", p.SeqOverheadMs, 0, 1e6),
		finiteIn("timing.physics.multi_token_overhead_ms", p.MultiTokenOverheadMs, 0, 1e6),
		finiteIn("timing.physics.prefill_overhead_ms", p.PrefillOverheadMs, 0, 1e6),
		oneOf("timing.physics.combine", p.Combine, "sum", "max", "smooth"),
	)
}

func (l LinearConfig) validate() error {
	err := firstErr(
		finiteIn("timing.linear.base_ms", l.BaseMs, 0, 1e6),
		finiteIn("timing.linear.prefill_token_ms", l.PrefillTokenMs, 0, 1e6),
		finiteIn("timing.linear.decode_seq_ms", l.DecodeSeqMs, 0, 1e6),
		finiteIn("timing.linear.context_token_ms", l.ContextTokenMs, 0, 1e6),
	)
	if err == nil && l.BaseMs == 0 && l.PrefillTokenMs == 0 && l.DecodeSeqMs == 0 && l.ContextTokenMs == 0 {
		return errors.New("timing.linear: every coefficient is 0; steps would take no time")
	}
	return err
}

func (h HardwareConfig) validate() error {
	if err := inRange("hardware.tensor_parallel", h.TensorParallel, 1, maxTensorPar); err != nil {
		return err
	}
	if _, ok := dtypeBytes[h.DType]; !ok {
		return fmt.Errorf("hardware.dtype: must be one of %s, got %q", strings.Join(sortedKeys(dtypeBytes), ", "), h.DType)
	}
	if err := firstErr(optionalOneOf("hardware.weight_dtype", h.WeightDType, weightDTypes...),
		optionalOneOf("hardware.kv_cache_dtype", h.KVCacheDType, kvCacheDTypes...)); err != nil {
		return err
	}
	if _, err := h.device(); err != nil {
		return err
	}
	_, err := h.model()
	return err
}

// optionalOneOf is oneOf for a key whose empty value means its default.
func optionalOneOf(key, v string, allowed ...string) error {
	if v == "" {
		return nil
	}
	return oneOf(key, v, allowed...)
}

func (f FrontendConfig) validate() error {
	return firstErr(finiteIn("frontend.request_overhead_ms", f.RequestOverheadMs, 0, 1e7),
		finiteIn("frontend.response_overhead_ms", f.ResponseOverheadMs, 0, 1e7),
		finiteIn("frontend.arrival_stall_ms", f.ArrivalStallMs, 0, 1e7),
		finiteIn("frontend.prompt_token_ms", f.PromptTokenMs, 0, 1e3),
		inRange("frontend.template_tokens", f.TemplateTokens, 0, maxContextTokens),
		nonNegative("frontend.concurrency", f.Concurrency), atMost("frontend.concurrency", f.Concurrency, 1<<16),
		finiteIn("frontend.cpu_share", f.CPUShare, 0, 1), f.validateLoop(), f.validateMode())
}

func (c ClientConfig) validate() error {
	return firstErr(finiteIn("client.gap_ms", c.GapMs, 0, 1e7),
		oneOf("client.tie_order", cmp.Or(c.TieOrder, TieOrderTrace), TieOrderTrace, TieOrderRandom),
		validateSamples("client.gap_samples_ms", c.GapSamplesMs),
		finiteIn("client.stall_ms", c.StallMs, 0, 1e7),
		finiteIn("client.stall_every_ms", c.StallEveryMs, 0, 1e9), c.validateStalls())
}

func (m ServerMetricsConfig) validate() error {
	return finiteIn("server_metrics.interval_ms", m.IntervalMs, 1, 1e9)
}

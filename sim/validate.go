package sim

import (
	"cmp"
	"errors"
	"fmt"
	"math"

	"github.com/simbench/simbench/sim/timing"
)

// Validate checks every value; the error names the offending key.
func (c Config) Validate() error {
	checks := []func() error{c.validateTop, c.Engine.validate, c.Router.validate(c.Workers),
		c.Timing.Validate, c.Hardware.Validate, c.validateSpec, c.Frontend.validate, c.Client.validate, c.ServerMetrics.validate, c.validateDisaggregation,
		c.validateMemory, c.validateOffloadLink}
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
	maxStepTokens    = timing.MaxStepTokens
	maxContextTokens = 1 << 24 // 16.8 M tokens of context
	// maxIndexBytes bounds the KV-block index allocated up front for all
	// workers together.
	maxIndexBytes = 4 << 30
)

func (c Config) validateTop() error {
	return timing.FirstErr(timing.InRange("workers", c.Workers, 1, maxWorkers), c.validateHold())
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
	if err := timing.OneOf("frontend.mode", f.Mode, FrontendModes()...); err != nil {
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

// validateOffloadLink: engine.kv_offload loads over a bandwidth, its own
// or the GPU's host link; aggregated serving only.
func (c Config) validateOffloadLink() error {
	if c.Engine.KVOffload == nil {
		return nil
	}
	if c.Disaggregated() {
		return errors.New("engine.kv_offload: CPU offloading is modelled on aggregated workers; serving is disaggregated")
	}
	if _, err := c.offloadBandwidthGBs(); err != nil {
		return err
	}
	_, err := c.offloadBlocks()
	return err
}

// offloadTierBlocks is the CPU tier's size in blocks, and whether there
// is one (a valid configuration's).
func (c Config) offloadTierBlocks() (int, bool) {
	if c.Engine.KVOffload == nil {
		return 0, false
	}
	n, err := c.offloadBlocks()
	return n, err == nil
}

// offloadBlocks is the CPU tier's size in blocks: engine.kv_offload's
// cpu_blocks, or its size_gib over the bytes of a block summed over the
// tensor-parallel ranks.
func (c Config) offloadBlocks() (int, error) {
	o := c.Engine.KVOffload
	if o.CPUBlocks > 0 {
		return o.CPUBlocks, nil
	}
	m, err := c.Hardware.ResolveModel()
	if err != nil {
		return 0, err
	}
	blocks := math.Floor(o.SizeGiB * (1 << 30) / (c.Hardware.KVBytesPerToken(m) * float64(c.Engine.BlockSize)))
	switch {
	case blocks < 1:
		return 0, fmt.Errorf("engine.kv_offload.size_gib: %g GiB holds no KV block of %d tokens", o.SizeGiB, c.Engine.BlockSize)
	case blocks > maxKVBlocks:
		return 0, fmt.Errorf("engine.kv_offload.size_gib: %g GiB is %.0f KV blocks, more than %d; use a larger engine.block_size", o.SizeGiB, blocks, maxKVBlocks)
	}
	return int(blocks), nil
}

// offloadBandwidthGBs is the GB/s one rank loads offloaded KV at:
// engine.kv_offload.bandwidth_gbs, else the GPU's host link.
func (c Config) offloadBandwidthGBs() (float64, error) {
	if o := c.Engine.KVOffload; o != nil && o.BandwidthGBs > 0 {
		return o.BandwidthGBs, nil
	}
	g, err := c.Hardware.ResolveDevice()
	if err != nil {
		return 0, err
	}
	if !(g.HostBWGBs > 0) {
		return 0, fmt.Errorf("engine.kv_offload.bandwidth_gbs: hardware %q has no host link bandwidth (host_bw_gbs); set one", c.Hardware.GPU)
	}
	return g.HostBWGBs, nil
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

func (e EngineConfig) validate() error {
	return timing.FirstErr(
		timing.OneOf("engine.type", e.Type, "vllm", "sglang", "llamacpp"),
		timing.InRange("engine.block_size", e.BlockSize, 1, maxBlockSize),
		timing.NonNegative("engine.num_gpu_blocks", e.NumGPUBlocks),
		atMost("engine.num_gpu_blocks", e.NumGPUBlocks, maxKVBlocks),
		timing.FiniteIn("engine.gpu_memory_utilization", e.GPUMemoryUtilization, 0.01, 1),
		timing.InRange("engine.max_num_seqs", e.MaxNumSeqs, 0, maxSeqs),
		timing.InRange("engine.max_num_batched_tokens", e.MaxNumBatchedTokens, 0, maxStepTokens),
		timing.OneOf("engine.preemption", e.Preemption, "lifo", "fifo"),
		timing.InRange("engine.max_model_len", e.MaxModelLen, 0, maxContextTokens),
		timing.InRange("engine.sglang.chunked_prefill_size", e.SGLang.ChunkedPrefillSize, 0, maxStepTokens),
		timing.FiniteIn("engine.sglang.new_token_ratio", e.SGLang.NewTokenRatio, 0, 1),
		timing.InRange("engine.llamacpp.parallel", e.LlamaCpp.Parallel, 1, maxSeqs),
		timing.InRange("engine.llamacpp.ctx_size", e.LlamaCpp.CtxSize, 0, maxContextTokens),
		timing.InRange("engine.llamacpp.n_batch", e.LlamaCpp.NBatch, 1, maxStepTokens),
		timing.InRange("engine.llamacpp.reuse_lag_steps", e.LlamaCpp.ReuseLagSteps, 0, 1000),
		timing.OneOf("engine.llamacpp.batch", cmp.Or(e.LlamaCpp.Batch, LlamaCppBatchShared), LlamaCppBatchShared, LlamaCppBatchPerSlot),
		e.validateCtx(),
		e.validateAsync(),
		e.validateOffload(),
	)
}

// validateOffload checks engine.kv_offload: a CPU tier under vLLM's prefix
// cache.
func (e EngineConfig) validateOffload() error {
	o := e.KVOffload
	if o == nil {
		return nil
	}
	if err := timing.FirstErr(timing.InRange("engine.kv_offload.cpu_blocks", o.CPUBlocks, 0, maxKVBlocks),
		timing.FiniteIn("engine.kv_offload.size_gib", o.SizeGiB, 0, 1e6),
		timing.FiniteIn("engine.kv_offload.bandwidth_gbs", o.BandwidthGBs, 0, maxTransferGBs)); err != nil {
		return err
	}
	switch {
	case (o.CPUBlocks > 0) == (o.SizeGiB > 0):
		return errors.New("engine.kv_offload: give the CPU tier's size as one of cpu_blocks and size_gib")
	case e.Type != "vllm":
		return fmt.Errorf("engine.kv_offload: CPU offloading is vLLM's (its OffloadingConnector); engine.type is %s", e.Type)
	case !e.EnablePrefixCaching:
		return errors.New("engine.kv_offload: offloaded blocks are found by their prefix hashes; set engine.enable_prefix_caching")
	}
	return nil
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
		return timing.FirstErr(
			timing.OneOf("router.policy", r.Policy, "round_robin", "random", "least_loaded", "kv"),
			timing.FiniteIn("router.overlap_weight", r.OverlapWeight, 0, 1e6),
			timing.FiniteIn("router.temperature", r.Temperature, 0, 1e6),
		)
	}
}

func (f FrontendConfig) validate() error {
	return timing.FirstErr(timing.FiniteIn("frontend.request_overhead_ms", f.RequestOverheadMs, 0, 1e7),
		timing.FiniteIn("frontend.response_overhead_ms", f.ResponseOverheadMs, 0, 1e7),
		timing.FiniteIn("frontend.arrival_stall_ms", f.ArrivalStallMs, 0, 1e7),
		timing.FiniteIn("frontend.prompt_token_ms", f.PromptTokenMs, 0, 1e3),
		timing.InRange("frontend.template_tokens", f.TemplateTokens, 0, maxContextTokens),
		timing.NonNegative("frontend.concurrency", f.Concurrency), atMost("frontend.concurrency", f.Concurrency, 1<<16),
		timing.FiniteIn("frontend.cpu_share", f.CPUShare, 0, 1), f.validateLoop(), f.validateMode())
}

func (c ClientConfig) validate() error {
	return timing.FirstErr(timing.FiniteIn("client.gap_ms", c.GapMs, 0, 1e7),
		timing.OneOf("client.tie_order", cmp.Or(c.TieOrder, TieOrderTrace), TieOrderTrace, TieOrderRandom),
		validateSamples("client.gap_samples_ms", c.GapSamplesMs),
		timing.FiniteIn("client.stall_ms", c.StallMs, 0, 1e7),
		timing.FiniteIn("client.stall_every_ms", c.StallEveryMs, 0, 1e9), c.validateStalls())
}

func (m ServerMetricsConfig) validate() error {
	return timing.FiniteIn("server_metrics.interval_ms", m.IntervalMs, 1, 1e9)
}

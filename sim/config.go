package sim

import (
	"fmt"

	"github.com/simbench/simbench/sim/timing"
)

// Config is the whole simulator configuration: one YAML document. Every field
// has a default (DefaultConfig); a YAML file only needs the keys it changes.
type Config struct {
	Seed     int64          `yaml:"seed" json:"seed"`       // seeds every random stream (see the package doc)
	Workers  int            `yaml:"workers" json:"workers"` // identical engine replicas behind the router
	Engine   EngineConfig   `yaml:"engine" json:"engine"`
	Router   RouterConfig   `yaml:"router" json:"router"`
	Timing   TimingConfig   `yaml:"timing" json:"timing"`
	Hardware HardwareConfig `yaml:"hardware" json:"hardware"`
	Frontend FrontendConfig `yaml:"frontend" json:"frontend"`
	Client   ClientConfig   `yaml:"client" json:"client"`
	// Disaggregation splits the workers into prefill and decode pools.
	// Absent (nil): aggregated serving.
	Disaggregation *DisaggregationConfig `yaml:"disaggregation,omitempty" json:"disaggregation,omitempty"`
	// ServerMetrics is the Prometheus metrics the simulated servers expose
	// and the virtual scraper that collects them (server_metrics_export.json).
	ServerMetrics ServerMetricsConfig `yaml:"server_metrics" json:"server_metrics"`
	// Calibration is written by `simbench calibrate`: the runs and workload
	// range the timing was fitted on, and how well each parameter is known.
	Calibration *Calibration `yaml:"calibration,omitempty" json:"calibration,omitempty"`

	keyWarnings []error // the document's keys under an old name (KeyWarnings)
}

// KeyWarnings are the warnings of the document the configuration was
// parsed from: each key it spelled the old way (see renamedKeys), with its
// line and the key it was read as. A configuration built in code has none.
func (c Config) KeyWarnings() []error { return c.keyWarnings }

// ServerMetricsConfig controls the simulated /metrics endpoints: Dynamo's
// frontend and one engine endpoint per worker, scraped on the virtual clock
// at the start, every IntervalMs and after the last event, as AIPerf scrapes
// real servers.
type ServerMetricsConfig struct {
	Enabled    bool    `yaml:"enabled" json:"enabled"`         // expose and scrape server metrics
	IntervalMs float64 `yaml:"interval_ms" json:"interval_ms"` // virtual time between scrapes (AIPerf: 333 ms)
}

// EngineConfig is one worker's scheduler and KV cache.
type EngineConfig struct {
	Type                 string  `yaml:"type" json:"type"`                                     // vllm | sglang | llamacpp
	BlockSize            int     `yaml:"block_size" json:"block_size"`                         // tokens per KV block (prefix-cache granularity)
	NumGPUBlocks         int     `yaml:"num_gpu_blocks" json:"num_gpu_blocks"`                 // 0 = derived from hardware and gpu_memory_utilization
	GPUMemoryUtilization float64 `yaml:"gpu_memory_utilization" json:"gpu_memory_utilization"` // fraction of GPU memory for weights + KV
	MaxNumSeqs           int     `yaml:"max_num_seqs" json:"max_num_seqs"`                     // running requests per worker; 0 = the engine's default (see ResolveEngine)
	MaxNumBatchedTokens  int     `yaml:"max_num_batched_tokens" json:"max_num_batched_tokens"` // token budget per step (vllm); 0 = vLLM's default for the device
	EnablePrefixCaching  bool    `yaml:"enable_prefix_caching" json:"enable_prefix_caching"`
	EnableChunkedPrefill bool    `yaml:"enable_chunked_prefill" json:"enable_chunked_prefill"`
	Preemption           string  `yaml:"preemption" json:"preemption"`       // lifo | fifo (vllm)
	MaxModelLen          int     `yaml:"max_model_len" json:"max_model_len"` // 0 = no limit; ISL+OSL above it is rejected
	// AsyncScheduling (vllm, sglang) is a scheduler that plans step N+1
	// while step N runs (vLLM's async scheduling, SGLang's overlap
	// schedule): a request that reaches the engine during a step, while
	// others run, joins not the next step, already planned, but the one
	// after. An idle engine takes a request at once. Unset is the engine's
	// own default (see Async): on for vllm (its default since
	// vllm-project/vllm#27614, before v0.15) and sglang (the overlap
	// scheduler is on unless --disable-overlap-schedule); llamacpp has no
	// such scheduler (its lag is llamacpp.reuse_lag_steps).
	AsyncScheduling *bool          `yaml:"async_scheduling,omitempty" json:"async_scheduling,omitempty"`
	SGLang          SGLangConfig   `yaml:"sglang" json:"sglang"`
	LlamaCpp        LlamaCppConfig `yaml:"llamacpp" json:"llamacpp"`
	// SpeculativeConfig is speculative decoding (vllm; see
	// SpeculativeConfig); nil: off.
	SpeculativeConfig *SpeculativeConfig `yaml:"speculative_config,omitempty" json:"speculative_config,omitempty"`
	// KVOffload is a CPU tier under the prefix cache (vllm); nil: off.
	KVOffload *KVOffloadConfig `yaml:"kv_offload,omitempty" json:"kv_offload,omitempty"`
}

// KVOffloadConfig is vLLM's CPU KV offloading (the OffloadingConnector:
// --kv-offloading-size, or kv_connector_extra_config's cpu_bytes_to_use):
// every prompt block a worker computes is also stored in host memory, a
// least-recently-used cache of CPUBlocks blocks; a request whose prompt's
// next blocks past its GPU prefix-cache hit are there loads them over the
// GPU's host link (each tensor-parallel rank its shard over its own link)
// instead of computing them, and waits for the load before the scheduler
// takes it. The stores copy in the background and cost nothing; a
// worker's loads run one after another.
type KVOffloadConfig struct {
	// The tier's size, one of: CPUBlocks, KV blocks of engine.block_size
	// tokens per worker; or SizeGiB, vLLM's --kv-offloading-size, GiB of
	// host memory per worker summed over its tensor-parallel ranks.
	CPUBlocks    int     `yaml:"cpu_blocks,omitempty" json:"cpu_blocks,omitempty"`
	SizeGiB      float64 `yaml:"size_gib,omitempty" json:"size_gib,omitempty"`
	BandwidthGBs float64 `yaml:"bandwidth_gbs" json:"bandwidth_gbs"` // one rank's load bandwidth, GB/s; 0 = the GPU's host link (host_bw_gbs)
}

// SGLangConfig holds the sglang engine's own knobs.
type SGLangConfig struct {
	ChunkedPrefillSize int     `yaml:"chunked_prefill_size" json:"chunked_prefill_size"` // token budget of one prefill batch; 0 = SGLang's default for the device's memory (see sglangChunk)
	NewTokenRatio      float64 `yaml:"new_token_ratio" json:"new_token_ratio"`           // share of running requests' remaining output reserved at admission
}

// LlamaCppConfig holds the llamacpp engine's own knobs.
type LlamaCppConfig struct {
	Parallel int `yaml:"parallel" json:"parallel"` // slots (OLLAMA_NUM_PARALLEL, llama-server -np)
	CtxSize  int `yaml:"ctx_size" json:"ctx_size"` // total context tokens, split evenly among slots
	NBatch   int `yaml:"n_batch" json:"n_batch"`   // tokens per step (prompt chunks + one per decoding slot)
	// Batch is how n_batch bounds a step: "shared" (llama-server: n_batch
	// tokens per step over all slots, decodes first) or "per_slot"
	// (Ollama's runner: up to n_batch prompt tokens per slot, every slot's
	// tokens in one decode call).
	Batch string `yaml:"batch,omitempty" json:"batch,omitempty"`
	// ReuseLagSteps is how many steps a request that becomes ready while
	// other slots run waits beyond the next one: a slot freed stays empty,
	// and a request reaching the runner during a step joins not the next
	// step but the one after. Ollama's runner: 1 (the request's handler
	// needs the lock the runner's loop holds for a whole step; the loop
	// takes it again first, and Go's mutex hands it to the waiter only at
	// the next unlock); llama-server assigns slots in its own loop: 0.
	ReuseLagSteps int `yaml:"reuse_lag_steps,omitempty" json:"reuse_lag_steps,omitempty"`
}

// The llamacpp engine's batching modes (LlamaCppConfig.Batch).
const (
	LlamaCppBatchShared  = "shared"
	LlamaCppBatchPerSlot = "per_slot"
)

// RouterConfig chooses a worker for each request.
type RouterConfig struct {
	Policy        string  `yaml:"policy" json:"policy"`                 // round_robin | random | least_loaded | kv
	OverlapWeight float64 `yaml:"overlap_weight" json:"overlap_weight"` // kv: weight of prefill blocks in the cost
	Temperature   float64 `yaml:"temperature" json:"temperature"`       // kv: softmax temperature, 0 = argmin
}

// FrontendConfig models the server's HTTP frontend and network around the
// engine: the work on each request between the client's send and the
// router, and each token's way back.
type FrontendConfig struct {
	// Mode is the frontend's discipline: how the requests' work shares the
	// server (see Discipline): unbounded (each request on its own handler),
	// handlers (concurrency handlers, FIFO), event_loop (cpu_share of the
	// work on one shared event loop) or hold_for_slot (a gate of
	// engine.llamacpp.parallel in front of the handlers). "" takes it from
	// the keys that set one: cpu_share, hold_for_slot, concurrency.
	Mode               string  `yaml:"mode,omitempty" json:"mode,omitempty"`
	RequestOverheadMs  float64 `yaml:"request_overhead_ms" json:"request_overhead_ms"`   // client send → router/engine arrival
	ResponseOverheadMs float64 `yaml:"response_overhead_ms" json:"response_overhead_ms"` // engine token → client receipt, every token
	// Concurrency is how many requests the frontend prepares at once
	// (parsing, chat template, tokenisation: request_overhead_ms plus
	// prompt_token_ms per prompt token each); more wait their turn in
	// arrival order. 1 is a frontend that handles one request at a time
	// (vLLM's single-process API server); Ollama's server prepares as many
	// as it has cores; 0 is unbounded: simultaneous sends reach the engine
	// together. It decides whether a burst's first request starts an
	// engine step on its own or the burst batches as one.
	Concurrency int `yaml:"concurrency,omitempty" json:"concurrency,omitempty"`
	// CPUShare is the share of each request's frontend work
	// (request_overhead_ms + prompt_token_ms × ISL) that is CPU on the
	// server's one event loop, a single-process Python API server's
	// (vLLM's, SGLang's: it never uses more than one core). The requests
	// it prepares at once share that core equally (processor sharing), so
	// k sent together all reach the engine after k·share + (1 − share) of
	// one request's work; the rest is latency that overlaps the others'
	// (waits on tokenizer threads, the hand-off to the engine). Alone, a
	// request takes its whole work either way: runs of one request at a
	// time cannot show the share. 0 is none. Instead of concurrency.
	CPUShare float64 `yaml:"cpu_share,omitempty" json:"cpu_share,omitempty"`
	// ArrivalStallMs is the CPU the server's work on one request (HTTP,
	// chat template, tokenisation, handing it to the runner) takes from a
	// CPU engine that shares its cores: that work lasts the request's
	// frontend time, and every step beside it is stretched by this times
	// the share of it the step overlaps (none beside an idle engine). 0 for
	// an engine on its own device (a GPU). calibrate fits it from the token
	// gaps of the steps beside the requests' frontend windows.
	ArrivalStallMs float64 `yaml:"arrival_stall_ms,omitempty" json:"arrival_stall_ms,omitempty"`
	// HoldForSlot is a server that lets only as many requests through to
	// the engine as it has slots (engine.llamacpp.parallel) and holds the
	// rest before any work on them: Ollama's server takes a semaphore of
	// NUM_PARALLEL before it hands a request to its runner, and the
	// request's path to the runner (request_overhead_ms, prompt_token_ms)
	// starts when a running request finishes. So at a concurrency above
	// the slots a freed slot stays empty for that path, and a closed
	// loop's next batch of prompts reaches the runner after the batch
	// before it has finished decoding, not beside its last steps.
	// false: every request reaches the engine's own queue at once
	// (llama-server, vLLM). One server: workers 1, aggregated.
	HoldForSlot bool `yaml:"hold_for_slot,omitempty" json:"hold_for_slot,omitempty"`
	// PromptTokenMs is the frontend's work per prompt token on top of
	// request_overhead_ms (parsing, chat template, tokenisation), in the
	// same handler. With a bounded concurrency it decides which of a
	// burst's requests a handler finishes first: Ollama's server, given a
	// 135- and a 915-token prompt at once, hands the short one to the
	// runner first in 23 of 24 pairs. Its size hardly matters next to the
	// engine's steps (Ollama's: about 1 µs a token); that it is not 0 does.
	PromptTokenMs float64 `yaml:"prompt_token_ms,omitempty" json:"prompt_token_ms,omitempty"`
	// TemplateTokens are the tokens the server's chat template adds to
	// every prompt: the engine computes them and counts them in the prompt
	// (usage.prompt_tokens), on top of the workload's ISL. calibrate
	// measures them from runs that took ISL from the server.
	TemplateTokens int `yaml:"template_tokens,omitempty" json:"template_tokens,omitempty"`
}

// The frontend's disciplines (FrontendConfig.Mode).
const (
	FrontendUnbounded   = "unbounded"
	FrontendHandlers    = "handlers"
	FrontendEventLoop   = "event_loop"
	FrontendHoldForSlot = "hold_for_slot"
)

// FrontendModes lists the frontend's disciplines.
func FrontendModes() []string {
	return []string{FrontendUnbounded, FrontendHandlers, FrontendEventLoop, FrontendHoldForSlot}
}

// Discipline is the frontend's mode: Mode when set, else the one its keys
// set: event_loop with cpu_share, hold_for_slot with hold_for_slot,
// handlers with a concurrency, else unbounded.
func (f FrontendConfig) Discipline() string {
	switch {
	case f.Mode != "":
		return f.Mode
	case f.CPUShare > 0:
		return FrontendEventLoop
	case f.HoldForSlot:
		return FrontendHoldForSlot
	case f.Concurrency > 0:
		return FrontendHandlers
	}
	return FrontendUnbounded
}

// ClientConfig is what the load generator does apart from the server: its
// own time between a response and the next send, its stalls, and the order
// of simultaneous sends. (Before the client: section these were
// frontend.client_gap_ms, client_gap_samples_ms, client_stall_ms,
// client_stall_every_ms and tie_order, which still load; see renamedKeys.)
type ClientConfig struct {
	// GapMs is the load generator's own time between a response's end and
	// the next request it sends from the freed slot or session (closed
	// loop, concurrency caps, later turns). AIPerf's is visible in its
	// exports as benchmark_duration beyond the requests' latencies.
	GapMs float64 `yaml:"gap_ms" json:"gap_ms"`
	// GapSamplesMs, when set, are measured client gaps (or their
	// percentiles): each gap is one of them drawn at random, so the gap
	// varies as the real client's did (calibrate measures them from a
	// closed-loop run's records). gap_ms is then unused.
	GapSamplesMs []float64 `yaml:"gap_samples_ms,omitempty" json:"gap_samples_ms,omitempty"`
	// StallMs and StallEveryMs are the load generator's own stalls: once
	// every stall_every_ms (from half of it in) each slot's next send
	// waits stall_ms more. AIPerf's exports show them as client gaps of
	// seconds among gaps of milliseconds (calibrate measures both); each
	// slot has a worker process of its own, and the workers stall in step,
	// so the slots keep their phase. 0: none.
	StallMs      float64 `yaml:"stall_ms,omitempty" json:"stall_ms,omitempty"`
	StallEveryMs float64 `yaml:"stall_every_ms,omitempty" json:"stall_every_ms,omitempty"`
	// TieOrder is the order in which requests sent at the same instant
	// reach the frontend: "trace" (the workload's order; the default) or
	// "random" (seeded by seed): a real client sends them on concurrent
	// connections, and which one the server reads first is a race. Which
	// one it finishes preparing first is then up to the frontend's
	// handlers (frontend.concurrency, frontend.prompt_token_ms).
	TieOrder string `yaml:"tie_order,omitempty" json:"tie_order,omitempty"`
}

// The orders of simultaneous sends (ClientConfig.TieOrder).
const (
	TieOrderTrace  = "trace"
	TieOrderRandom = "random"
)

// DefaultConfig is one H100 running Llama-3.1-8B in bf16 under a vLLM-like
// scheduler, timed by the physics model with the GPU priors fitted on
// public vLLM runs (DefaultGPUPrior: it sees the GPU, model and tensor
// parallelism named); enough KV (about 6,800 blocks of 64 tokens) for the
// longest prompts of the Mooncake traces. DynoSim's polynomial stays
// configured for timing.model poly.
func DefaultConfig() Config {
	c := Config{
		Seed:    0,
		Workers: 1,
		Engine: EngineConfig{
			Type: "vllm", BlockSize: 64, GPUMemoryUtilization: 0.9,
			EnablePrefixCaching: true, EnableChunkedPrefill: true,
			Preemption: "lifo",
			SGLang:     SGLangConfig{NewTokenRatio: 0.7},
			LlamaCpp:   LlamaCppConfig{Parallel: 4, CtxSize: 16384, NBatch: 512},
		},
		Router:        RouterConfig{Policy: "round_robin", OverlapWeight: 1, Temperature: 0},
		Timing:        timing.DefaultTimingConfig(),
		Hardware:      timing.DefaultHardwareConfig(),
		ServerMetrics: ServerMetricsConfig{Enabled: true, IntervalMs: 333},
	}
	ApplyPrior(DefaultGPUPrior(), &c)
	return c
}

// Async says whether the engine plans a step ahead: async_scheduling when
// set, else the engine's default (vllm and sglang yes, llamacpp no).
func (e EngineConfig) Async() bool {
	if e.AsyncScheduling != nil {
		return *e.AsyncScheduling
	}
	return e.Type == "vllm" || e.Type == "sglang"
}

// KVBlocks is the number of KV blocks of one worker: engine.num_gpu_blocks,
// or (GPU memory × tensor_parallel × gpu_memory_utilization − weights) /
// (KV bytes per token × block_size). Activations and CUDA graphs are not
// reserved, so the derived figure is an upper bound of what vLLM reports.
func (c Config) KVBlocks() (int, error) {
	if c.Engine.NumGPUBlocks > 0 {
		return c.Engine.NumGPUBlocks, nil
	}
	g, err := c.Hardware.ResolveDevice()
	if err != nil {
		return 0, err
	}
	m, err := c.Hardware.ResolveModel()
	if err != nil {
		return 0, err
	}
	dw, dkv, err := c.drafterMemory()
	if err != nil {
		return 0, err
	}
	weights := c.Hardware.WeightMemBytes(m) + dw
	mem := g.MemGB * 1e9 * float64(c.Hardware.TensorParallel) * c.Engine.GPUMemoryUtilization
	free := mem - weights
	blocks := free / ((c.Hardware.KVBytesPerToken(m) + dkv) * float64(c.Engine.BlockSize))
	if blocks > maxKVBlocks {
		return 0, fmt.Errorf("engine.num_gpu_blocks: the derived %.0f blocks exceed %d; set num_gpu_blocks or a larger block_size", blocks, maxKVBlocks)
	}
	if blocks < 1 {
		return 0, fmt.Errorf("engine.num_gpu_blocks: %s (%.1f GB of weights) leaves no KV memory on %d×%s at gpu_memory_utilization %g; set num_gpu_blocks or more tensor_parallel",
			c.Hardware.ModelName(), weights/1e9, c.Hardware.TensorParallel, c.Hardware.GPU, c.Engine.GPUMemoryUtilization)
	}
	return int(blocks), nil
}

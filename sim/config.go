package sim

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
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
	MaxNumSeqs           int     `yaml:"max_num_seqs" json:"max_num_seqs"`                     // running requests per worker
	MaxNumBatchedTokens  int     `yaml:"max_num_batched_tokens" json:"max_num_batched_tokens"` // token budget per step (vllm)
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

// TimingConfig chooses how long one engine step takes.
type TimingConfig struct {
	Model   string  `yaml:"model" json:"model"`     // poly | linear | roofline | physics | table
	Speedup float64 `yaml:"speedup" json:"speedup"` // every step time is divided by it
	// Jitter is the coefficient of variation of a step's time: each step is
	// multiplied by a lognormal factor of mean 1 drawn from the worker's own
	// seeded stream (0 = deterministic step times). Real engines' token gaps
	// vary by a few percent; without it every synchronised request is alike.
	Jitter float64 `yaml:"jitter" json:"jitter"`
	// StallMs, StallCV and StallsPerStep are host stalls: every step waits
	// out a Poisson number (mean stalls_per_step) of stalls, each lasting a
	// lognormal time of mean stall_ms and coefficient of variation
	// stall_cv, within the step's modelled mean. A CPU engine on a shared
	// host shows them: its threads meet after every operation, and one
	// that lost its vCPU holds the rest until the host gives it back. The
	// step's mean is unchanged; its spread becomes what the token gaps show
	// (most steps clean, some a whole stall longer), and so do the tails of
	// per-request ITL and latency. 0 = none; calibrate fits them from the
	// token gaps.
	StallMs       float64 `yaml:"stall_ms,omitempty" json:"stall_ms,omitempty"`
	StallCV       float64 `yaml:"stall_cv,omitempty" json:"stall_cv,omitempty"`
	StallsPerStep float64 `yaml:"stalls_per_step,omitempty" json:"stalls_per_step,omitempty"`
	// DriftCV and DriftPeriodMs are the worker's slow drift of speed: every
	// step is multiplied by a lognormal factor of mean 1 and coefficient of
	// variation drift_cv, the same for every step of a period of
	// drift_period_ms of the run's clock and drawn anew for the next. A
	// device shared with other work shows it: whole requests run a few
	// percent slower or faster, a spread of per-request ITL and latency
	// that step jitter, averaged over a request's tokens, cannot make.
	// 0 = none; calibrate fits them from the real runs' per-request ITL.
	DriftCV       float64        `yaml:"drift_cv,omitempty" json:"drift_cv,omitempty"`
	DriftPeriodMs float64        `yaml:"drift_period_ms,omitempty" json:"drift_period_ms,omitempty"`
	Poly          PolyConfig     `yaml:"poly" json:"poly"`
	Linear        LinearConfig   `yaml:"linear" json:"linear"`
	Roofline      RooflineConfig `yaml:"roofline" json:"roofline"`
	Physics       PhysicsConfig  `yaml:"physics" json:"physics"`
	Table         TableConfig    `yaml:"table" json:"table"`
}

// PolyConfig is DynoSim's polynomial model: prefill_ms = p0 + p1·T + p2·T²
// over the step's new prefill tokens T, decode_ms = max(floor, d0 + d1·u +
// d2·u²) over KV utilisation u; a step with both pays both.
type PolyConfig struct {
	Prefill       []float64 `yaml:"prefill" json:"prefill"` // p0 (ms), p1 (ms/token), p2 (ms/token²)
	Decode        []float64 `yaml:"decode" json:"decode"`   // d0, d1, d2 (ms)
	DecodeFloorMs float64   `yaml:"decode_floor_ms" json:"decode_floor_ms"`
}

// LinearConfig is step_ms = base + prefill_token·P + decode_seq·D +
// context_token·C, with P the prefill tokens computed in the step, D the
// decoding sequences and C the context tokens whose KV the step reads.
type LinearConfig struct {
	BaseMs         float64 `yaml:"base_ms" json:"base_ms"`
	PrefillTokenMs float64 `yaml:"prefill_token_ms" json:"prefill_token_ms"`
	DecodeSeqMs    float64 `yaml:"decode_seq_ms" json:"decode_seq_ms"`
	ContextTokenMs float64 `yaml:"context_token_ms" json:"context_token_ms"`
}

// RooflineConfig tunes the roofline model built from hardware.
type RooflineConfig struct {
	Efficiency     float64 `yaml:"efficiency" json:"efficiency"`             // achieved fraction of peak FLOP/s and bandwidth
	StepOverheadMs float64 `yaml:"step_overhead_ms" json:"step_overhead_ms"` // fixed CPU/launch cost per step
}

// PhysicsConfig is the physics-structured step time that calibrate fits:
//
//	step_ms = combine(compute_ms/compute_efficiency + attention_ms/attention_efficiency,
//	                  weights_ms/memory_efficiency + kv_ms/kv_efficiency)
//	        + step_overhead_ms + seq_overhead_ms·sequences
//	        + multi_token_overhead_ms  (a step of two or more tokens)
//	        + prefill_overhead_ms      (a step that computes a prompt chunk)
//
// compute_ms and the memory times are the step's FLOPs and bytes at the
// device's peaks (see Physics), from hardware.model and hardware.cpu or
// .gpu; the sequences are those with prompt tokens or a decode in the step.
type PhysicsConfig struct {
	ComputeEfficiency float64 `yaml:"compute_efficiency" json:"compute_efficiency"` // achieved fraction of peak FLOP/s
	MemoryEfficiency  float64 `yaml:"memory_efficiency" json:"memory_efficiency"`   // achieved fraction of peak bandwidth
	// AttentionEfficiency is the achieved fraction of peak FLOP/s on the
	// attention FLOPs (QKᵀ and AV over each token's context); 0 takes
	// compute_efficiency. A CPU engine's attention (a vector kernel per
	// query row) reaches a fraction of what its matrix multiplications do,
	// so a long prompt's prefill grows quadratically faster than one
	// efficiency for both predicts.
	AttentionEfficiency float64 `yaml:"attention_efficiency,omitempty" json:"attention_efficiency,omitempty"`
	// KVEfficiency is the achieved fraction of peak bandwidth on the KV
	// cache's traffic (each token's context read, the step's tokens
	// written); 0 takes memory_efficiency, which then prices the weights
	// alone. The weights stream once per step whatever its shape, so the
	// token gaps cannot tell their time from step_overhead_ms; the KV
	// traffic grows with every sequence's context, which the gaps see. One
	// efficiency for both made the context slope set the weights' time: on
	// the CPU engine that put more into every step than a decode at
	// concurrency 1 takes.
	KVEfficiency   float64 `yaml:"kv_efficiency,omitempty" json:"kv_efficiency,omitempty"`
	StepOverheadMs float64 `yaml:"step_overhead_ms" json:"step_overhead_ms"` // fixed cost per step (launch, scheduling)
	SeqOverheadMs  float64 `yaml:"seq_overhead_ms" json:"seq_overhead_ms"`   // per sequence in the step (sampling, detokenising)
	// MultiTokenOverheadMs is added to every step that computes two or
	// more tokens. ggml's CPU backend (llama.cpp, Ollama) runs a one-token
	// step's matrix products as vector dot products and hands two or more
	// tokens to llamafile's tiled GEMM (its sgemm declines n < 2), a
	// different kernel with its own cost. Timed around llama_decode in
	// Ollama's runner on a 2-vCPU VM (modes): one decode 2.25 ms, two 3.5,
	// four 5.0; a cost per sequence that gives two 3.5 gives four 6.0.
	MultiTokenOverheadMs float64 `yaml:"multi_token_overhead_ms,omitempty" json:"multi_token_overhead_ms,omitempty"`
	// PrefillOverheadMs is added to every step that computes a prompt
	// chunk. A GPU serving engine replays one captured CUDA graph for a
	// step of decodes alone, while a step with a prompt runs its attention
	// eagerly between graph pieces (vLLM V1's piecewise graphs; SGLang
	// captures decodes only): more kernel launches, a fixed cost that on a
	// small model is not small beside the step.
	PrefillOverheadMs float64 `yaml:"prefill_overhead_ms,omitempty" json:"prefill_overhead_ms,omitempty"`
	Combine           string  `yaml:"combine" json:"combine"` // sum | max | smooth
}

// TableConfig names a CSV of measured step times (see LoadTable).
type TableConfig struct {
	File string `yaml:"file" json:"file"`
}

// HardwareConfig describes the model and GPUs of one worker. It sizes the KV
// cache when engine.num_gpu_blocks is 0 and drives the roofline model.
type HardwareConfig struct {
	GPU            string     `yaml:"gpu" json:"gpu"`                     // preset name or "custom"
	CPU            string     `yaml:"cpu,omitempty" json:"cpu,omitempty"` // preset name or "custom": a CPU engine (gpu is then ignored)
	Model          string     `yaml:"model" json:"model"`                 // preset name or "custom"
	TensorParallel int        `yaml:"tensor_parallel" json:"tensor_parallel"`
	DType          string     `yaml:"dtype" json:"dtype"` // bf16 | fp16 | fp8 | fp32 (activations; weights and KV unless set apart)
	CustomGPU      *GPUSpec   `yaml:"custom_gpu,omitempty" json:"custom_gpu,omitempty"`
	CustomModel    *ModelSpec `yaml:"custom_model,omitempty" json:"custom_model,omitempty"`
	CustomCPU      *CPUSpec   `yaml:"custom_cpu,omitempty" json:"custom_cpu,omitempty"`
	// ModelConfig is a Hugging Face config.json (see ModelFromHFConfig):
	// when set, it is the model and hardware.model only names it (a
	// document or --model-config that gives no name leaves it empty, not
	// the default preset's). A relative path is opened from the working
	// directory, as timing.table.file is.
	ModelConfig string `yaml:"model_config,omitempty" json:"model_config,omitempty"`
	// WeightDType is the layer weights' precision: bf16 | fp16 | fp8 |
	// int8 | int4; "" = the model's (a quantized config.json's
	// quantization_config), else dtype. fp8 weights compute at the fp8 rate where
	// the GPU has one; int8 and int4 are weight-only (W8A16, W4A16): fewer
	// bytes, the 16-bit rate and a dequantization cost.
	WeightDType string `yaml:"weight_dtype,omitempty" json:"weight_dtype,omitempty"`
	// KVCacheDType is the KV cache's precision: auto | bf16 | fp16 | fp8;
	// "" and auto = dtype.
	KVCacheDType string `yaml:"kv_cache_dtype,omitempty" json:"kv_cache_dtype,omitempty"`
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
			Type: "vllm", BlockSize: 64, GPUMemoryUtilization: 0.9, MaxNumSeqs: 256,
			MaxNumBatchedTokens: 8192, EnablePrefixCaching: true, EnableChunkedPrefill: true,
			Preemption: "lifo",
			SGLang:     SGLangConfig{NewTokenRatio: 0.7},
			LlamaCpp:   LlamaCppConfig{Parallel: 4, CtxSize: 16384, NBatch: 512},
		},
		Router: RouterConfig{Policy: "round_robin", OverlapWeight: 1, Temperature: 0},
		Timing: TimingConfig{
			Model: "poly", Speedup: 1,
			Poly: PolyConfig{Prefill: []float64{16.50142, 1.518344e-02, 4.209989e-07},
				Decode: []float64{5.74, 54.01, -25.74}, DecodeFloorMs: 1},
			Roofline: RooflineConfig{Efficiency: 0.6, StepOverheadMs: 1},
			Physics: PhysicsConfig{ComputeEfficiency: 0.5, MemoryEfficiency: 0.7, StepOverheadMs: 1,
				SeqOverheadMs: 0.02, Combine: "sum"},
		},
		Hardware:      HardwareConfig{GPU: "h100", Model: "llama-3.1-8b", TensorParallel: 1, DType: "bf16"},
		ServerMetrics: ServerMetricsConfig{Enabled: true, IntervalMs: 333},
	}
	DefaultGPUPrior().Apply(&c)
	return c
}

// LoadConfig reads a YAML file over DefaultConfig. Unknown keys are errors
// naming the file, line and full key; a renamed key's warning
// (KeyWarnings) names the file too.
func LoadConfig(path string) (Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Config{}, err
	}
	cfg, err := ParseConfig(b)
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	for i, w := range cfg.keyWarnings {
		cfg.keyWarnings[i] = fmt.Errorf("%s: %w", path, w)
	}
	return cfg, nil
}

// LoadConfigOrDefault is LoadConfig, or DefaultConfig when path is "".
func LoadConfigOrDefault(path string) (Config, error) {
	if path == "" {
		return DefaultConfig(), nil
	}
	return LoadConfig(path)
}

// ParseConfig parses a YAML document over DefaultConfig. It does not
// validate values; call Validate.
func ParseConfig(b []byte) (Config, error) {
	cfg := DefaultConfig()
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		return cfg, err
	}
	if len(root.Content) == 0 {
		return cfg, nil // empty document
	}
	warns, err := moveRenamed(root.Content[0])
	if err != nil {
		return cfg, err
	}
	if err := checkKeys(root.Content[0], reflect.TypeOf(cfg), ""); err != nil {
		return cfg, err
	}
	if mappingValue(root.Content[0], "disaggregation") != nil {
		cfg.Disaggregation = DefaultDisaggregation() // the keys given are decoded over its defaults
	}
	if err := root.Decode(&cfg); err != nil { // checkKeys has refused every unknown key
		return cfg, err
	}
	cfg.keyWarnings = warns
	unnameModel(root.Content[0], &cfg.Hardware)
	if err := resolvePools(root.Content[0], &cfg); err != nil {
		return cfg, err
	}
	if cfg.Disaggregated() && mappingValue(root.Content[0], "workers") == nil {
		cfg.Workers = cfg.Disaggregation.PrefillWorkers + cfg.Disaggregation.DecodeWorkers
	}
	return cfg, nil
}

// unnameModel clears the default hardware.model when the document gives
// hardware.model_config without a model name: the preset's name would
// label a run of another model.
func unnameModel(root *yaml.Node, h *HardwareConfig) {
	if hw := mappingValue(root, "hardware"); hw != nil && mappingValue(hw, "model_config") != nil && mappingValue(hw, "model") == nil {
		h.Model = ""
	}
}

// checkKeys reports the first mapping key of n that t has no field for, with
// its line and dotted path.
func checkKeys(n *yaml.Node, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Slice && n.Kind == yaml.SequenceNode {
		for i, e := range n.Content {
			if err := checkKeys(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		return nil
	}
	if t.Kind() != reflect.Struct || n.Kind != yaml.MappingNode {
		return nil
	}
	fields := yamlFields(t)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key := joinKey(path, k.Value)
		ft, ok := fields[k.Value]
		if !ok {
			return fmt.Errorf("line %d: unknown key %q (known under %s: %s)",
				k.Line, key, orRoot(path), strings.Join(sortedKeys(fields), ", "))
		}
		if err := checkInts(v, ft, key); err != nil {
			return err
		}
		if err := checkKeys(v, ft, key); err != nil {
			return err
		}
	}
	return nil
}

// checkInts refuses a non-integer scalar (2.5, 1e3) for an integer key, or
// in a list of integers: the YAML decoder would truncate it silently.
func checkInts(v *yaml.Node, t reflect.Type, key string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Slice && v.Kind == yaml.SequenceNode {
		for i, e := range v.Content {
			if err := checkInts(e, t.Elem(), fmt.Sprintf("%s[%d]", key, i)); err != nil {
				return err
			}
		}
		return nil
	}
	if v.Kind != yaml.ScalarNode || !isIntKind(t.Kind()) || v.ShortTag() == "!!int" || v.ShortTag() == "!!null" {
		return nil
	}
	return fmt.Errorf("line %d: %s: want an integer, got %s", v.Line, key, v.Value)
}

func isIntKind(k reflect.Kind) bool {
	return k >= reflect.Int && k <= reflect.Uint64
}

func yamlFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "" || name == "-" {
			continue
		}
		out[name] = f.Type
	}
	return out
}

func joinKey(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

func orRoot(path string) string {
	if path == "" {
		return "the top level"
	}
	return path
}

// configDocs comments the keys of the YAML written by Config.YAML.
var configDocs = map[string]string{
	"seed":                                     "seeds the six kinds of random stream: router, step jitter and stalls, drift, client gaps, tie order, speculative acceptance",
	"workers":                                  "identical engine replicas behind the router",
	"engine.type":                              "vllm | sglang | llamacpp",
	"engine.block_size":                        "tokens per KV block (prefix-cache granularity)",
	"engine.num_gpu_blocks":                    "KV blocks per worker; 0 = from hardware and gpu_memory_utilization",
	"engine.max_num_seqs":                      "running requests per worker (vllm, sglang)",
	"engine.max_num_batched_tokens":            "token budget of a vllm step",
	"engine.preemption":                        "vllm victim when KV runs out: lifo (newest) | fifo",
	"engine.async_scheduling":                  "vllm, sglang: step N+1 is planned while step N runs, so a request reaching a busy engine waits a step more (vLLM's async scheduling, SGLang's overlap schedule); unset = the engine's default (on for vllm and sglang)",
	"engine.max_model_len":                     "0 = no limit; longer ISL+OSL is rejected",
	"engine.sglang.chunked_prefill_size":       "token budget of an sglang prefill step; 0 = SGLang's default for the GPU's memory (2048 below 35 GiB, 4096 below 60, 8192 below 160, else 16384; 4096 on a CPU)",
	"engine.sglang.new_token_ratio":            "share of running requests' remaining output kept free at admission",
	"engine.llamacpp.parallel":                 "slots (OLLAMA_NUM_PARALLEL, llama-server -np)",
	"engine.llamacpp.ctx_size":                 "total context tokens, split evenly among the slots",
	"engine.llamacpp.n_batch":                  "tokens per step",
	"engine.llamacpp.batch":                    "shared (llama-server; the default) | per_slot (Ollama's runner: n_batch per slot)",
	"engine.llamacpp.reuse_lag_steps":          "steps beyond the next that a freed slot stays empty, or a request reaching the runner mid-step waits, while others run (Ollama's runner: 1; llama-server: 0)",
	"router.policy":                            "round_robin | random | least_loaded | kv",
	"router.overlap_weight":                    "kv: cost = overlap_weight × prefill blocks + decode blocks",
	"router.temperature":                       "kv: softmax temperature; 0 = cheapest worker",
	"timing.model":                             "poly | linear | roofline | physics | table",
	"timing.speedup":                           "every step time is divided by it",
	"timing.jitter":                            "coefficient of variation of a lognormal factor of mean 1 on every step",
	"timing.stall_ms":                          "mean host stall: a step that draws one waits about this long (a CPU engine on a shared host)",
	"timing.stall_cv":                          "coefficient of variation of one stall's (lognormal) duration",
	"timing.stalls_per_step":                   "mean (Poisson) stalls per step, within the step's modelled mean; 0 = none",
	"timing.drift_cv":                          "coefficient of variation of the worker's slowly drifting speed (a lognormal factor of mean 1 per period); 0 = none",
	"timing.drift_period_ms":                   "how long one drift factor holds, on the run's clock",
	"timing.poly.prefill":                      "DynoSim: ms = p0 + p1·T + p2·T² over new prompt tokens T",
	"timing.poly.decode":                       "DynoSim: ms = d0 + d1·u + d2·u² over KV utilisation u",
	"timing.linear.base_ms":                    "step ms = base + prefill_token·P + decode_seq·D + context_token·C",
	"timing.roofline.efficiency":               "achieved fraction of peak FLOP/s and bandwidth",
	"timing.physics.compute_efficiency":        "step ms = combine(compute/eff, memory/eff) + step_overhead + seq_overhead·sequences",
	"timing.physics.combine":                   "sum | max | smooth (2-norm) of the compute and memory times",
	"timing.physics.attention_efficiency":      "of peak FLOP/s on attention FLOPs; 0 = compute_efficiency",
	"timing.physics.kv_efficiency":             "of peak bandwidth on KV cache traffic; 0 = memory_efficiency",
	"timing.physics.multi_token_overhead_ms":   "added to a step of two or more tokens (ggml CPU: GEMM, not one token's vector products)",
	"timing.physics.prefill_overhead_ms":       "added to a step that computes a prompt chunk (GPU: run outside the decode steps' CUDA graph)",
	"hardware.cpu":                             "x86-64-v3-2vcpu | x86-64-v4-8vcpu | apple-m2 | custom: a CPU engine",
	"hardware.custom_cpu.threads":              "cores the engine computes on (llama.cpp -t, Ollama num_thread); 0 = all",
	"timing.table.file":                        "CSV: prefill_tokens,decode_seqs,step_ms (a full grid)",
	"hardware.gpu":                             "h100 | h100-pcie | h200 | b200 | gb200 | a100 | a100-40gb | l40s | rtx-4090 | rtx-pro-6000 | rtx-6000-ada | custom",
	"hardware.model":                           "preset name or custom (see hardware.custom_model); with hardware.model_config only a name (default: none)",
	"hardware.model_config":                    "a Hugging Face config.json (dense or mixture of experts): the model; a relative path is opened from the working directory",
	"hardware.dtype":                           "bf16 | fp16 | fp8 | fp32 (activations; weights and KV unless weight_dtype, kv_cache_dtype say otherwise)",
	"hardware.weight_dtype":                    "bf16 | fp16 | fp8 | int8 | int4; default: model_config's quantization_config, else dtype (fp8: the fp8 rate; int8/int4: weight-only, 16-bit rate plus dequantization)",
	"hardware.kv_cache_dtype":                  "auto | bf16 | fp16 | fp8; default (auto) dtype",
	"hardware.custom_gpu.link_latency_us":      "fixed cost of one all-reduce; two per layer under tensor_parallel > 1",
	"hardware.custom_model.experts":            "routed experts per MoE layer; 0 = dense (then experts_per_token, expert_intermediate, shared_intermediate, moe_layers unset)",
	"frontend.request_overhead_ms":             "client send → engine arrival",
	"frontend.response_overhead_ms":            "engine token → client, every token",
	"frontend.concurrency":                     "requests the frontend prepares at once (request_overhead_ms + prompt_token_ms × ISL each, FIFO); 0 = unbounded",
	"frontend.cpu_share":                       "share of each request's frontend work that is CPU on the server's one event loop, shared by the requests it prepares at once (vLLM's, SGLang's API server); 0 = none",
	"frontend.prompt_token_ms":                 "frontend work per prompt token (template, tokenisation): of a burst, a shorter prompt is ready first",
	"frontend.template_tokens":                 "tokens the chat template adds to every prompt (computed and counted in ISL)",
	"frontend.arrival_stall_ms":                "the server's work on a request stretches the steps beside it by this in all, pro rata over its frontend time (a CPU engine sharing its cores)",
	"frontend.hold_for_slot":                   "the server holds requests beyond engine.llamacpp.parallel before its work on them, until one finishes (Ollama's NUM_PARALLEL semaphore)",
	"disaggregation.prefill_workers":           "0 = aggregated serving; else workers = prefill_workers + decode_workers",
	"disaggregation.decode_workers":            "workers that receive the KV and generate every token",
	"disaggregation.max_local_prefill_tokens":  "conditional: prompts with at most this many tokens uncached on the decode worker prefill there; 0 = always remote",
	"disaggregation.kv_transfer.bandwidth_gbs": "GB/s of one transfer (bytes = tokens × layers × kv_heads × head_dim × 2 × dtype)",
	"disaggregation.kv_transfer.latency_ms":    "fixed cost of a transfer",
	"disaggregation.kv_transfer.contention":    "true: transfers moving at once share one bandwidth_gbs link fairly",
	"disaggregation.prefill":                   "the prefill pool's engine, hardware, timing (over the top-level sections)",
	"disaggregation.decode":                    "the decode pool's engine, hardware, timing (over the top-level sections)",
	"server_metrics.enabled":                   "expose Dynamo/engine Prometheus metrics and write server_metrics_export.json",
	"server_metrics.interval_ms":               "virtual ms between scrapes (gauges; histograms at start and end)",

	// More keys (a block of its own so that the one above keeps its alignment).
	"engine.gpu_memory_utilization":             "fraction of GPU memory for weights + KV (sizes num_gpu_blocks when 0)",
	"engine.enable_prefix_caching":              "full prompt blocks are cached and reused by later prompts with the same hash_ids",
	"engine.enable_chunked_prefill":             "a prompt above the step's token budget is computed in chunks beside decodes",
	"timing.poly.decode_floor_ms":               "DynoSim: a decode step takes at least this",
	"timing.linear.prefill_token_ms":            "per prompt token computed in the step",
	"timing.linear.decode_seq_ms":               "per decoding sequence in the step",
	"timing.linear.context_token_ms":            "per context token whose KV the step reads",
	"timing.roofline.step_overhead_ms":          "fixed CPU/launch cost per step",
	"timing.physics.memory_efficiency":          "achieved fraction of peak bandwidth on weights (and KV when kv_efficiency is 0)",
	"timing.physics.step_overhead_ms":           "fixed cost per step (launch, scheduling)",
	"timing.physics.seq_overhead_ms":            "per sequence in the step (sampling, detokenising)",
	"hardware.tensor_parallel":                  "GPUs per worker; weights and KV split over them, two all-reduces per layer",
	"hardware.custom_gpu.peak_tflops":           "dense bf16/fp16 tensor TFLOP/s",
	"hardware.custom_gpu.mem_bw_gbs":            "HBM/GDDR bandwidth, GB/s",
	"hardware.custom_gpu.mem_gb":                "memory per GPU, GB (10^9 bytes)",
	"hardware.custom_gpu.link_bw_gbs":           "per-GPU all-reduce link bandwidth, GB/s (one direction)",
	"hardware.custom_gpu.fp8_supported":         "fp8 tensor cores (2× the bf16 rate)",
	"hardware.custom_model.layers":              "decoder layers",
	"hardware.custom_model.hidden":              "hidden size",
	"hardware.custom_model.heads":               "attention heads",
	"hardware.custom_model.kv_heads":            "KV heads (GQA); equal to heads for MHA",
	"hardware.custom_model.head_dim":            "0 = hidden/heads",
	"hardware.custom_model.intermediate":        "dense MLP width",
	"hardware.custom_model.vocab":               "vocabulary size",
	"hardware.custom_model.tied_embeddings":     "the output head shares the embedding's weights",
	"hardware.custom_model.experts_per_token":   "routed experts each token of an MoE layer passes through",
	"hardware.custom_model.expert_intermediate": "one routed expert's MLP width; 0 = intermediate",
	"hardware.custom_model.shared_intermediate": "width of the MLP every token of an MoE layer passes beside its experts; 0 = none",
	"hardware.custom_model.moe_layers":          "layers with experts; 0 = all (with experts > 0), the others dense",
	"hardware.custom_model.weight_dtype":        "the checkpoint's weight precision: fp8 | int8 | int4; empty = hardware.dtype (hardware.weight_dtype overrides it)",
	"hardware.custom_cpu.cores":                 "cores of the engine's host (the frontend's concurrency counts them)",
	"hardware.custom_cpu.flops_per_cycle":       "FLOPs one core retires per cycle in the engine's arithmetic (AVX2 fp32 FMA: 32)",
	"hardware.custom_cpu.clock_ghz":             "core clock, GHz",
	"hardware.custom_cpu.mem_bw_gbs":            "memory bandwidth the engine sees, GB/s",
	"hardware.custom_cpu.mem_gb":                "memory the engine sees, GB",
	"calibration":                               "written by simbench calibrate: the fitted model, the runs (fitted_on), the workload range and every parameter; sim warns outside the range",

	// Speculative decoding (a block of its own, aligned on its own).
	"engine.speculative_config.method":                 "speculative decoding (vllm; unset: off): eagle | eagle3 | mtp (a one-layer head of the target's shape) | ngram (no drafter cost) | draft_model",
	"engine.speculative_config.num_speculative_tokens": "draft tokens per decoding sequence and step (1–16); the step verifies them and the sequence's next token",
	"engine.speculative_config.acceptance_rate":        "per-position conditional acceptance: one number, or a list of num_speculative_tokens; unset = the method's published figure (docs/speculative.md)",
	"engine.speculative_config.model":                  "draft_model: the drafter's preset name, or custom with custom_model",
	"engine.speculative_config.custom_model":           "draft_model: the drafter's shape (the keys of hardware.custom_model)",
	"engine.speculative_config.model_config":           "draft_model: the drafter's Hugging Face config.json",

	// The load generator, and the frontend's discipline.
	"client.gap_ms":         "the load generator's time between a response's end and the next send from the freed slot or session",
	"client.gap_samples_ms": "measured client gaps, dealt from a shuffled deck (calibrate writes them); gap_ms is then unused",
	"client.stall_ms":       "the load generator's stalls: each slot's next send waits this long more (closed loop), once every stall_every_ms",
	"client.stall_every_ms": "time from one of the client's stalls to the next (the first half of it in); 0 = none",
	"client.tie_order":      "trace (default) | random: the order in which requests sent at one instant reach the frontend",
	"frontend.mode":         "unbounded | handlers (concurrency) | event_loop (cpu_share) | hold_for_slot (a gate of engine.llamacpp.parallel before the handlers); unset = from cpu_share, hold_for_slot, concurrency, else unbounded",
}

// annotate adds configDocs comments to the mapping n and prints short
// number lists inline.
func annotate(n *yaml.Node, path string) {
	if n.Kind == yaml.SequenceNode && scalars(n) {
		n.Style = yaml.FlowStyle
	}
	if n.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key := joinKey(path, n.Content[i].Value)
		if doc, ok := configDocs[key]; ok {
			target := n.Content[i]
			if n.Content[i+1].Kind == yaml.SequenceNode {
				target = n.Content[i+1] // a key's comment is misplaced after a flow sequence
			}
			target.LineComment = doc
		}
		annotate(n.Content[i+1], key)
	}
}

func scalars(n *yaml.Node) bool {
	for _, c := range n.Content {
		if c.Kind != yaml.ScalarNode {
			return false
		}
	}
	return true
}

// YAML returns the configuration as a commented YAML document.
func (c Config) YAML() ([]byte, error) { return c.yaml(false) }

// UsedTimingYAML is YAML with only the timing model timing.model names:
// the others' sections, which the simulator does not use, are left to
// their defaults (a written, calibrated sim.yaml).
func (c Config) UsedTimingYAML() ([]byte, error) { return c.yaml(true) }

func (c Config) yaml(usedTiming bool) ([]byte, error) {
	var doc yaml.Node
	if err := doc.Encode(c); err != nil {
		return nil, err
	}
	if usedTiming {
		dropUnusedTiming(mappingValue(&doc, "timing"), c.Timing.Model)
	}
	annotate(&doc, "")
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// dropUnusedTiming removes from the timing mapping t the sections of the
// timing models other than model.
func dropUnusedTiming(t *yaml.Node, model string) {
	if t == nil {
		return
	}
	keep := t.Content[:0]
	for i := 0; i+1 < len(t.Content); i += 2 {
		k := t.Content[i].Value
		if k != model && slices.Contains(TimingModels(), k) {
			continue
		}
		keep = append(keep, t.Content[i], t.Content[i+1])
	}
	t.Content = keep
}

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
		inRange("engine.max_num_seqs", e.MaxNumSeqs, 1, maxSeqs),
		inRange("engine.max_num_batched_tokens", e.MaxNumBatchedTokens, 1, maxStepTokens),
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

// Async says whether the engine plans a step ahead: async_scheduling when
// set, else the engine's default (vllm and sglang yes, llamacpp no).
func (e EngineConfig) Async() bool {
	if e.AsyncScheduling != nil {
		return *e.AsyncScheduling
	}
	return e.Type == "vllm" || e.Type == "sglang"
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

func (h HardwareConfig) gpu() (GPUSpec, error) {
	if h.GPU == "custom" {
		if h.CustomGPU == nil {
			return GPUSpec{}, errors.New("hardware.custom_gpu: required with hardware.gpu custom")
		}
		return *h.CustomGPU, h.CustomGPU.validate("hardware.custom_gpu")
	}
	g, err := lookupGPU(h.GPU)
	if err != nil {
		return g, fmt.Errorf("hardware.gpu: %w", err)
	}
	return g, nil
}

// optionalOneOf is oneOf for a key whose empty value means its default.
func optionalOneOf(key, v string, allowed ...string) error {
	if v == "" {
		return nil
	}
	return oneOf(key, v, allowed...)
}

func (h HardwareConfig) model() (ModelSpec, error) {
	if h.ModelConfig != "" {
		if h.Model == "custom" || h.CustomModel != nil {
			return ModelSpec{}, errors.New("hardware.model_config: the model is custom_model's; set one of them")
		}
		m, err := readHFConfig(h.ModelConfig, h.WeightDType == "")
		if err != nil {
			return m, fmt.Errorf("hardware.model_config: %w", err)
		}
		return m, nil
	}
	if h.Model == "custom" {
		if h.CustomModel == nil {
			return ModelSpec{}, errors.New("hardware.custom_model: required with hardware.model custom")
		}
		return *h.CustomModel, h.CustomModel.validate("hardware.custom_model")
	}
	m, err := lookupModel(h.Model)
	if err != nil {
		return m, fmt.Errorf("hardware.model: %w", err)
	}
	return m, nil
}

// modelName names the model in messages: hardware.model_config's path
// when set, else hardware.model.
func (h HardwareConfig) modelName() string { return cmp.Or(h.ModelConfig, h.Model) }

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

// KVBlocks is the number of KV blocks of one worker: engine.num_gpu_blocks,
// or (GPU memory × tensor_parallel × gpu_memory_utilization − weights) /
// (KV bytes per token × block_size). Activations and CUDA graphs are not
// reserved, so the derived figure is an upper bound of what vLLM reports.
func (c Config) KVBlocks() (int, error) {
	if c.Engine.NumGPUBlocks > 0 {
		return c.Engine.NumGPUBlocks, nil
	}
	g, err := c.Hardware.device()
	if err != nil {
		return 0, err
	}
	m, err := c.Hardware.model()
	if err != nil {
		return 0, err
	}
	dw, dkv, err := c.drafterMemory()
	if err != nil {
		return 0, err
	}
	weights := c.Hardware.weightMemBytes(m) + dw
	mem := g.MemGB * 1e9 * float64(c.Hardware.TensorParallel) * c.Engine.GPUMemoryUtilization
	free := mem - weights
	blocks := free / ((m.kvBytesPerToken(dtypeBytes[c.Hardware.kvDType()]) + dkv) * float64(c.Engine.BlockSize))
	if blocks > maxKVBlocks {
		return 0, fmt.Errorf("engine.num_gpu_blocks: the derived %.0f blocks exceed %d; set num_gpu_blocks or a larger block_size", blocks, maxKVBlocks)
	}
	if blocks < 1 {
		return 0, fmt.Errorf("engine.num_gpu_blocks: %s (%.1f GB of weights) leaves no KV memory on %d×%s at gpu_memory_utilization %g; set num_gpu_blocks or more tensor_parallel",
			c.Hardware.modelName(), weights/1e9, c.Hardware.TensorParallel, c.Hardware.GPU, c.Engine.GPUMemoryUtilization)
	}
	return int(blocks), nil
}

// Package sim is simbench's embedded discrete-event simulator of an LLM
// serving cluster. It replays a traces.Workload on modelled engine workers
// behind a router and produces one results.Record per request, the same
// records a real run produces, so AIPerf files and comparisons need nothing
// special.
//
// # Reading guide
//
// Start with sim.go's Run, then follow a request, then the engine step:
//
//   - sim.go: Run, the simulator struct and its event loop (loop, instant,
//     handle); send, the client's send once the pacer lets it go; arrive,
//     routing (router.go); complete and clientDone, before the slot's next
//     send.
//   - frontend.go: the server's work between send and arrive, a discipline
//     per frontend.mode (unboundedFrontend, handlerFrontend for
//     frontend.concurrency, loopFrontend for a shared event loop's
//     cpu_share, gateFrontend for hold_for_slot), and arrivalSteal, what
//     that work takes from a CPU engine's steps.
//   - client.go: the load generator (the client: section): the order of
//     simultaneous sends, the gap after each response, its stalls.
//   - worker.go: one engine step at a time. startStep asks the engine's
//     scheduler (engines.go: planVLLM, planSGLang, planLlamaCpp) for the
//     step's work and the timing model for its duration; endStep stamps
//     the step's tokens.
//   - package sim/timing: the step-time models (NewClock, TimingModels)
//     and their configuration (TimingConfig, HardwareConfig); physics.go
//     is the default, presets.go, device.go and hfconfig.go its hardware,
//     priors.go its GPU priors. hardware.go here keeps its names in sim
//     (aliases) and builds a pool's clock (newTiming); jitter.go and
//     drift.go stretch a step at random from the worker's streams.
//   - kv.go and hashtable.go: the KV cache and the prefix cache; pool.go
//     and disagg.go: disaggregated prefill/decode pools and KV transfer;
//     spec.go: speculative decoding.
//   - the configuration, a file per job: config.go its types and
//     defaults (DefaultConfig), configkeys.go reading a file (ParseConfig,
//     checkKeys), configrenamed.go the keys read under an old name,
//     configdocs.go every key's comment (configDocs), configyaml.go the
//     commented YAML written back, validate.go its check (Validate).
//   - record.go and write.go turn finished requests into AIPerf's files;
//     servermetrics.go and scrape.go are the simulated /metrics; online.go
//     is the same loop for simbench serve.
//
// # Event loop
//
// Time is virtual: int64 nanoseconds from the start of the schedule, mapped to
// wall-clock timestamps as Epoch + t. An agenda (a binary heap of events
// ordered by time, then by scheduling order) drives everything: request
// sends, arrivals at the frontend, the end of each worker's engine step, and
// completions at the client. There are no goroutines and no wall clock.
//
// At each instant the loop runs every event due, then sends what the pacer
// allows (see package pacer for the workload semantics, shared with the load
// generator), then starts a step on every idle worker that has work.
//
// # Online mode
//
// Online (see NewOnline) runs the same loop with requests submitted while
// it runs, for simbench serve: the caller holds virtual time to its clock
// and hears of every token as it is emitted. A request submitted at its
// send time gives the record Run gives it (TestOnlineMatchesRun).
//
// # Randomness
//
// Six kinds of random stream, each a PCG seeded with Config.Seed and a
// constant of its own, so one stream's draws never shift another's and equal
// inputs give byte-identical outputs:
//
//   - the router's (random and kv policies; see newRouter);
//   - each worker's step jitter and host stalls (timing.jitter, timing.stall_*;
//     see newJitter), one stream per worker;
//   - each worker's speed drift (timing.drift_*; see newDrift), one per worker;
//   - the deck of client gaps (client.gap_samples_ms; see newClientGap);
//   - the order of requests sent at one instant (client.tie_order: random;
//     see newClient);
//   - each worker's acceptance of speculative drafts
//     (engine.speculative_config; see speculator.accept), one per worker.
//
// A stream whose knob is off draws nothing: the default configuration
// (round_robin router, no jitter) draws no random number at all.
//
// # Engine steps and token stamps
//
// A worker runs one step (one forward pass) at a time. At its start the
// scheduler (vllm, sglang or llamacpp; see planVLLM, planSGLang and
// planLlamaCpp) picks the step's work: prompt tokens of requests still
// prefilling and one decode token per generating request; the timing model
// (poly, linear, roofline, physics or table; see TimingModels) gives its
// duration. At its end the step's KV is computed, full prompt blocks enter
// the prefix cache, and every
// sequence whose known tokens (prompt plus output so far) are all computed
// emits one token (with engine.speculative_config, one more per accepted
// draft, in one chunk: docs/speculative.md). Every token made in a step is
// stamped at the step's end.
//
// First token: a request's first token is stamped at the end of the step that
// computes the last chunk of its prompt, as in vLLM, where the forward pass
// that finishes the prompt also samples the first token. DynoSim instead
// counts a request that finished its prefill in a pass as a decoder of that
// same pass, so its first token also waits for one decode step (≥ 1 ms,
// 5.74 ms at idle with the polynomial model): "replay TTFT includes the first
// decode step". Here the prefill-completing request is a prefill sequence of
// its step, not an extra decoder, so simbench's TTFT is shorter by that decode
// time. With frontend.response_overhead_ms every token reaches the client
// that much later (the first_token_emission stage).
//
// # Other differences from DynoSim
//
//   - The decode term of the polynomial model uses the logical context of the
//     decoding sequences (DynoSim after PR #12583), and a request finishing
//     its prefill in a step is not counted in it.
//   - The router sees the workers' exact state (DynoSim's KV router works from
//     slightly delayed KV events and approximates in-pass prefill load).
//   - Prefix caching registers a block when its prompt tokens are computed; a
//     block computed twice concurrently is deduplicated (vLLM keeps both).
//     Freed blocks without content are reused before cached ones are evicted.
//   - Eviction is LRU over released blocks, tail blocks first (DynoSim's
//     default is a lineage policy that evicts leaves first).
//   - engine.kv_offload is vLLM's CPU tier (the OffloadingConnector): prompt
//     blocks are stored as computed; when the scheduler comes to a waiting
//     request (new, or preempted), its prompt's blocks found there past its
//     GPU hit are loaded over the host link instead of computed (a worker's
//     loads one after another), the request waiting out its load while those
//     behind it go on. Output blocks are
//     not stored (vLLM's connector stores them too): a preempted request
//     recomputes its output.
//   - sglang is modelled prefill-first (SGLang's default, DynoSim PR #12884),
//     and llamacpp (Ollama's runner) is an engine of its own.
//   - Every engine defaults to 64-token KV blocks (DynoSim: 64 for vLLM, but
//     1-token pages for SGLang), which keeps prefix matching cheap.
//   - Requests that can never fit (KV, slot context, max_model_len, a
//     prompt above the token budget without chunked prefill, or no output
//     length) are rejected at arrival with a SimRejected error record.
//   - Warmup requests are simulated as a phase of their own before the
//     profiling phase, and are excluded from metrics by the results package.
//
// # Records
//
// Each request's Record has one chunk per step that emitted its tokens
// (one token each, Tokens: 1, without speculative decoding),
// StartNs = send, IntendedNs = scheduled send, EndNs = last token at the
// client, and Sim detail: queue wait, prefill start and end, cached prompt
// tokens, preemptions, and an exclusive TTFT breakdown (see StageQueueWait)
// whose stages add up to TTFT exactly.
package sim

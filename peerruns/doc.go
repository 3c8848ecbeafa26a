// Package peerruns reads the result files of other LLM serving benchmarks
// as simbench runs: an AIPerf profile (results.Profile) and, where the file
// describes it, the workload the run replayed (traces.Workload).
//
// Formats:
//   - inference-perf report directories (kubernetes-sigs/inference-perf):
//     each stage_N_lifecycle_metrics.json is one run, one load stage; its
//     workload is rebuilt from the report's config.yaml (data types
//     shared_prefix, random and synthetic; constant, poisson and concurrent
//     load stages, or a load.sweep's stages at their load_summary's
//     requested rate; completion or chat API; ignore_eos; the client's
//     num_workers × worker_max_concurrency as the concurrency cap). A stage
//     is named DIR/stage_N (or by its file, whatever its
//     report_file_prefix); DIR is the report directory or the run directory
//     above its results/; a directory with one stage is that stage. A
//     report without its config.yaml is read without a workload or an
//     output length, and says so.
//   - `vllm bench serve --save-result` JSON (also `vllm bench sweep`'s
//     run=N.json, which is the same object with the sweep's parameters, and
//     benchmark_serving.py's results before it, whose request latency is
//     *_latency_ms). With --save-detailed's per-request lists (input_lens,
//     output_lens, ttfts, itls, errors, start_times) every distribution is
//     computed from the lists with AIPerf's definitions, failed requests
//     (and those that received no content) excluded, and the workload is
//     rebuilt from them (listWorkload: lengths, and send times where
//     recorded; each prompt unique).
//   - SGLang's `python -m sglang.bench_serving` results (.jsonl, or .json):
//     each line is one run, named FILE/run_N (0-based); a file of one line
//     is that run. Its per-request lists (--output-details) are read as
//     vLLM's; the bare Infinity that Python writes is accepted for
//     request_rate only.
//   - guidellm's benchmarks JSON, every schema from 0.1 (per-request
//     values only, each statistic computed from them), 0.2–0.3 and 0.4 on:
//     each benchmark is one run, named FILE/benchmark_N (0-based; in a 0.1
//     file, counting the benchmarks of all its reports in order); a file
//     with one benchmark is that benchmark. From 0.4 on, when a benchmark's
//     per-request lists hold the requests its metrics count (those that
//     overlap its measurement window), every statistic is computed from
//     them with AIPerf's definitions and the workload is rebuilt from them;
//     otherwise guidellm's summaries are read.
//
// Each field is mapped to AIPerf's metric of the same definition, and only
// then. Where a tool's field means something else, it is left out, and the
// run carries a warning saying so and what was derived instead: notably,
// inference-perf re-counts output tokens from the streamed text and records
// about two inter-token samples per token (inference-perf #565, #566), so
// its time_per_output_token, inter_token_latency and output_len are not
// read; the request-level inter_token_latency average is derived as
// (E2E − TTFT)/(OSL − 1) with the configured OSL when ignore_eos fixes it.
// Percentiles are kept only where the tool published them and AIPerf has
// the same one (p1 … p99); none is interpolated, and a tool whose
// percentile estimator differs from AIPerf's (numpy's linear
// interpolation) gets a warning.
package peerruns

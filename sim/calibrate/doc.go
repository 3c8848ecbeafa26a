// Package calibrate fits the simulator's linear timing model to real runs
// so that simulated AIPerf metrics match measured ones, and rebuilds the
// workload a run directory replayed.
//
// The model fitted is sim's `linear` step time plus a per-request frontend
// overhead:
//
//	step_ms = base + prefill_token·P + decode_seq·D + context_token·C
//	TTFT   += request_overhead
//
// Derived estimates give the start (the decode step from ITL, prefill and
// overhead from TTFT), then Nelder–Mead (gonum/optimize) searches log-space
// parameters by running the simulator itself in memory. The loss is the sum
// of squared log ratios sim/real over the fitted metric statistics, plus a
// weak pull towards the derived start that only decides directions the data
// cannot see (one concurrency level cannot tell the per-step cost from the
// per-sequence cost; a sweep of loads can). Everything is deterministic.
package calibrate

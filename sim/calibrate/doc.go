// Package calibrate fits the simulator's step time to real runs so that it
// predicts runs it was not fitted on, and rebuilds the workload a run
// directory replayed.
//
// The data are the engine steps recovered from every run's token gaps
// (ExtractSteps) and the TTFTs of requests that met an idle engine, or,
// for a run published as aggregates only, its mean step (aggregate.go:
// the batch by Little's law, the prompts arriving meanwhile, settled on
// the simulator). A
// Bayesian linear regression fits the physics basis (FLOPs and bytes of
// every step from the named model and device; efficiencies, a step and a
// per-sequence overhead, the arrival stall), or the linear basis when the
// hardware is unknown, with a prior per coefficient that decides what the
// data cannot see. The frontend's request overhead is then settled on the
// simulator itself (the median over seeds of simulated TTFT against the
// real one), and host stalls are fitted by maximum likelihood on the decode
// steps around the regression (stalls.go), as are the rest of the host's
// noise, for a CPU engine only unless asked (hostNoise). Everything is
// deterministic.
package calibrate

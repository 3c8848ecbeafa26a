// Package calibrate fits the simulator to real runs so that it predicts
// runs it was not fitted on, and rebuilds the workload a run directory
// replayed.
//
// The data are the engine steps recovered from every run's token gaps
// (ExtractSteps) and the TTFTs of requests that met an idle engine, or,
// for a run published as aggregates only, its mean step (aggregate.go:
// the batch by Little's law, the prompts arriving meanwhile, settled on
// the simulator).
//
// The fitted parameters come in three layers (layers.go): the model (the
// efficiencies of the physics basis, from the FLOPs and bytes of every
// step of the named model and device; or the linear basis' per-token
// costs when the hardware is unknown), the server (fixed costs per step,
// sequence, prompt step and request, the template tokens) and the noise
// (step jitter, host stalls, drift, the arrival stall, the frontend's CPU
// share, the client's gaps, stalls and tie order). The noise layer is
// fitted for a CPU engine, or when asked (Options.FitNoise); a GPU fit has
// none of it.
//
// Fit runs the named stages of fitter.stages in order: a Bayesian linear
// regression of the step model with a prior per coefficient that decides
// what the data cannot see; the request overhead settled on the simulator
// (the median over seeds of simulated TTFT against the real one); with
// the noise layer, host stalls by maximum likelihood on the decode steps
// around the regression (stalls.go), the client, the CPU share and the
// drift; and last the fitted runs simulated for the report. Everything is
// deterministic.
package calibrate

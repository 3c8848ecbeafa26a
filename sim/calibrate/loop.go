package calibrate

import (
	"context"
	"fmt"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/sim"
)

// priorCPUShare is frontend.cpu_share when no run shows it: the mean of a
// uniform prior over [0, 1]. A Python API server (vLLM's, SGLang's) does
// all its work on one core, but how much of a request's frontend time is
// that core's CPU and how much waits (on the tokenizer's threads, on the
// hand-off to the engine) only requests prepared together show.
const priorCPUShare = 0.5

// priorShareSD is that uniform prior's sd, 1/√12.
const priorShareSD = 0.29

// sharesLoop is whether cfg's frontend is one event loop whose share
// calibrate sets: a Python engine's (vllm, sglang) that no other
// discipline (the base config's handlers or slot gate, the fitted stall
// of a server sharing a CPU engine's cores) models.
func sharesLoop(cfg sim.Config) bool {
	f := cfg.Frontend
	return cfg.Engine.Type != "llamacpp" && f.Concurrency == 0 && f.ArrivalStallMs == 0 && !f.HoldForSlot
}

// showsLoop is whether a target had requests in its frontend at once: a
// closed loop above one request, or a timed trace.
func showsLoop(t Target) bool {
	return t.Workload.Concurrency > 1 || hasTimestamps(t.Workload)
}

// fitCPUShare sets cfg's frontend.cpu_share: on the simulator, by the TTFT
// of the targets that had requests in the frontend at once, or at the
// prior (the base config's share, else priorCPUShare) when none had.
func fitCPUShare(ctx context.Context, cfg *sim.Config, targets []Target, opts Options, evals *int) (sim.CalibratedParam, error) {
	prior := priorCPUShare
	if s := opts.Base.Frontend.CPUShare; s > 0 {
		prior = s
	}
	cfg.Frontend.CPUShare = prior
	var seen []Target
	for _, t := range targets {
		if showsLoop(t) {
			seen = append(seen, t)
		}
	}
	p := sim.CalibratedParam{Name: "cpu_share", Value: prior, SD: priorShareSD, Prior: prior,
		Source: "prior: no run had two requests in the frontend at once"}
	if len(seen) == 0 {
		return p, nil
	}
	share, err := minimize1D(func(s float64) (float64, error) {
		cfg.Frontend.CPUShare = s
		*evals += len(seen) * opts.Seeds
		return ttftLoss(ctx, *cfg, seen, opts.Seeds)
	}, 0, 1, max(opts.MaxEvals/len(seen), 8))
	if err != nil {
		return p, err
	}
	sd, err := shareSD(ctx, *cfg, share, seen, opts.Seeds)
	*evals += 2 * len(seen) * opts.Seeds
	if err != nil {
		return p, err
	}
	cfg.Frontend.CPUShare = share
	p.Value, p.SD, p.Pinned = share, sd, true
	p.Source = fmt.Sprintf("TTFT of the runs with requests in the frontend at once (%d of %d; simulated)", len(seen), len(targets))
	return p, nil
}

// shareSD is the share's uncertainty from the runs' mean TTFT: its
// standard error over the simulated slope of mean TTFT in the share (a
// central difference of ±0.05), or the prior's when the TTFT does not
// move with it.
func shareSD(ctx context.Context, cfg sim.Config, share float64, seen []Target, seeds int) (float64, error) {
	const h = 0.05
	lo, hi := max(0, share-h), min(1, share+h)
	ttft := func(s float64) (float64, error) {
		cfg.Frontend.CPUShare = s
		rows, _, err := evaluate(ctx, cfg, seen, []Term{{results.TagTTFT, "avg", 1}}, seeds)
		sum := 0.0
		for _, r := range rows {
			sum += r.Sim
		}
		return sum / float64(max(len(rows), 1)), err
	}
	a, err := ttft(lo)
	if err != nil {
		return 0, err
	}
	b, err := ttft(hi)
	if err != nil {
		return 0, err
	}
	slope := (b - a) / (hi - lo)
	if !(slope > 0) {
		return priorShareSD, nil
	}
	return min(priorShareSD, ttftSE(seen)/slope), nil
}

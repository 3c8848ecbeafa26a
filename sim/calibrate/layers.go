package calibrate

import (
	"fmt"
	"slices"

	"github.com/simbench/simbench/sim"
)

// The layers of a calibration, in the order the report prints them. The
// model layer prices the engine's work (FLOPs, bytes, tokens); the server
// layer is the fixed costs around it (per step, per sequence, per prompt
// step, per request); the noise layer is everything that spreads the
// figures without moving their means: step jitter, host stalls, the
// device's drift, the server's work on a CPU engine's cores, the frontend
// event loop's CPU share and the client (its gaps, stalls and the order of
// simultaneous sends).
const (
	LayerModel  = "model"
	LayerServer = "server"
	LayerNoise  = "noise"
)

// Layers are the layers in report order.
var Layers = []string{LayerModel, LayerServer, LayerNoise}

// layerOf is the layer of a calibrated parameter, by its name.
func layerOf(name string) string {
	if isSpecParam(name) {
		return LayerModel
	}
	switch name {
	case "compute_efficiency", "memory_efficiency", "attention_efficiency", "kv_efficiency", "prefill_efficiency", "expert_efficiency",
		"prefill_token_ms", "context_token_ms":
		return LayerModel
	case "step_overhead_ms", "seq_overhead_ms", "multi_token_overhead_ms", "prefill_overhead_ms",
		"base_ms", "decode_seq_ms", "request_overhead_ms", "template_tokens":
		return LayerServer
	}
	return LayerNoise
}

// layered labels every parameter with its layer and orders them by layer,
// keeping the order within one.
func layered(ps []sim.CalibratedParam) []sim.CalibratedParam {
	for i := range ps {
		ps[i].Layer = layerOf(ps[i].Name)
	}
	slices.SortStableFunc(ps, func(a, b sim.CalibratedParam) int {
		return slices.Index(Layers, a.Layer) - slices.Index(Layers, b.Layer)
	})
	return ps
}

// fitsNoise is whether Fit fits the noise layer: when asked
// (Options.FitNoise, --fit-noise) or for a CPU engine (hardware.cpu),
// whose host it shares with the server and the client, and the CPU e2e
// tier's fit needs it. On a GPU those parameters would model the machine
// and the harness a run was made on, not the engine, so they are neither
// fitted, simulated nor written.
func fitsNoise(opts Options) bool {
	return opts.FitNoise || opts.Base.Hardware.CPU != ""
}

// noiseNote is the report's line for a noise layer Fit did not fit.
const noiseNote = "not fitted (a GPU engine): --fit-noise fits the step jitter, host stalls, drift, arrival stall, " +
	"the frontend's CPU share and the client's gaps, stalls and tie order"

// withoutNoise is c with nothing of the noise layer: deterministic steps,
// no drift, no work stolen from the engine, no shared event loop, and a
// client that sends at once, in the workload's order.
func withoutNoise(c sim.Config) sim.Config {
	t, f := &c.Timing, &c.Frontend
	t.Jitter, t.StallMs, t.StallCV, t.StallsPerStep, t.DriftCV, t.DriftPeriodMs = 0, 0, 0, 0, 0, 0
	f.ArrivalStallMs, f.CPUShare = 0, 0
	c.Client = sim.ClientConfig{}
	return c
}

// withoutClient are the targets with no client of their own: the fit then
// simulates them as the written config will, with none.
func withoutClient(targets []Target) []Target {
	out := slices.Clone(targets)
	for i := range out {
		out[i].ClientGapMs, out[i].ClientGapsMs, out[i].ClientStallMs, out[i].ClientStallEveryMs = 0, nil, 0, 0
	}
	return out
}

// clientParam is the client's row: its mean gap (the deck's, or the
// aggregate's estimate) and where it came from, and the order of
// simultaneous sends.
func clientParam(c sim.ClientConfig, gaps int) sim.CalibratedParam {
	p := sim.CalibratedParam{Name: "client_gap_ms", Value: c.GapMs, Pinned: true,
		Source: "the aggregate's duration beyond its requests' latencies"}
	switch {
	case len(c.GapSamplesMs) > 0:
		sum := 0.0
		for _, g := range c.GapSamplesMs {
			sum += g
		}
		p.Value = sum / float64(len(c.GapSamplesMs))
		p.Source = fmt.Sprintf("%d gaps between a response and its slot's next send, dealt from a shuffled deck", gaps)
	case c.GapMs == 0:
		p.Pinned, p.Source = false, "no closed-loop run: none"
	}
	p.Source += "; simultaneous sends in a seeded random order (tie_order random)"
	return p
}

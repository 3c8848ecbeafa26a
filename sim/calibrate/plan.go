package calibrate

import (
	"fmt"
	"io"

	"github.com/simbench/simbench/sim"
	"github.com/simbench/simbench/traces"
)

// PlanRun is one short run of a calibration plan: a closed-loop synthetic
// workload and what it pins.
type PlanRun struct {
	Name string
	Spec traces.SynthSpec
	Pins string
}

// PlanOptions size a calibration plan.
type PlanOptions struct {
	Requests int   // measured requests per run at concurrency 1 (default 24); loaded runs get twice as many
	Seed     int64 // workload seed
}

// Plan chooses the runs that pin the step-time model on a live server with
// the engine structure of base: one request at a time with short prompts
// (the step's fixed cost, the frontend overhead), one at a time with long
// prompts (prompt compute against that overhead, and the context's cost),
// and the engine's slot count with short and medium prompts (the cost per
// sequence, prompts computed beside decodes, and, for a Python server,
// the share of its one core that requests sent together split). Not the
// slot count with
// long prompts: while every slot reads a prompt no token comes out, so those
// steps hide in the token stream and their time lands on the next visible
// one; on the CPU engine such a run doubled the held-out errors. Prompt lengths vary
// around their means so that the TTFTs of idle requests separate the
// prompt's cost from the overhead within one run too.
func Plan(base sim.Config, opts PlanOptions) []PlanRun {
	n := opts.Requests
	if n <= 0 {
		n = 24
	}
	slots := planSlots(base)
	long := planLongISL(base)
	short := 64
	spec := func(conc, count, isl, osl int) traces.SynthSpec {
		return traces.SynthSpec{Mode: traces.ModeConcurrency, Concurrency: conc, RequestCount: count, WarmupCount: min(conc, 2),
			ISL: isl, ISLStddev: isl / 4, OSL: osl, OSLStddev: osl / 8, Seed: opts.Seed}
	}
	runs := []PlanRun{
		{Name: "c1-short", Spec: spec(1, n, short, 64), Pins: "step overhead at batch 1, frontend overhead"},
		{Name: "c1-long", Spec: spec(1, max(n/2, 8), long, 16), Pins: "prompt compute vs overhead, context cost"},
		{Name: fmt.Sprintf("c%d-short", slots), Spec: spec(slots, 2*n, short*3/2, 48), Pins: "cost per sequence, prompts beside decodes, the frontend's share of requests sent together"},
	}
	if slots > 2 {
		half := slots / 2
		runs = append(runs, PlanRun{Name: fmt.Sprintf("c%d-medium", half), Spec: spec(half, 2*n, long/2, 32),
			Pins: "long prompts chunked beside decodes"})
	}
	return runs
}

// planSlots is the concurrency that fills the engine: llama.cpp's slots,
// else max_num_seqs capped at 8 (enough to see the per-sequence cost
// without a long run; 0, the engine's default, is 256 or more).
func planSlots(c sim.Config) int {
	if c.Engine.Type == "llamacpp" {
		return max(c.Engine.LlamaCpp.Parallel, 1)
	}
	if c.Engine.MaxNumSeqs == 0 {
		return 8
	}
	return max(min(c.Engine.MaxNumSeqs, 8), 1)
}

// planLongISL is a long prompt that still fits: 1024 tokens, or half a
// llama.cpp slot's context, whichever is smaller.
func planLongISL(c sim.Config) int {
	long := 1024
	if c.Engine.Type == "llamacpp" {
		perSlot := c.Engine.LlamaCpp.CtxSize / max(c.Engine.LlamaCpp.Parallel, 1)
		long = min(long, perSlot/2)
	}
	if c.Engine.MaxModelLen > 0 {
		long = min(long, c.Engine.MaxModelLen/2)
	}
	return max(long, 128)
}

// WritePlan prints the plan, one run a line.
func WritePlan(w io.Writer, runs []PlanRun) {
	fmt.Fprintf(w, "calibration plan: %d runs\n", len(runs))
	for _, r := range runs {
		s := r.Spec
		fmt.Fprintf(w, "  %-10s concurrency %d, %d requests (+%d warmup), ISL %d±%d, OSL %d±%d: %s\n",
			r.Name, s.Concurrency, s.RequestCount, s.WarmupCount, s.ISL, s.ISLStddev, s.OSL, s.OSLStddev, r.Pins)
	}
}

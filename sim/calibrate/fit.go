package calibrate

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/sim"
	"github.com/simbench/simbench/traces"
)

// Term is one metric statistic in the loss.
type Term struct {
	Tag    string
	Stat   string
	Weight float64
}

// DefaultTerms are the statistics fitted by default: TTFT, TTST, ITL,
// request latency and output throughput, at the average and the tail.
// TTFT's tail weighs little: at one prompt length its spread is client and
// server noise, and a heavy weight lets the optimizer inflate the prefill
// step so that step jitter mimics it, which then mispredicts other loads.
var DefaultTerms = []Term{
	{results.TagTTFT, "avg", 1}, {results.TagTTFT, "p50", 1}, {results.TagTTFT, "p90", 0.1}, {results.TagTTFT, "p99", 0.05},
	{results.TagTTST, "avg", 1},
	{results.TagITL, "avg", 2}, {results.TagITL, "p50", 1}, {results.TagITL, "p99", 0.5},
	{results.TagRequestLatency, "avg", 1}, {results.TagRequestLatency, "p99", 0.5},
	{results.TagOutputThroughput, "avg", 1},
}

// Target is one real run to fit: its aggregate, the workload it ran and,
// when the run has them, its per-request records, whose token gaps are the
// step-time data.
type Target struct {
	Name     string
	Profile  *results.Profile
	Workload *traces.Workload
	Records  []results.RecordMetrics
	// ClientGapMs is the load generator's gap between a response and the
	// next send from its slot (see EstimateClientGap); it is simulated, not
	// fitted.
	ClientGapMs float64
	// ClientGapsMs are the individual gaps measured from the records
	// (ClientGaps); their distribution is simulated when there are enough.
	// The client's stalls are not among them: ClientStallMs long, every
	// ClientStallEveryMs (see clientStalls; 0 when none is seen).
	ClientGapsMs                      []float64
	ClientStallMs, ClientStallEveryMs float64
}

// Options tune Fit.
type Options struct {
	Base  sim.Config // engine, workers, router, KV and hardware are kept; timing is fitted
	Terms []Term     // statistics in the report and its loss; default DefaultTerms
	// Basis is the step-time model fitted: "physics" (needs hardware.model
	// and a device), "linear", or "" (or "auto") to choose physics when the
	// base config names its hardware.
	Basis string
	// Jitter is the step-time coefficient of variation to simulate; 0
	// takes the regression's residual spread, < 0 turns it off.
	Jitter float64
	// MaxEvals caps the simulations that fit the frontend overhead
	// (default 8 rounds over all targets).
	MaxEvals int
	// Seeds is how many simulator seeds (the base's seed, seed+1, …) every
	// target is simulated with; the fit matches the median of their
	// statistics to the real ones (default DefaultSeeds). One seed is one
	// draw of a simulator that jitters its steps and shuffles simultaneous
	// sends, and the frontend overhead fitted on one draw moved by ±10 %
	// from seed to seed on the CPU engine's plan.
	Seeds int
	// HostNoise fits the host's noise on a GPU config too (see
	// hostNoise); a CPU config (hardware.cpu) always has it fitted.
	HostNoise bool
}

// hostNoise is whether Fit models the noise of a host that shares its CPU
// with the engine and the client: the step stalls, the drift of the
// device's speed, the client's stalls, the arrival stall and the frontend
// event loop's CPU share. A CPU engine (hardware.cpu) has it, and the CPU
// e2e tier's fit needs it; on a GPU those parameters would model the
// machine a run was made on, not the engine, so they are neither fitted
// nor written unless asked for (Options.HostNoise, --host-noise).
func hostNoise(opts Options) bool {
	return opts.HostNoise || opts.Base.Hardware.CPU != ""
}

// DefaultSeeds is Options.Seeds' default: odd, so the median is a draw.
const DefaultSeeds = 5

// Row is one fitted statistic: real and simulated values and the signed
// error (sim − real)/real × 100.
type Row struct {
	Target   string  `json:"target"`
	Metric   string  `json:"metric"`
	Stat     string  `json:"stat"`
	Real     float64 `json:"real"`
	Sim      float64 `json:"sim"`
	ErrorPct float64 `json:"error_pct"`
}

// Result is a fitted configuration and how well it fits.
type Result struct {
	Config sim.Config            `json:"-"`
	Model  string                `json:"model"`
	Params []sim.CalibratedParam `json:"params"`
	Rows   []Row                 `json:"fit"`
	Loss   float64               `json:"loss"` // Σ weight·log²(sim/real) over Rows
	Evals  int                   `json:"evaluations"`
	// Steps is how many engine steps from the token gaps the regression
	// used (prompt steps a request was sent in are left out), and
	// StepResidualMs the sd of their durations around the fitted model.
	Steps          int                  `json:"steps"`
	StepResidualMs float64              `json:"step_residual_ms"`
	Range          sim.CalibrationRange `json:"range"`
	Warnings       []string             `json:"warnings,omitempty"`
}

// Fit calibrates the step-time model on targets in two stages. First a
// Bayesian linear regression of the engine steps recovered from every
// target's token gaps (ExtractSteps) on the basis' features, with a prior
// per coefficient: what the data pin, they decide; what they cannot see
// (one load cannot tell the per-step from the per-sequence cost) stays at
// its physics prior, and the report says which is which. Then the frontend
// request overhead: simulated TTFT minus real TTFT, iterated on the
// simulator, since TTFT is the only place it shows. Everything is
// deterministic.
func Fit(ctx context.Context, targets []Target, opts Options) (*Result, error) {
	if len(targets) == 0 {
		return nil, errors.New("calibrate: no real run to fit")
	}
	opts = withDefaults(opts)
	b, err := newBasis(opts)
	if err != nil {
		return nil, err
	}
	sopts := stepsOptions(opts.Base)
	noise := hostNoise(opts)
	obs, warnings := collect(targets, sopts)
	x, y, nSteps := obs.design(b, noise)
	mean, sd := b.prior()
	p := len(mean)
	// The frontend's request overhead, and the stall the server's work on
	// a request puts on the engine's steps beside it (0 unless the data
	// show it).
	ovMean, ovSD := ackOverheadPrior(opts.Base, obs.prefills)
	mean, sd = append(mean, ovMean, 0), append(sd, ovSD, priorStallSD)
	post, err := regress(x, y, mean, sd)
	if err != nil {
		return nil, fmt.Errorf("calibrate: %w", err)
	}
	// That work lasts the request overhead from the send: spread over the
	// steps beside it, as the simulator spreads it, once the overhead is
	// known.
	if ov := post.Beta[p]; ov > 0 && post.Beta[p+1] > 0 {
		sopts.FrontendMs = ov
		obs, _ = collect(targets, sopts)
		x, y, nSteps = obs.design(b, noise)
		if post, err = regress(x, y, mean, sd); err != nil {
			return nil, fmt.Errorf("calibrate: %w", err)
		}
	}
	apply := func() sim.Config {
		c := b.apply(opts.Base, post.Beta[:p])
		c.Timing.Speedup = 1
		return c
	}
	// An aggregate's mean step is a model of the steps behind its ITL: the
	// simulator says how far off it is.
	var res0 Result
	if err := settleAggregates(ctx, &obs, targets, opts, &res0.Evals, func() (sim.Config, error) {
		x, y, nSteps = obs.design(b, noise)
		post, err = regress(x, y, mean, sd)
		if err != nil {
			return sim.Config{}, fmt.Errorf("calibrate: %w", err)
		}
		return apply(), nil
	}); err != nil {
		return nil, err
	}
	cfg := apply()
	cfg.Timing.Jitter = jitterOf(opts.Jitter, post, x[nSteps:], y[nSteps:], y)
	// Host stalls are the rest of the step noise: fitted unless the noise
	// is turned off, and never the base's.
	stalls := stallFit{}
	if opts.Jitter >= 0 && noise {
		stalls = fitStalls(obs.decodeSteps(b, post.Beta))
	}
	cfg.Timing.StallMs, cfg.Timing.StallCV, cfg.Timing.StallsPerStep = stalls.Ms, stalls.CV, stalls.PerStep
	// So is the drift, measured below: never the base's.
	cfg.Timing.DriftCV, cfg.Timing.DriftPeriodMs = 0, 0
	cfg.Frontend.ArrivalStallMs = 0
	if noise {
		cfg.Frontend.ArrivalStallMs = post.Beta[p+1]
	}
	// The token gaps and TTFTs are of the prompts the engine computed,
	// template included; the simulated targets must compute them too.
	tmpl, nTmpl := templateTokens(targets)
	cfg.Frontend.TemplateTokens = tmpl
	// The runs were made by a real client, whose simultaneous sends reach
	// the server in the order of a race.
	cfg.Frontend.TieOrder = sim.TieOrderRandom
	res := &Result{Model: b.model(), Params: relabel(b.params(post), obs), Steps: nSteps, StepResidualMs: post.Sigma,
		Warnings: warnings, Evals: res0.Evals}
	if noise {
		res.Params = append(res.Params, param(post, p+1, "arrival_stall_ms", mean, sd))
	}
	fe := sim.CalibratedParam{Name: "request_overhead_ms", Value: post.Beta[p], SD: post.SD[p], Pinned: true,
		Source: fmt.Sprintf("TTFT of %d requests on an idle engine", len(obs.prefills))}
	if ovSD < flatSD {
		fe.Source += fmt.Sprintf(", at least their response headers (%.3g ms) and a %g ± %g ms hand-off", ovMean-priorHandoffMs, priorHandoffMs, priorHandoffSD)
	}
	cfg.Frontend.RequestOverheadMs = fe.Value
	loop := noise && sharesLoop(cfg)
	if !noise {
		cfg.Frontend.CPUShare = 0
	}
	if loop {
		cfg.Frontend.CPUShare = priorCPUShare
	}
	// With one event loop, the runs of one request at a time settle the
	// overhead and the others the share, which only they show.
	idle, alone := fe, targets
	if loop {
		alone = slices.DeleteFunc(slices.Clone(targets), showsLoop)
		if len(alone) == 0 {
			alone = targets
		}
	}
	if fe, err = settleOverhead(ctx, &cfg, alone, idle, len(obs.prefills), opts, &res.Evals); err != nil {
		return nil, err
	}
	res.Params = append(res.Params, fe)
	if loop {
		cs, err := fitCPUShare(ctx, &cfg, targets, opts, &res.Evals)
		if err != nil {
			return nil, err
		}
		res.Params = append(res.Params, cs)
	}
	if opts.Jitter >= 0 && noise {
		res.Params = append(res.Params, stallParams(stalls)...)
	}
	// The device's slow drift is what per-request ITL spreads beyond the
	// steps' noise, so it is measured on the fitted steps and overhead.
	if opts.Jitter >= 0 && noise {
		df, n, err := fitDrift(ctx, cfg, targets, opts.Seeds)
		if err != nil {
			return nil, err
		}
		res.Evals += n
		cfg.Timing.DriftCV, cfg.Timing.DriftPeriodMs = df.CV, df.PeriodMs
		res.Params = append(res.Params, driftParams(df)...)
	}
	if tmpl > 0 {
		res.Params = append(res.Params, sim.CalibratedParam{Name: "template_tokens", Value: float64(tmpl), Pinned: true,
			Source: fmt.Sprintf("usage.prompt_tokens − ISL of %d requests", nTmpl)})
	}
	res.Rows, res.Loss, err = evaluate(ctx, cfg, targets, opts.Terms, opts.Seeds)
	if err != nil {
		return nil, err
	}
	res.Evals += len(targets) * opts.Seeds
	res.Warnings = append(res.Warnings, missWarnings(res.Rows, len(targets))...)
	res.Warnings = append(res.Warnings, peakWarnings(res.Params)...)
	res.Range = calibrationRange(targets, obs.steps)
	cfg.Frontend.ClientGapMs = targets[0].ClientGapMs
	cfg.Frontend.ClientGapSamplesMs = gapSamples(pooledGaps(targets))
	cfg.Frontend.ClientStallMs, cfg.Frontend.ClientStallEveryMs = 0, 0
	if noise {
		cfg.Frontend.ClientStallMs, cfg.Frontend.ClientStallEveryMs = pooledStalls(targets)
	}
	if cfg.Frontend.ClientStallMs > 0 {
		src := "the client's gaps beyond 3.5 robust sds above their median, counted by the runs' mean gap"
		res.Params = append(res.Params,
			sim.CalibratedParam{Name: "client_stall_ms", Value: cfg.Frontend.ClientStallMs, Pinned: true, Source: src},
			sim.CalibratedParam{Name: "client_stall_every_ms", Value: cfg.Frontend.ClientStallEveryMs, Pinned: true, Source: src})
	}
	cfg.Calibration = &sim.Calibration{Model: res.Model, FittedOn: targetNames(targets), Range: res.Range, Parameters: res.Params}
	res.Config = cfg
	return res, nil
}

// MissLimitPct is how far (%) the fit may miss the average TTFT, ITL or
// request latency of a run it was fitted on before it says so: the
// fidelity target allows no average field beyond 25 %, so a fit beyond it
// on its own data cannot predict others.
const MissLimitPct = 25

// missWarnings names the runs whose average TTFT, ITL or request latency
// the fit misses by more than MissLimitPct. Fitted on several runs, that is
// most often the runs disagreeing: a shared host whose speed changed
// between them.
func missWarnings(rows []Row, targets int) []string {
	var out []string
	for _, r := range rows {
		if r.Stat != "avg" || math.Abs(r.ErrorPct) <= MissLimitPct {
			continue
		}
		switch r.Metric {
		case results.TagTTFT, results.TagITL, results.TagRequestLatency:
		default:
			continue
		}
		why := "the model misses what this run shows"
		if targets > 1 {
			why = "the runs disagree (a shared host may have changed speed between them: run the plan again) or the model misses what this run shows"
		}
		out = append(out, fmt.Sprintf("%s: the fit misses its own %s avg by %+.1f %% (beyond %d %%): %s",
			r.Target, r.Metric, r.ErrorPct, MissLimitPct, why))
	}
	return out
}

// peakWarnings names the compute efficiencies the data pinned above 1 by
// more than two sds: no device computes faster than its peak, so the
// hardware spec's peak is too low (FLOPs per cycle, cores or threads, clock;
// a GPU preset) or the runs disagree. Bandwidth efficiencies above 1 are not flagged: a small model's
// weights and KV can stay in a CPU's cache, which streams faster than the
// memory bandwidth the spec gives.
func peakWarnings(ps []sim.CalibratedParam) []string {
	var out []string
	for _, p := range ps {
		if (p.Name == "compute_efficiency" || p.Name == "attention_efficiency") && p.Pinned && p.Value-2*p.SD > 1 && p.Value < maxEfficiency {
			out = append(out, fmt.Sprintf("%s %.3g ± %.2g is above the device's peak: its spec (hardware.cpu or hardware.gpu) gives too low a peak, or the runs disagree",
				p.Name, p.Value, p.SD))
		}
	}
	return out
}

func withDefaults(o Options) Options {
	if o.Terms == nil {
		o.Terms = DefaultTerms
	}
	if o.MaxEvals <= 0 {
		o.MaxEvals = DefaultMaxEvals
	}
	if o.Seeds <= 0 {
		o.Seeds = DefaultSeeds
	}
	return o
}

// stepsOptions is how the engine of c chunks prompts.
func stepsOptions(c sim.Config) StepsOptions {
	switch c.Engine.Type {
	case "llamacpp":
		return StepsOptions{ChunkTokens: c.Engine.LlamaCpp.NBatch, PerSlot: c.Engine.LlamaCpp.Batch == sim.LlamaCppBatchPerSlot}
	case "sglang":
		return StepsOptions{ChunkTokens: c.Engine.SGLang.ChunkedPrefillSize}
	}
	if c.Engine.EnableChunkedPrefill {
		return StepsOptions{ChunkTokens: c.Engine.MaxNumBatchedTokens}
	}
	return StepsOptions{}
}

// ackOverheadPrior is the prior of the frontend's request overhead: flat,
// unless the engine is vLLM and the idle requests' response headers were
// recorded. vLLM's API server sends the headers of a streamed response
// before it hands the request to the engine core (AsyncLLM.generate adds
// the request when the response body is first read), so the headers bound
// the overhead from below, and the hand-off after them (input processing,
// the detokenizer's set-up, the hop to the engine core's process) is about
// priorHandoffMs. The TTFT beyond that and the step model is then the
// prompt step's own (prefill_overhead_ms), which one request at a time
// cannot otherwise tell from the frontend's. Other servers send their
// headers later (SGLang once the request is with its scheduler; Ollama and
// llama.cpp's server with the first token), so theirs say nothing of it.
func ackOverheadPrior(base sim.Config, prefills []Prefill) (mean, sd float64) {
	if base.Engine.Type != "vllm" {
		return 0, flatSD
	}
	var acks []float64
	for _, p := range prefills {
		if p.AckMs > 0 && p.AckMs < p.TTFTMs {
			acks = append(acks, p.AckMs)
		}
	}
	if len(acks) < minAcks || 2*len(acks) < len(prefills) {
		return 0, flatSD
	}
	return median(acks) + priorHandoffMs, priorHandoffSD
}

// The hand-off from vLLM's response headers to its engine core (ms), and
// how many idle requests' headers the prior needs; flatSD is the flat
// prior's sd.
const (
	priorHandoffMs, priorHandoffSD = 1.0, 0.5
	minAcks                        = 3
	flatSD                         = 1e4
)

// priorStallSD is the prior sd (ms) of frontend.arrival_stall_ms, whose
// prior mean is 0: an engine on its own device is not slowed by the
// server's work on arriving requests.
const priorStallSD = 100

// observations are the regression's data: engine steps from token gaps
// and idle prefills from TTFTs.
type observations struct {
	steps    []Step
	target   []int // the target each step is of
	prefills []Prefill
}

// collect gathers the steps and idle prefills of every target with
// records; a target without them contributes one steady decode step from
// its aggregate ITL.
func collect(targets []Target, opts StepsOptions) (observations, []string) {
	var obs observations
	var warnings []string
	for ti, t := range targets {
		if s, ok := ExtractSteps(t.Records, opts); ok {
			obs.steps = append(obs.steps, s...)
			obs.target = append(obs.target, slices.Repeat([]int{ti}, len(s))...)
			obs.prefills = append(obs.prefills, IdlePrefills(t.Records, opts)...)
			continue
		}
		if s, ok := aggregateStep(t, opts); ok {
			warnings = append(warnings, fmt.Sprintf("%s: no per-request token gaps (one chunk per token); fitted on its mean ITL only", t.Name))
			obs.steps = append(obs.steps, s)
			obs.target = append(obs.target, ti)
		}
	}
	return obs, warnings
}

// design is the regression's matrix: a step's basis features, 0 for the
// request overhead and its share of the server's work (Step.Frontend, the
// arrival stall, or 0 without host noise: the column then leaves the
// stall at its prior 0); then an idle prefill's summed features, 1 and 0.
// nSteps is how many rows are steps.
func (o observations) design(b basis, noise bool) (x [][]float64, y []float64, nSteps int) {
	mean, _ := b.prior()
	p := len(mean)
	for _, s := range o.steps {
		if s.Frontend > 0 && s.Shape.PrefillTokens > 0 {
			// A prompt step's own cost is far larger and less certain (its
			// booking): it would lend the arrival stall its residual.
			continue
		}
		row := make([]float64, p+2)
		s.features(b, row[:p])
		if noise {
			row[p+1] = s.Frontend
		}
		x, y = append(x, row), append(y, s.Ms)
	}
	nSteps = len(x)
	tmp := make([]float64, p)
	for _, pf := range o.prefills {
		row := make([]float64, p+2)
		for _, c := range pf.Chunks {
			b.features(c, tmp)
			for i, v := range tmp {
				row[i] += v
			}
		}
		row[p] = 1
		x, y = append(x, row), append(y, pf.TTFTMs)
	}
	return x, y, nSteps
}

// decodeSteps are the steps that only decoded: their durations, their
// means under the fitted step model (beta: the basis', then the request
// overhead's and the arrival stall's), and their groups (a target's steps
// with the same number of sequences). Steps a request was sent in stay:
// a send is likelier in a longer step, so leaving them out would leave out
// the stalled ones first.
func (o observations) decodeSteps(b basis, beta []float64) stallData {
	var d stallData
	p := len(beta) - 2
	row := make([]float64, len(beta))
	ids := map[[2]int]int{}
	for i, s := range o.steps {
		if s.Shape.PrefillTokens > 0 || s.Gaps == 0 {
			continue
		}
		s.features(b, row[:p])
		row[p+1] = s.Frontend
		fit := dot(row, beta)
		if !(fit > 0) || !(s.Ms > 0) {
			continue
		}
		key := [2]int{o.target[i], int(s.Shape.DecodeSeqs)}
		g, ok := ids[key]
		if !ok {
			g = len(ids)
			ids[key] = g
		}
		d.y, d.m, d.group = append(d.y, s.Ms), append(d.m, fit), append(d.group, g)
	}
	d.groups = len(ids)
	return d
}

// maxJitter caps the derived step jitter: residuals beyond this are model
// error, not step-to-step noise.
const maxJitter = 0.5

// minJitterPrefills is how many idle prefills measure the step jitter.
const minJitterPrefills = 5

// jitterOf is the step-time coefficient of variation to simulate: opt when
// set; else the relative spread of the idle prefills around the fit (each
// a whole number of engine steps, timed by the client from send to first
// token, so the delivery bursts that scatter single token gaps — tokens
// queued while the engine's threads hold the CPU — do not inflate it);
// else, without enough of them, the token-gap residual sd over the mean
// step.
func jitterOf(opt float64, post *posterior, px [][]float64, py, y []float64) float64 {
	switch {
	case opt > 0:
		return opt
	case opt < 0 || len(y) == 0:
		return 0
	}
	if len(py) >= minJitterPrefills {
		ss := 0.0
		for i, row := range px {
			fit := 0.0
			for j, b := range post.Beta {
				fit += b * row[j]
			}
			r := (py[i] - fit) / max(py[i], 1e-9)
			ss += r * r
		}
		return min(math.Sqrt(ss/float64(len(py))), maxJitter)
	}
	m := 0.0
	for _, v := range y {
		m += v
	}
	m /= float64(len(y))
	if m <= 0 {
		return 0
	}
	return min(post.Sigma/m, maxJitter)
}

// fitOverhead finds the frontend request overhead that makes the
// simulated TTFT (mean and median) match the real one over the targets,
// for runs with no request alone on an idle engine. TTFT is not monotone
// in it under load (arriving later can miss a step's start), so it is a
// grid over [lo, min(hi, the smallest real mean TTFT)], then a
// golden-section search around the best grid point.
func fitOverhead(ctx context.Context, cfg *sim.Config, targets []Target, lo, hi float64, opts Options, evals *int) (sim.CalibratedParam, error) {
	for _, t := range targets {
		if v, ok := t.Profile.Value(results.TagTTFT, "avg"); ok {
			hi = min(hi, v)
		}
	}
	if math.IsInf(hi, 1) {
		return sim.CalibratedParam{Name: "request_overhead_ms", Source: "prior (no TTFT)"}, nil
	}
	rounds := max(opts.MaxEvals/max(len(targets), 1), 4)
	fe, err := minimize1D(func(fe float64) (float64, error) {
		cfg.Frontend.RequestOverheadMs = fe
		*evals += len(targets) * opts.Seeds
		return ttftLoss(ctx, *cfg, targets, opts.Seeds)
	}, lo, max(lo, hi), rounds)
	if err != nil {
		return sim.CalibratedParam{}, err
	}
	cfg.Frontend.RequestOverheadMs = fe
	return sim.CalibratedParam{Name: "request_overhead_ms", Value: fe, SD: ttftSE(targets), Pinned: true,
		Source: "TTFT under load (simulated)"}, nil
}

// settleOverhead fits the request overhead on the simulator: on the
// runs' TTFT under load when no request met an idle engine (prefills 0),
// else within three sds of what the idle ones gave (idle), since the
// records may be an excerpt and the whole runs' TTFT is in the aggregate.
func settleOverhead(ctx context.Context, cfg *sim.Config, targets []Target, idle sim.CalibratedParam, prefills int, opts Options, evals *int) (sim.CalibratedParam, error) {
	cfg.Frontend.RequestOverheadMs = idle.Value
	if prefills == 0 {
		return fitOverhead(ctx, cfg, targets, 0, math.Inf(1), opts, evals)
	}
	w := 3*idle.SD + 1
	fe := idle
	var err error
	fe.Value, err = refineOverhead(ctx, cfg, targets, max(0, fe.Value-w), fe.Value+w, opts, evals)
	return fe, err
}

// refineOverhead searches the overhead in [lo, hi] on the simulator.
func refineOverhead(ctx context.Context, cfg *sim.Config, targets []Target, lo, hi float64, opts Options, evals *int) (float64, error) {
	opts.MaxEvals = 8 * len(targets)
	p, err := fitOverhead(ctx, cfg, targets, lo, hi, opts, evals)
	return p.Value, err
}

// ttftLoss is Σ log²(sim/real) of TTFT's mean and median over the targets.
func ttftLoss(ctx context.Context, cfg sim.Config, targets []Target, seeds int) (float64, error) {
	terms := []Term{{results.TagTTFT, "avg", 1}, {results.TagTTFT, "p50", 1}}
	_, l, err := evaluate(ctx, cfg, targets, terms, seeds)
	return l, err
}

// minimize1D spends about half of rounds on a grid over [lo, hi] and the
// rest on a golden-section search between the best point's neighbours.
func minimize1D(f func(float64) (float64, error), lo, hi float64, rounds int) (float64, error) {
	n := max(rounds/2, 3)
	best, bestX := math.Inf(1), lo
	step := (hi - lo) / float64(n-1)
	for i := range n {
		x := lo + float64(i)*step
		v, err := f(x)
		if err != nil {
			return 0, err
		}
		if v < best {
			best, bestX = v, x
		}
	}
	a, b := max(lo, bestX-step), min(hi, bestX+step)
	const g = 0.6180339887498949
	c, d := b-g*(b-a), a+g*(b-a)
	fc, err := f(c)
	if err != nil {
		return 0, err
	}
	fd, err := f(d)
	if err != nil {
		return 0, err
	}
	for range max(rounds-n-2, 0) {
		if fc < fd {
			b, d, fd = d, c, fc
			c = b - g*(b-a)
			if fc, err = f(c); err != nil {
				return 0, err
			}
		} else {
			a, c, fc = c, d, fd
			d = a + g*(b-a)
			if fd, err = f(d); err != nil {
				return 0, err
			}
		}
	}
	for _, p := range []struct{ x, v float64 }{{c, fc}, {d, fd}} {
		if p.v < best {
			best, bestX = p.v, p.x
		}
	}
	return bestX, nil
}

// ttftSE is the standard error of the targets' mean TTFT.
func ttftSE(targets []Target) float64 {
	v, n := 0.0, 0
	for _, t := range targets {
		std, ok1 := t.Profile.Value(results.TagTTFT, "std")
		cnt, ok2 := t.Profile.Value(results.TagRequestCount, "avg")
		if ok1 && ok2 && cnt > 0 {
			v += std * std / cnt
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return math.Sqrt(v) / float64(n)
}

// evaluate simulates every target with cfg on seeds seeds (cfg.Seed,
// cfg.Seed+1, …) and scores the median of their statistics.
func evaluate(ctx context.Context, cfg sim.Config, targets []Target, terms []Term, seeds int) ([]Row, float64, error) {
	var rows []Row
	loss := 0.0
	seed0 := cfg.Seed
	for _, t := range targets {
		t.client(&cfg.Frontend)
		profs := make([]*results.Profile, 0, seeds)
		for i := range seeds {
			cfg.Seed = seed0 + int64(i)
			prof, err := Simulate(ctx, cfg, t.Workload)
			if err != nil {
				return nil, 0, fmt.Errorf("calibrate: simulating %s (seed %d): %w", t.Name, cfg.Seed, err)
			}
			profs = append(profs, prof)
		}
		r, l := score(t, profs, terms)
		rows, loss = append(rows, r...), loss+l
	}
	return rows, loss, nil
}

func targetNames(targets []Target) []string {
	out := make([]string, len(targets))
	for i, t := range targets {
		out[i] = t.Name
	}
	return out
}

// score compares the median of simulated profiles (one per seed) with
// their target.
func score(t Target, simProfs []*results.Profile, terms []Term) ([]Row, float64) {
	var rows []Row
	loss := 0.0
	for _, term := range terms {
		real, ok1 := t.Profile.Value(term.Tag, term.Stat)
		got, n := results.MedianValue(simProfs, term.Tag, term.Stat)
		ok2 := n == len(simProfs) // else a seed lost the metric
		if !ok1 || real <= 0 {
			continue
		}
		if !ok2 || got <= 0 {
			loss += term.Weight * 25 // a metric the simulation lost: a large, finite penalty
			continue
		}
		lr := math.Log(got / real)
		loss += term.Weight * lr * lr
		rows = append(rows, Row{Target: t.Name, Metric: term.Tag, Stat: term.Stat, Real: real, Sim: got,
			ErrorPct: (got - real) / real * 100})
	}
	return rows, loss
}

// Simulate runs wl on cfg in memory and returns the aggregate profile.
func Simulate(ctx context.Context, cfg sim.Config, wl *traces.Workload) (*results.Profile, error) {
	agg := results.NewAggregator(nil)
	_, err := sim.Run(ctx, cfg, wl, func(r *results.Record) error {
		m := results.ComputeMetrics(r)
		agg.Add(&m)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return agg.Profile(), nil
}

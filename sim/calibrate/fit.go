package calibrate

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/simbench/simbench/internal/warning"
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
	// FitNoise fits the noise layer on a GPU config too (see fitsNoise);
	// a CPU config (hardware.cpu) always has it fitted.
	FitNoise bool
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
	Warnings       warning.List         `json:"warnings,omitempty"`
	// Noise is whether the noise layer was fitted (fitsNoise); without it
	// the written config has none.
	Noise bool `json:"noise_fitted"`
}

// Fit calibrates the simulator on targets, layer by layer, in the named
// stages of fitter.stages: the step model (the model layer's efficiencies
// and the server layer's overheads) by a Bayesian linear regression of the
// engine steps recovered from every target's token gaps (ExtractSteps) and
// of the idle requests' TTFTs, with a prior per coefficient (what the data
// pin, they decide; what they cannot see stays at its prior, and the
// report says which is which); then the request overhead on the simulator,
// since TTFT is the only place it shows; then, when fitsNoise, the noise
// layer. Everything is deterministic.
func Fit(ctx context.Context, targets []Target, opts Options) (*Result, error) {
	if len(targets) == 0 {
		return nil, errors.New("calibrate: no real run to fit")
	}
	f, err := newFitter(targets, withDefaults(opts))
	if err != nil {
		return nil, err
	}
	for _, st := range f.stages() {
		if err := st.run(ctx); err != nil {
			return nil, err
		}
	}
	f.res.Params = layered(f.res.Params)
	f.res.Noise = f.noise
	f.cfg.Calibration = &sim.Calibration{Model: f.res.Model, FittedOn: targetNames(f.targets), Range: f.res.Range, Parameters: f.res.Params}
	f.res.Config = f.cfg
	return f.res, nil
}

// fitter is one calibration under way: what each stage reads and leaves
// for the next.
type fitter struct {
	targets []Target
	opts    Options
	noise   bool // the noise layer is fitted (fitsNoise)
	b       basis
	sopts   StepsOptions
	obs     observations
	// The regression: its design, the priors (the basis' coefficients,
	// then the request overhead's and the arrival stall's: p and p+1) and
	// the posterior.
	x        [][]float64
	y        []float64
	nSteps   int
	mean, sd []float64
	p        int
	ovSD     float64
	post     *posterior
	cfg      sim.Config // the fitted config so far
	idle     sim.CalibratedParam
	res      *Result
}

// newFitter sets up the fit of targets; without the noise layer neither
// the base's noise nor the targets' client enter it.
func newFitter(targets []Target, opts Options) (*fitter, error) {
	b, err := newBasis(opts)
	if err != nil {
		return nil, err
	}
	eng, err := opts.Base.ResolveEngine()
	if err != nil {
		return nil, err
	}
	f := &fitter{targets: targets, opts: opts, noise: fitsNoise(opts), b: b, sopts: stepsOptions(eng),
		res: &Result{Model: b.model()}}
	if !f.noise {
		f.opts.Base = withoutNoise(opts.Base)
		f.targets = withoutClient(targets)
	}
	return f, nil
}

// stage is one named step of Fit.
type stage struct {
	name string
	run  func(context.Context) error
}

// stages are Fit's steps in order; each reads what those before it left.
func (f *fitter) stages() []stage {
	st := []stage{
		{"model: speculative decoding's acceptance from the runs' spec-decode counters, else the config's", f.acceptance},
		{"model and server: regress the step model on the token gaps and the idle TTFTs", f.regressSteps},
		{"model and server: settle aggregate-only runs' mean steps on the simulator; the request overhead from the idle TTFTs", f.settleAggregates},
		{"server: the template tokens", f.templateTokens},
	}
	if f.noise {
		st = append(st, stage{"noise: step jitter, host stalls and the arrival stall around the step model", f.stepNoise},
			stage{"noise: the client's gaps, stalls and tie order", f.client})
	}
	st = append(st, stage{"server: the request overhead on the simulator", f.requestOverhead})
	if f.noise {
		st = append(st, stage{"noise: the frontend's CPU share on the simulator", f.cpuShare},
			stage{"noise: the device's drift on the simulator", f.drift})
	}
	return append(st, stage{"score: the fitted runs simulated", f.score})
}

// regressSteps fits the step model and the request overhead (and, with
// the noise layer, the arrival stall) on the steps and idle prefills.
func (f *fitter) regressSteps(context.Context) error {
	f.obs, f.res.Warnings = collect(f.targets, f.sopts)
	f.x, f.y, f.nSteps = f.obs.design(f.b, f.noise)
	f.mean, f.sd = f.b.prior()
	f.p = len(f.mean)
	// The frontend's request overhead, and the stall the server's work on
	// a request puts on the engine's steps beside it (0 unless the data
	// show it).
	ovMean, ovSD := ackOverheadPrior(f.opts.Base, f.obs.prefills)
	f.mean, f.sd, f.ovSD = append(f.mean, ovMean, 0), append(f.sd, ovSD, priorStallSD), ovSD
	if err := f.regress(); err != nil {
		return err
	}
	// That work lasts the request overhead from the send: spread over the
	// steps beside it, as the simulator spreads it, once the overhead is
	// known.
	if ov := f.post.Beta[f.p]; ov > 0 && f.post.Beta[f.p+1] > 0 {
		f.sopts.FrontendMs = ov
		f.obs, _ = collect(f.targets, f.sopts)
		if err := f.regress(); err != nil {
			return err
		}
	}
	return nil
}

// regress fits the posterior on the observations' design.
func (f *fitter) regress() error {
	f.x, f.y, f.nSteps = f.obs.design(f.b, f.noise)
	if len(f.x) == 0 {
		return errors.New("calibrate: nothing to fit: no run has an engine step in its token gaps, a request that met an idle engine, or a mean ITL (is every output one token long?)")
	}
	post, err := regress(f.x, f.y, f.mean, f.sd)
	if err != nil {
		return fmt.Errorf("calibrate: %w", err)
	}
	f.post = post
	return nil
}

// apply is the base with the fitted step model.
func (f *fitter) apply() sim.Config {
	c := f.b.apply(f.opts.Base, f.post.Beta[:f.p])
	c.Timing.Speedup = 1
	return c
}

// settleAggregates: an aggregate's mean step is a model of the steps
// behind its ITL, and the simulator says how far off it is.
func (f *fitter) settleAggregates(ctx context.Context) error {
	err := settleAggregates(ctx, &f.obs, f.targets, f.opts, &f.res.Evals, func() (sim.Config, error) {
		if err := f.regress(); err != nil {
			return sim.Config{}, err
		}
		return f.apply(), nil
	})
	if err != nil {
		return err
	}
	f.cfg = f.apply()
	f.res.Params = append(relabel(f.b.params(f.post), f.obs), specParams(f.res.Params)...) // the acceptance stage's stay
	f.idle = sim.CalibratedParam{Name: "request_overhead_ms", Value: f.post.Beta[f.p], SD: f.post.SD[f.p], Pinned: true,
		Source: fmt.Sprintf("TTFT of %d requests on an idle engine", len(f.obs.prefills))}
	if f.ovSD < flatSD {
		f.idle.Source += fmt.Sprintf(", at least their response headers (%.3g ms) and a %g ± %g ms hand-off",
			f.mean[f.p]-priorHandoffMs, priorHandoffMs, priorHandoffSD)
	}
	f.cfg.Frontend.RequestOverheadMs = f.idle.Value
	return nil
}

// templateTokens: the token gaps and TTFTs are of the prompts the engine
// computed, template included; the simulated targets must compute them
// too.
func (f *fitter) templateTokens(context.Context) error {
	tmpl, n := templateTokens(f.targets)
	f.cfg.Frontend.TemplateTokens = tmpl
	if tmpl > 0 {
		f.res.Params = append(f.res.Params, sim.CalibratedParam{Name: "template_tokens", Value: float64(tmpl), Pinned: true,
			Source: fmt.Sprintf("usage.prompt_tokens − ISL of %d requests", n)})
	}
	return nil
}

// stepNoise: the step jitter from the residuals, host stalls as the rest
// of the decode steps' noise (never the base's), and the arrival stall the
// regression fitted.
func (f *fitter) stepNoise(context.Context) error {
	t := &f.cfg.Timing
	var src string
	t.Jitter, src = jitterOf(f.opts.Jitter, f.post, f.x[f.nSteps:], f.y[f.nSteps:], f.y)
	stalls := stallFit{}
	if f.opts.Jitter >= 0 {
		stalls = fitStalls(f.obs.decodeSteps(f.b, f.post.Beta))
	}
	t.StallMs, t.StallCV, t.StallsPerStep = stalls.Ms, stalls.CV, stalls.PerStep
	t.DriftCV, t.DriftPeriodMs = 0, 0 // measured on the simulator later: never the base's
	f.cfg.Frontend.ArrivalStallMs = f.post.Beta[f.p+1]
	f.res.Params = append(f.res.Params, param(f.post, f.p+1, "arrival_stall_ms", f.mean, f.sd))
	if f.opts.Jitter >= 0 {
		f.res.Params = append(f.res.Params, sim.CalibratedParam{Name: "jitter", Value: t.Jitter, Pinned: t.Jitter > 0, Source: src})
		f.res.Params = append(f.res.Params, stallParams(stalls)...)
	}
	return nil
}

// client: the runs were made by a real client, whose gaps and stalls are
// simulated, and whose simultaneous sends reach the server in the order of
// a race.
func (f *fitter) client(context.Context) error {
	cl := &f.cfg.Client
	cl.TieOrder = sim.TieOrderRandom
	cl.GapMs = f.targets[0].ClientGapMs
	gaps := pooledGaps(f.targets)
	cl.GapSamplesMs = gapSamples(gaps)
	cl.StallMs, cl.StallEveryMs = pooledStalls(f.targets)
	f.res.Params = append(f.res.Params, clientParam(*cl, len(gaps)))
	if cl.StallMs > 0 {
		src := "the client's gaps beyond 3.5 robust sds above their median, counted by the runs' mean gap"
		f.res.Params = append(f.res.Params,
			sim.CalibratedParam{Name: "client_stall_ms", Value: cl.StallMs, Pinned: true, Source: src},
			sim.CalibratedParam{Name: "client_stall_every_ms", Value: cl.StallEveryMs, Pinned: true, Source: src})
	}
	return nil
}

// requestOverhead settles the request overhead on the simulator. With one
// event loop (the noise layer's CPU share), the runs of one request at a
// time settle it and the others the share, which only they show.
func (f *fitter) requestOverhead(ctx context.Context) error {
	alone := f.targets
	if f.sharesLoop() {
		f.cfg.Frontend.CPUShare = priorCPUShare
		alone = slices.DeleteFunc(slices.Clone(f.targets), showsLoop)
		if len(alone) == 0 {
			alone = f.targets
		}
	}
	before := f.cfg.Timing.Physics.PrefillEfficiency
	fe, err := settleOverhead(ctx, &f.cfg, alone, f.idle, len(f.obs.prefills), f.ovSD < flatSD, f.opts, &f.res.Evals)
	if err != nil {
		return err
	}
	f.res.Params = append(f.res.Params, fe)
	if e := f.cfg.Timing.Physics.PrefillEfficiency; e != before {
		p := sim.CalibratedParam{Name: "prefill_efficiency", Value: e, Pinned: true,
			Prior:  effOr(before, f.cfg.Timing.Physics.ComputeEfficiency),
			Source: "TTFT beyond the frontend's overhead (simulated): the prompts' products"}
		// It replaces the regression's, compute_efficiency's at the prior's
		// ratio (physicsBasis.prefillExtra), when there is one.
		if i := slices.IndexFunc(f.res.Params, func(q sim.CalibratedParam) bool { return q.Name == p.Name }); i >= 0 {
			p.Prior = f.res.Params[i].Prior
			f.res.Params[i] = p
		} else {
			f.res.Params = append(f.res.Params, p)
		}
	}
	return nil
}

// sharesLoop is whether the fit sets the frontend's CPU share.
func (f *fitter) sharesLoop() bool { return f.noise && sharesLoop(f.cfg) }

// cpuShare fits the frontend's CPU share, when its event loop is the
// frontend's discipline.
func (f *fitter) cpuShare(ctx context.Context) error {
	if !f.sharesLoop() {
		return nil
	}
	cs, err := fitCPUShare(ctx, &f.cfg, f.targets, f.opts, &f.res.Evals)
	if err != nil {
		return err
	}
	f.res.Params = append(f.res.Params, cs)
	return nil
}

// drift: the device's slow drift is what per-request ITL spreads beyond
// the steps' noise, so it is measured on the fitted steps and overhead.
func (f *fitter) drift(ctx context.Context) error {
	if f.opts.Jitter < 0 {
		return nil
	}
	df, n, err := fitDrift(ctx, f.cfg, f.targets, f.opts.Seeds)
	if err != nil {
		return err
	}
	f.res.Evals += n
	f.cfg.Timing.DriftCV, f.cfg.Timing.DriftPeriodMs = df.CV, df.PeriodMs
	f.res.Params = append(f.res.Params, driftParams(df)...)
	return nil
}

// score simulates the fitted runs with the fitted config: the report's
// rows, its loss and its warnings, and the workload range the runs cover.
func (f *fitter) score(ctx context.Context) error {
	r := f.res
	var err error
	r.Rows, r.Loss, err = evaluate(ctx, f.cfg, f.targets, f.opts.Terms, f.opts.Seeds)
	if err != nil {
		return err
	}
	r.Evals += len(f.targets) * f.opts.Seeds
	r.Warnings = append(r.Warnings, missWarnings(r.Rows, len(f.targets))...)
	r.Warnings = append(r.Warnings, peakWarnings(r.Params)...)
	if w := combineWarning(f.opts.Base, f.b); w != nil {
		r.Warnings = append(r.Warnings, w)
	}
	r.Steps, r.StepResidualMs = f.nSteps, f.post.Sigma
	r.Range = calibrationRange(f.targets, f.obs.steps)
	return nil
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
func missWarnings(rows []Row, targets int) []error {
	var out []error
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
		out = append(out, fmt.Errorf("%s: the fit misses its own %s avg by %+.1f %% (beyond %d %%): %s",
			r.Target, r.Metric, r.ErrorPct, MissLimitPct, why))
	}
	return out
}

// combineWarning says when the fit does not keep the base configuration's
// physics combine mode (max or smooth): the regression is linear in the
// cost multipliers, so it fits, and writes, the sum of the compute and
// memory times. kernels and overlap are kept (linearised around the base:
// see physicsBasis.roof).
func combineWarning(base sim.Config, b basis) error {
	c := base.Timing.Physics.Combine
	if b.model() != "physics" || base.Timing.Model != "physics" || c == "" || c == "sum" || c == "kernels" || c == "overlap" {
		return nil
	}
	return fmt.Errorf("timing.physics.combine: the config's %q is not kept: calibrate fits, and writes, \"sum\" (its regression is linear in the efficiencies)", c)
}

// peakWarnings names the compute efficiencies the data pinned above 1 by
// more than two sds: no device computes faster than its peak, so the
// hardware spec's peak is too low (FLOPs per cycle, cores or threads, clock;
// a GPU preset) or the runs disagree. Bandwidth efficiencies above 1 are not flagged: a small model's
// weights and KV can stay in a CPU's cache, which streams faster than the
// memory bandwidth the spec gives.
func peakWarnings(ps []sim.CalibratedParam) []error {
	var out []error
	for _, p := range ps {
		if (p.Name == "compute_efficiency" || p.Name == "attention_efficiency") && p.Pinned && p.Value-2*p.SD > 1 && p.Value < maxEfficiency {
			out = append(out, fmt.Errorf("%s %.3g ± %.2g is above the device's peak: its spec (hardware.cpu or hardware.gpu) gives too low a peak, or the runs disagree",
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

// stepsOptions is how engine e (resolved: see sim.Config.ResolveEngine)
// chunks prompts.
func stepsOptions(e sim.EngineConfig) StepsOptions {
	switch e.Type {
	case "llamacpp":
		return StepsOptions{ChunkTokens: e.LlamaCpp.NBatch, PerSlot: e.LlamaCpp.Batch == sim.LlamaCppBatchPerSlot}
	case "sglang":
		return StepsOptions{ChunkTokens: e.SGLang.ChunkedPrefillSize}
	}
	if e.EnableChunkedPrefill {
		return StepsOptions{ChunkTokens: e.MaxNumBatchedTokens}
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

// gpuOverheadSD is the spread (ms) of a GPU configuration's request
// overhead around its frontend's that prefillBeyondOverhead allows: the
// public runs' folds put vLLM's between 6.9 and 8.8 ms; other frontends,
// and a long prompt's tokenization, take some ms more or less.
const gpuOverheadSD = 10

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
// records; a target without them, or whose token gaps time no step,
// contributes one steady decode step from its aggregate ITL.
func collect(targets []Target, opts StepsOptions) (observations, []error) {
	var obs observations
	var warnings []error
	for ti, t := range targets {
		s, ok := ExtractSteps(t.Records, opts)
		if ok {
			obs.prefills = append(obs.prefills, IdlePrefills(t.Records, opts)...)
		}
		if len(s) > 0 {
			obs.steps = append(obs.steps, s...)
			obs.target = append(obs.target, slices.Repeat([]int{ti}, len(s))...)
			continue
		}
		why := "no per-request token gaps (one chunk per token)"
		if ok {
			// On a loaded client every token can reach it out of step with
			// the other requests' (see buildSteps): no gap times one step.
			why = "no token gap times one engine step (the requests' tokens arrived out of step with each other)"
		}
		if a, ok := aggregateStep(t, opts); ok {
			warnings = append(warnings, fmt.Errorf("%s: %s; fitted on its mean ITL only", t.Name, why))
			obs.steps = append(obs.steps, a)
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

// jitterOf is the step-time coefficient of variation to simulate, and
// what decided it: opt when set; else the relative spread of the idle
// prefills around the fit (each a whole number of engine steps, timed by
// the client from send to first token, so the delivery bursts that
// scatter single token gaps — tokens queued while the engine's threads
// hold the CPU — do not inflate it); else, without enough of them, the
// token-gap residual sd over the mean step.
func jitterOf(opt float64, post *posterior, px [][]float64, py, y []float64) (float64, string) {
	switch {
	case opt > 0:
		return opt, "set by the caller"
	case opt < 0 || len(y) == 0:
		return 0, "none: no step to measure it on"
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
		return min(math.Sqrt(ss/float64(len(py))), maxJitter), fmt.Sprintf("relative spread of %d idle TTFTs around the fit", len(py))
	}
	m := 0.0
	for _, v := range y {
		m += v
	}
	m /= float64(len(y))
	if m <= 0 {
		return 0, "none: no step to measure it on"
	}
	return min(post.Sigma/m, maxJitter), "token gaps: the residual sd over the mean step"
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
// Unless response headers bounded it (headers), an overhead beyond the
// frontend's plausible one is weighed against the prompts' compute
// (prefillBeyondOverhead).
func settleOverhead(ctx context.Context, cfg *sim.Config, targets []Target, idle sim.CalibratedParam, prefills int, headers bool,
	opts Options, evals *int) (sim.CalibratedParam, error) {
	cfg.Frontend.RequestOverheadMs = idle.Value
	if prefills == 0 {
		fe, err := fitOverhead(ctx, cfg, targets, 0, math.Inf(1), opts, evals)
		if err != nil {
			return fe, err
		}
		return prefillBeyondOverhead(ctx, cfg, targets, fe, opts, evals)
	}
	w := 3*idle.SD + 1
	fe := idle
	var err error
	fe.Value, err = refineOverhead(ctx, cfg, targets, max(0, fe.Value-w), fe.Value+w, opts, evals)
	if err != nil || headers {
		return fe, err // vLLM's response headers measured the overhead: it stands
	}
	return prefillBeyondOverhead(ctx, cfg, targets, fe, opts, evals)
}

// prefillBeyondOverhead: a TTFT the request overhead fe explains only
// beyond what a GPU configuration's frontend plausibly takes (its trained
// overhead + 3 gpuOverheadSD) is the prompts' compute instead, when the
// prompt tokens' efficiency (timing.physics.prefill_efficiency) can
// explain it as well with the frontend's own overhead. Runs at one prompt
// length (aggregates, or idle requests whose response headers do not bound
// the overhead) pin only the sum of the two; the public GPU runs' short,
// prefix-cached prompts pin the overhead, and not the efficiency of a long
// prompt's products, so the sum goes to the efficiency. The efficiency is
// set in cfg; requestOverhead reports it.
func prefillBeyondOverhead(ctx context.Context, cfg *sim.Config, targets []Target, fe sim.CalibratedParam, opts Options, evals *int) (sim.CalibratedParam, error) {
	ov0 := opts.Base.Frontend.RequestOverheadMs
	if physicsStart(opts.Base) == nil || !(fe.Value > ov0+3*gpuOverheadSD) {
		return fe, nil
	}
	cfg.Frontend.RequestOverheadMs = fe.Value
	before, err := ttftLoss(ctx, *cfg, targets, opts.Seeds)
	if err != nil {
		return fe, err
	}
	*evals += len(targets) * opts.Seeds
	trial := *cfg
	trial.Frontend.RequestOverheadMs = ov0
	rounds := max(opts.MaxEvals/max(len(targets), 1), 4)
	logEff, err := minimize1D(func(x float64) (float64, error) {
		trial.Timing.Physics.PrefillEfficiency = math.Exp(x)
		*evals += len(targets) * opts.Seeds
		return ttftLoss(ctx, trial, targets, opts.Seeds)
	}, math.Log(minPrefillEff), 0, rounds)
	if err != nil {
		return fe, err
	}
	trial.Timing.Physics.PrefillEfficiency = math.Exp(logEff)
	after, err := ttftLoss(ctx, trial, targets, opts.Seeds)
	if err != nil {
		return fe, err
	}
	*evals += len(targets) * opts.Seeds
	if after > max(before, prefillLossTol*float64(len(targets))) {
		cfg.Frontend.RequestOverheadMs = fe.Value
		return fe, nil // the prompts' compute cannot explain it: the overhead stands
	}
	*cfg = trial
	return sim.CalibratedParam{Name: "request_overhead_ms", Value: ov0, SD: gpuOverheadSD, Prior: ov0,
		Source: fmt.Sprintf("prior: the frontend's; the %.4g ms TTFT beyond it is the prompts' compute (prefill_efficiency)", fe.Value-ov0)}, nil
}

// minPrefillEff is the lowest prompt-token efficiency prefillBeyondOverhead
// tries; prefillLossTol is the TTFT loss (Σ log² over mean and median) a
// target may keep when the efficiency explains its TTFT: about a 2 % miss.
const (
	minPrefillEff  = 0.02
	prefillLossTol = 2 * 0.02 * 0.02
)

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
		t.client(&cfg.Client)
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

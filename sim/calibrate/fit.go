package calibrate

import (
	"context"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/optimize"

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

// Params are the fitted timing parameters, all in ms.
type Params struct {
	BaseMs         float64 `json:"base_ms"`
	PrefillTokenMs float64 `json:"prefill_token_ms"`
	DecodeSeqMs    float64 `json:"decode_seq_ms"`
	ContextTokenMs float64 `json:"context_token_ms"`
	OverheadMs     float64 `json:"request_overhead_ms"`
}

const numParams = 5

func (p Params) vector() []float64 {
	return []float64{p.BaseMs, p.PrefillTokenMs, p.DecodeSeqMs, p.ContextTokenMs, p.OverheadMs}
}

func paramsOf(v []float64) Params {
	return Params{BaseMs: v[0], PrefillTokenMs: v[1], DecodeSeqMs: v[2], ContextTokenMs: v[3], OverheadMs: v[4]}
}

// Apply sets p as cfg's timing: the linear model and the request overhead.
func (p Params) Apply(cfg sim.Config) sim.Config {
	cfg.Timing.Model = "linear"
	cfg.Timing.Speedup = 1
	cfg.Timing.Linear = sim.LinearConfig{BaseMs: p.BaseMs, PrefillTokenMs: p.PrefillTokenMs,
		DecodeSeqMs: p.DecodeSeqMs, ContextTokenMs: p.ContextTokenMs}
	cfg.Frontend.RequestOverheadMs = p.OverheadMs
	return cfg
}

// Target is one real run to fit: its aggregate and the workload it ran.
type Target struct {
	Name     string
	Profile  *results.Profile
	Workload *traces.Workload
	// ClientGapMs is the load generator's gap between a response and the
	// next send from its slot (see EstimateClientGap); it is simulated, not
	// fitted.
	ClientGapMs float64
}

// Options tune Fit.
type Options struct {
	Base     sim.Config // engine, workers, router and KV are kept; timing is replaced
	Terms    []Term     // default DefaultTerms
	MaxEvals int        // simulator runs at most; default 1500
	Prior    float64    // weight of the pull towards the start; default 1e-5
	// Jitter is the step-time coefficient of variation to simulate; 0
	// derives it from the first target's chunk gaps (StepJitter), < 0
	// turns it off.
	Jitter float64
}

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
	Config sim.Config `json:"-"`
	Start  Params     `json:"start"`
	Params Params     `json:"params"`
	Rows   []Row      `json:"fit"`
	Loss   float64    `json:"loss"`
	Evals  int        `json:"evaluations"`
}

// Fit calibrates the linear timing model on targets.
func Fit(ctx context.Context, targets []Target, opts Options) (*Result, error) {
	if len(targets) == 0 {
		return nil, errors.New("calibrate: no real run to fit")
	}
	opts = withDefaults(opts)
	switch {
	case opts.Jitter == 0:
		opts.Base.Timing.Jitter = StepJitter(targets[0].Profile)
	case opts.Jitter > 0:
		opts.Base.Timing.Jitter = opts.Jitter
	default:
		opts.Base.Timing.Jitter = 0
	}
	start := Initial(targets[0].Profile, targets[0].Workload)
	f := &fitter{ctx: ctx, targets: targets, opts: opts, scale: start.vector(), prior: opts.Prior}
	if err := f.check(); err != nil {
		return nil, err
	}
	best, err := f.minimize()
	if err != nil {
		return nil, err
	}
	p := paramsOf(f.params(best))
	rows, loss, err := f.evaluate(p)
	if err != nil {
		return nil, err
	}
	cfg := p.Apply(opts.Base)
	cfg.Frontend.ClientGapMs = targets[0].ClientGapMs
	return &Result{Config: cfg, Start: start, Params: p, Rows: rows, Loss: loss, Evals: f.evals}, nil
}

func withDefaults(o Options) Options {
	if o.Terms == nil {
		o.Terms = DefaultTerms
	}
	if o.MaxEvals <= 0 {
		o.MaxEvals = 1500
	}
	if o.Prior == 0 {
		o.Prior = 1e-5
	}
	return o
}

// fitter holds one calibration. Parameters are searched as x with
// param_i = scale_i · exp(x_i): positive, and scale-free for the optimizer.
type fitter struct {
	ctx     context.Context
	targets []Target
	opts    Options
	scale   []float64
	prior   float64 // current weight of the pull towards the start
	evals   int
	err     error
}

func (f *fitter) params(x []float64) []float64 {
	out := make([]float64, len(x))
	for i, xi := range x {
		out[i] = f.scale[i] * math.Exp(xi)
	}
	return out
}

// check runs the start once so configuration errors surface as errors.
func (f *fitter) check() error {
	_, _, err := f.evaluate(paramsOf(f.scale))
	return err
}

// minimize runs Nelder–Mead, restarting from the best point until a
// restart no longer improves the loss by 1e-9 or evaluations run out. The
// first round settles the directions the data cannot see near the start;
// later rounds weaken that pull 100-fold, so where the data does decide,
// the data wins.
func (f *fitter) minimize() ([]float64, error) {
	x := make([]float64, numParams)
	best := math.Inf(1)
	for round := 0; round < 6 && f.evals < f.opts.MaxEvals; round++ {
		if round == 1 {
			f.prior, best = f.opts.Prior/100, f.loss(x)
		}
		res, err := optimize.Minimize(optimize.Problem{Func: f.loss}, x, &optimize.Settings{
			FuncEvaluations: f.opts.MaxEvals - f.evals, Converger: &optimize.FunctionConverge{
				Absolute: 1e-10, Relative: 1e-10, Iterations: 200}}, &optimize.NelderMead{SimplexSize: 0.5 / float64(round+1)})
		if f.err != nil {
			return nil, f.err
		}
		if res == nil {
			return nil, fmt.Errorf("calibrate: optimizer: %w", err)
		}
		improved := best-res.F > 1e-9
		if res.F < best {
			best, x = res.F, res.X
		}
		if !improved {
			break
		}
	}
	return x, nil
}

// priorScale weighs the pull towards the start per parameter (base, prefill
// token, decode sequence, context token, overhead). Prefill cost and
// frontend overhead are pulled 100× harder: a run at one prompt length
// cannot tell them apart, and otherwise the optimizer would move TTFT into
// whichever one lets step jitter best mimic TTFT's tail.
var priorScale = [numParams]float64{1, 100, 1, 1, 100}

// loss is the optimizer's objective.
func (f *fitter) loss(x []float64) float64 {
	if f.err != nil {
		return math.Inf(1)
	}
	_, l, err := f.evaluate(paramsOf(f.params(x)))
	if err != nil {
		f.err = err
		return math.Inf(1)
	}
	prior := 0.0
	for i, xi := range x {
		prior += priorScale[i] * xi * xi
	}
	return l + f.prior*prior
}

// evaluate simulates every target with p and scores it.
func (f *fitter) evaluate(p Params) ([]Row, float64, error) {
	f.evals++
	cfg := p.Apply(f.opts.Base)
	var rows []Row
	loss := 0.0
	for _, t := range f.targets {
		cfg.Frontend.ClientGapMs = t.ClientGapMs
		prof, err := Simulate(f.ctx, cfg, t.Workload)
		if err != nil {
			return nil, 0, fmt.Errorf("calibrate: simulating %s: %w", t.Name, err)
		}
		r, l := score(t, prof, f.opts.Terms)
		rows, loss = append(rows, r...), loss+l
	}
	return rows, loss, nil
}

// score compares one simulated profile with its target.
func score(t Target, simProf *results.Profile, terms []Term) ([]Row, float64) {
	var rows []Row
	loss := 0.0
	for _, term := range terms {
		real, ok1 := t.Profile.Value(term.Tag, term.Stat)
		got, ok2 := simProf.Value(term.Tag, term.Stat)
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

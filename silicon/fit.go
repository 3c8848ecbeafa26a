package silicon

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/simbench/simbench/sim"
)

// The fitted parameters, in the order of a parameter vector: the three
// efficiencies in log space (bounded to [minEff, 1]), the four overheads
// in ms (at least 0).
const (
	pMemory = iota
	pKV
	pCompute
	pStep
	pSeq
	pPrefill
	pRequest
	numParams
)

var paramNames = [numParams]string{
	"timing.physics.memory_efficiency", "timing.physics.kv_efficiency", "timing.physics.compute_efficiency",
	"timing.physics.step_overhead_ms", "timing.physics.seq_overhead_ms", "timing.physics.prefill_overhead_ms",
	"frontend.request_overhead_ms",
}

// ParamNames are the configuration keys FitPrior fits, in its order.
func ParamNames() []string { return paramNames[:] }

const minEff = 0.05

// fdStep is each parameter's finite-difference step: 3 % of an
// efficiency, or 5 % of an overhead (at least its floor), large enough
// that a step's effect is not one event's reordering.
func fdStep(i int, x float64) float64 {
	floors := [numParams]float64{0, 0, 0, 0.1, 0.005, 0.1, 0.5}
	if i <= pCompute {
		return 0.03
	}
	return max(0.05*math.Abs(x), floors[i])
}

func toVector(p sim.GPUPrior) []float64 {
	ph := p.Physics
	return []float64{math.Log(ph.MemoryEfficiency), math.Log(effOr(ph.KVEfficiency, ph.MemoryEfficiency)),
		math.Log(ph.ComputeEfficiency), ph.StepOverheadMs, ph.SeqOverheadMs, ph.PrefillOverheadMs, p.RequestOverheadMs}
}

func effOr(e, fallback float64) float64 {
	if e > 0 {
		return e
	}
	return fallback
}

// fromVector is the prior of x (projected onto the bounds), with base's
// combine mode and the parameters FitPrior does not fit (the long
// prompts' kernel efficiencies, prefill_ and attention_efficiency, which
// the corpus's short, prefix-cached prompts cannot pin: a start that sets
// them keeps them).
func fromVector(x []float64, base sim.GPUPrior) sim.GPUPrior {
	p := base
	eff := func(v float64) float64 { return min(1, max(minEff, math.Exp(v))) }
	p.Physics.MemoryEfficiency, p.Physics.KVEfficiency, p.Physics.ComputeEfficiency = eff(x[pMemory]), eff(x[pKV]), eff(x[pCompute])
	p.Physics.StepOverheadMs, p.Physics.SeqOverheadMs = max(0, x[pStep]), max(0, x[pSeq])
	p.Physics.PrefillOverheadMs, p.RequestOverheadMs = max(0, x[pPrefill]), max(0, x[pRequest])
	return p
}

// project keeps x within the bounds fromVector applies, so that a step
// beyond a bound does not leave the solver pushing on a flat direction.
func project(x []float64) []float64 {
	return toVector(fromVector(x, sim.GPUPrior{Physics: sim.PhysicsConfig{Combine: "sum"}}))
}

// FitTargets are the figures FitPrior matches on every stage: the TTFT
// and ITL means (E2E mean is TTFT mean + (OSL − 1)·ITL mean: it would count
// ITL twice). The percentiles are not fitted: their spread around the
// means comes from the arrivals' bursts (Stage.Replay), which the fit's
// short replays draw once, so a fit to them would fit that one draw and
// tune the step's costs to widen or narrow it (refitted with the TTFT and
// E2E p90s as well, every leave-one-deployment-out median but E2E p99's
// came out worse).
var FitTargets = []Metric{
	{"ttft_mean", func(f Figures) *float64 { return f.TTFTMean }},
	{"itl_mean", func(f Figures) *float64 { return f.ITLMean }},
}

// FitOptions bound a fit's work.
type FitOptions struct {
	MaxRequests int // requests measured per stage (Replay's cap); 0 = all
	MaxIter     int // Levenberg–Marquardt iterations; 0 = 12
	Parallel    int // stages simulated at once; 0 = GOMAXPROCS
	// Fixed are parameter indices (ParamNames order) the fit leaves at
	// their starting values.
	Fixed []int
	// Shrink pulls the fit towards a centre (see Shrink); its zero value
	// fits by least squares alone.
	Shrink Shrink
}

// Shrink is a penalty that pulls a fit towards a centre fixed before any
// data: the fit minimises the data's loss plus Strength · Σ ((x_i −
// centre_i)/shrinkScale_i)² over the free parameters it shrinks (in the
// fit's space: the efficiencies' logarithms, the overheads in ms). It is a
// Gaussian prior's log-density, so the fit is a posterior mode (MAP), not
// a least-squares fit. What it is for: parameters the corpus pins only in
// combination (weight-memory efficiency against the per-step overhead,
// when the stages' models are of a few sizes) slide along that
// combination in a fit without some models, to values that do not carry
// to those models; the penalty keeps them near plausible values unless
// the data pay for leaving. Its strength is chosen by
// leave-one-model-out (SelectShrink).
type Shrink struct {
	Strength float64
	Centre   sim.GPUPrior
}

// shrinkScale is each parameter's plausible spread across GPUs and
// engines, fixed before any data (ParamNames order): a factor of e^0.3
// (±35 %) on the weight and KV memory efficiencies, 1 ms on the per-step
// overhead, 0.02 ms per sequence. 0: not shrunk. The compute efficiency
// is not (every fit puts it on its upper bound, 1: the centre's 0.5 is
// below what the model's structure needs, and the corpus's one
// near-saturated stage pins it; shrunk, its folds without that stage
// saturated it), nor the prefill and request overheads (the hand-set
// prior has neither: its 0 is "not modelled", not a plausible value).
var shrinkScale = [numParams]float64{0.3, 0.3, 0, 1, 0.02, 0, 0}

// penalty is s's residuals at x for the free parameters it shrinks: their
// squares sum to the penalty. None when s.Strength is 0.
func (s Shrink) penalty(x []float64, free []int) []float64 {
	if !(s.Strength > 0) {
		return nil
	}
	c, w := project(toVector(s.Centre)), math.Sqrt(s.Strength)
	var out []float64
	for _, i := range free {
		if shrinkScale[i] > 0 {
			out = append(out, w*(x[i]-c[i])/shrinkScale[i])
		}
	}
	return out
}

// FitResult is a fitted prior and how well it matches its stages.
type FitResult struct {
	Prior      sim.GPUPrior
	RMSLog     float64 // root mean square of the fit's data residuals: ln(sim/real), Huber-scaled beyond huberDelta (see robust)
	Loss       float64 // what the fit minimised: the data residuals' sum of squares plus the shrinkage penalty
	Iterations int
	Evals      int // simulations of the whole stage set
}

// FitPrior fits the GPU prior's parameters to stages by
// Levenberg–Marquardt on the Huber loss (see robust) of the log residuals
// ln(sim/real) of FitTargets plus opt.Shrink's penalty, each stage
// simulated with the candidate prior (Stage.Config over base with the
// prior applied). The Jacobian is by forward differences;
// the simulator is deterministic, so the residuals are a function of the
// parameters. start's combine mode is kept.
//
// Why by hand: gonum's optimize has no least-squares solver, and a
// general minimiser would need several times the simulations a
// Gauss–Newton step uses.
func FitPrior(ctx context.Context, stages []*Stage, base sim.Config, start sim.GPUPrior, opt FitOptions) (FitResult, error) {
	if len(stages) == 0 {
		return FitResult{}, errors.New("fit: no stages")
	}
	f := &fitter{ctx: ctx, stages: stages, base: base, start: start, opt: opt}
	return f.run()
}

type fitter struct {
	ctx    context.Context
	stages []*Stage
	base   sim.Config
	start  sim.GPUPrior
	opt    FitOptions
	evals  int
}

func (f *fitter) free() []int {
	fixed := map[int]bool{}
	for _, i := range f.opt.Fixed {
		fixed[i] = true
	}
	var out []int
	for i := range numParams {
		if !fixed[i] {
			out = append(out, i)
		}
	}
	return out
}

func (f *fitter) run() (FitResult, error) {
	x := project(toVector(f.start))
	rs, err := f.residuals([][]float64{x})
	if err != nil {
		return FitResult{}, err
	}
	r, cost := rs[0], sumSq(rs[0])
	lambda, iters := 1e-2, 0
	maxIter := cmp.Or(f.opt.MaxIter, 12)
	for iters < maxIter {
		iters++
		xn, rn, costn, lam, err := f.step(x, r, cost, lambda)
		if err != nil {
			return FitResult{}, err
		}
		lambda = lam
		if costn >= cost {
			break // no step lowered the cost: a minimum within the damping's reach
		}
		gain := (cost - costn) / cost
		x, r, cost = xn, rn, costn
		if gain < 1e-3 {
			break
		}
	}
	data := r[:len(r)-len(f.opt.Shrink.penalty(x, f.free()))]
	return FitResult{Prior: fromVector(x, f.start), RMSLog: math.Sqrt(sumSq(data) / float64(len(data))), Loss: cost,
		Iterations: iters, Evals: f.evals}, nil
}

// step is one Levenberg–Marquardt iteration from x: the Jacobian, then
// damped Gauss–Newton steps until one lowers the cost or the damping
// saturates. It returns the new point (x itself when none did).
func (f *fitter) step(x, r []float64, cost, lambda float64) ([]float64, []float64, float64, float64, error) {
	free := f.free()
	points := make([][]float64, len(free))
	for k, i := range free {
		xp := append([]float64(nil), x...)
		xp[i] += fdStep(i, x[i])
		points[k] = xp
	}
	rp, err := f.residuals(points)
	if err != nil {
		return nil, nil, 0, 0, err
	}
	J := mat.NewDense(len(r), len(free), nil)
	for k, i := range free {
		h := points[k][i] - x[i]
		for j := range r {
			J.Set(j, k, (rp[k][j]-r[j])/h)
		}
	}
	for lambda < 1e6 {
		delta, err := lmDelta(J, r, lambda)
		if err != nil {
			lambda *= 4
			continue
		}
		xn := append([]float64(nil), x...)
		for k, i := range free {
			xn[i] += delta[k]
		}
		xn = project(xn)
		rn, err := f.residuals([][]float64{xn})
		if err != nil {
			return nil, nil, 0, 0, err
		}
		if c := sumSq(rn[0]); c < cost {
			return xn, rn[0], c, max(lambda/3, 1e-6), nil
		}
		lambda *= 4
	}
	return x, r, cost, lambda, nil
}

// lmDelta solves (JᵀJ + λ·diag(JᵀJ)) δ = −Jᵀr.
func lmDelta(J *mat.Dense, r []float64, lambda float64) ([]float64, error) {
	_, n := J.Dims()
	var A mat.Dense
	A.Mul(J.T(), J)
	for i := range n {
		A.Set(i, i, A.At(i, i)*(1+lambda)+1e-9)
	}
	var g mat.VecDense
	g.MulVec(J.T(), mat.NewVecDense(len(r), r))
	g.ScaleVec(-1, &g)
	var d mat.VecDense
	if err := d.SolveVec(&A, &g); err != nil {
		return nil, err
	}
	return d.RawVector().Data, nil
}

// residuals simulates every stage at every point (in parallel) and returns
// each point's residual vector.
func (f *fitter) residuals(points [][]float64) ([][]float64, error) {
	f.evals += len(points)
	figs := make([][]Figures, len(points))
	for i := range figs {
		figs[i] = make([]Figures, len(f.stages))
	}
	type job struct{ p, s int }
	jobs := make(chan job)
	var mu sync.Mutex
	var firstErr error
	var wg sync.WaitGroup
	for range cmp.Or(f.opt.Parallel, runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				fig, err := f.simulate(points[j.p], f.stages[j.s])
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				figs[j.p][j.s] = fig
				mu.Unlock()
			}
		}()
	}
	for p := range points {
		for s := range f.stages {
			jobs <- job{p, s}
		}
	}
	close(jobs)
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	out := make([][]float64, len(points))
	free := f.free()
	for p := range points {
		out[p] = append(f.residualVector(figs[p]), f.opt.Shrink.penalty(points[p], free)...)
	}
	return out, nil
}

func (f *fitter) simulate(x []float64, s *Stage) (Figures, error) {
	cfg := f.base
	sim.ApplyPrior(fromVector(x, f.start), &cfg)
	cfg, err := s.Config(cfg)
	if err != nil {
		return Figures{}, err
	}
	return s.Simulate(f.ctx, cfg, f.opt.MaxRequests)
}

// residualVector is ln(sim/real) of every target every stage publishes; a
// figure the simulation lacks (no request finished) counts as a tenfold
// miss.
func (f *fitter) residualVector(figs []Figures) []float64 {
	var r []float64
	for i, s := range f.stages {
		for _, t := range FitTargets {
			real := t.Get(s.Actual)
			if real == nil || !(*real > 0) {
				continue
			}
			got := t.Get(figs[i])
			if got == nil || !(*got > 0) {
				r = append(r, math.Log(10))
				continue
			}
			r = append(r, robust(math.Log(*got / *real)))
		}
	}
	return r
}

// huberDelta is where the fit's loss turns from squared to linear: a log
// residual of 0.1 (an 11 % miss, the size of the spread the corpus's own
// deployments of one model show).
const huberDelta = 0.1

// robust maps a log residual r to one whose square is twice Huber's loss
// of r, so that least squares on it minimises the Huber loss: a stage the
// prior cannot fit (one that saturates in simulation, a 500-fold TTFT
// miss) pulls on the parameters linearly, not quadratically, and does not
// outweigh the twenty stages it can fit.
func robust(r float64) float64 {
	a := math.Abs(r)
	if a <= huberDelta {
		return r
	}
	return math.Copysign(math.Sqrt(huberDelta*(2*a-huberDelta)), r)
}

func sumSq(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x * x
	}
	return s
}

// describePrior names the prior's values, for logs.
func describePrior(p sim.GPUPrior) string {
	ph := p.Physics
	return fmt.Sprintf("mem %.3f kv %.3f compute %.3f step %.3f ms seq %.4f ms prefill %.3f ms request %.2f ms (%s)",
		ph.MemoryEfficiency, ph.KVEfficiency, ph.ComputeEfficiency, ph.StepOverheadMs, ph.SeqOverheadMs,
		ph.PrefillOverheadMs, p.RequestOverheadMs, ph.Combine)
}

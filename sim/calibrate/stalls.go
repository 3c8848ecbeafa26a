package calibrate

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/simbench/simbench/sim"
)

// Host stalls (sim's timing.stall_ms, stall_cv and stalls_per_step) are
// fitted by maximum likelihood on the durations of the steps that only
// decoded: a step computes for a clean time, normal around its group's
// level with an sd proportional to it, and waits out a Poisson number of
// stalls whose durations are lognormal around one mean. A group is the
// steps of one run with the same number of decoding sequences; each has its
// own clean level (a factor on the step model's mean), so that where the
// step model misses a group's mean, which is the regression's business,
// the stalls need not explain it. The steps nothing explains go to a flat
// outlier density of a fitted share (at most maxOutlierShare), so that
// they cannot set the fit: a prompt's step the token stream misattributed.
//
// The clean part is normal, not lognormal, because of what the client
// sees: a token the server held back arrives right after the next one, so
// one gap in ten at concurrency 1 on the CPU engine is under 1 ms beside a
// median of 4. In log space that tail is as long as the stalls' and a
// lognormal clean part widens to swallow both (log-sd 0.95, and no stall
// fits); a normal one takes it as its own lower tail.
//
// EM fits it, every step in closed form: the rate is the mean stall count;
// the levels and the clean spread come from the clean steps, the stalls'
// mean and spread from the steps with one stall (the time beyond their
// clean mean). A step with n > 1 stalls is priced as one lognormal of n
// times the mean and 1/√n the cv (Fenton–Wilkinson), and a stalled step's
// clean part at its mean: the stalls' spread dwarfs the clean one.
//
// The stalls are kept only when they explain the steps better than the
// clean spread alone by more than BIC's price of their three parameters,
// when they are exceptions (at most maxFittedStallsPerStep a step) and when
// they stand apart from the clean steps (a mean stall longer than
// stallSeparation clean sd of a median step): otherwise the data show no
// stalls and the config has none (a GPU's token gaps).

// minStallSteps is how many decode steps a stall fit needs.
const minStallSteps = 50

// maxFittedStallsPerStep: more stalls than this in an average step are
// the step's bulk, not exceptions.
const maxFittedStallsPerStep = 1

// stallSeparation is how many clean sd (of a median step) a mean stall
// must exceed to be a mode of its own rather than the clean spread's
// tail.
const stallSeparation = 3

// startOutlierShare and maxOutlierShare: the flat outlier density's
// share of the steps, at the start of EM and at most.
const (
	startOutlierShare = 0.02
	maxOutlierShare   = 0.25
)

// maxStallsSummed bounds the Poisson sum of a step's likelihood: at the
// largest rate kept, more stalls in one step are negligible, and the
// outlier density covers what is left.
const maxStallsSummed = 12

// emRounds and emTol bound the EM iterations.
const (
	emRounds = 300
	emTol    = 1e-8
)

// stallFit is the estimate and its evidence.
type stallFit struct {
	Ms, CV, PerStep       float64 // 0, 0, 0 without stalls
	SDMs, SDCV, SDPerStep float64
	Steps                 int
	Best                  stallState // the likeliest stalls, kept or not
	DeltaLogLik           float64    // log-likelihood gained over no stalls
	Threshold             float64    // BIC's price of the three parameters: ½·3·ln(n)
}

func (f stallFit) ok() bool { return f.Ms > 0 }

// stallData are decode steps: measured durations y and the step model's
// means m (ms), and each step's group.
type stallData struct {
	y, m    []float64
	group   []int
	groups  int
	outlier float64 // flat density of an outlier: 1 / (the longest step)
}

// stallState is one point of the EM: the rate, the stalls' mean (ms) and
// log-sd, the groups' log levels (the log of a clean step's mean over the
// model's), the clean part's relative sd, and the outliers' share.
type stallState struct {
	Rate, Ms, LogSD float64
	Level           []float64
	Sigma           float64 // the clean part's sd over its mean
	Outliers        float64 // the outlier density's share
}

// cv is one stall's coefficient of variation.
func (st stallState) cv() float64 { return math.Sqrt(math.Expm1(st.LogSD * st.LogSD)) }

// fitStalls estimates host stalls from decode steps.
func fitStalls(d stallData) stallFit {
	fit := stallFit{Steps: len(d.y)}
	if len(d.y) < minStallSteps {
		return fit
	}
	d.outlier = 1 / slices.Max(d.y)
	low := d.lowLevels() // EM's M-step copies the levels; every start may share them
	_, null := d.emFrom(stallState{Level: low, Sigma: 0.5, Outliers: startOutlierShare})
	med := median(d.y)
	best, bestLL := stallState{}, math.Inf(-1)
	for _, k := range []float64{2, 5} {
		for _, sigma := range []float64{0.2, 0.6} {
			st, ll := d.emFrom(stallState{Rate: 0.2, Ms: k * med, LogSD: 0.5, Level: low, Sigma: sigma, Outliers: startOutlierShare})
			if ll > bestLL {
				best, bestLL = st, ll
			}
		}
	}
	fit.Best, fit.DeltaLogLik = best, bestLL-null
	fit.Threshold = 1.5 * math.Log(float64(len(d.y)))
	distinct := best.Ms > stallSeparation*best.Sigma*med
	if best.Rate == 0 || fit.DeltaLogLik <= fit.Threshold || best.Rate > maxFittedStallsPerStep || !distinct {
		return fit
	}
	fit.Ms, fit.CV, fit.PerStep = best.Ms, best.cv(), best.Rate
	// Sampling sds: of a Poisson mean over the steps; of a lognormal's mean
	// and of its log-sd (carried to the cv) over the stalls seen.
	seen := max(best.Rate*float64(len(d.y)), 1)
	fit.SDPerStep = math.Sqrt(best.Rate / float64(len(d.y)))
	fit.SDMs = best.Ms * fit.CV / math.Sqrt(seen)
	s := best.LogSD
	fit.SDCV = s * math.Exp(s*s) / fit.CV * s / math.Sqrt(2*seen)
	return fit
}

// lowLevels is every group's lower tercile of log(y/m): a clean level
// below the stalls to start EM from.
func (d stallData) lowLevels() []float64 {
	per := make([][]float64, d.groups)
	for i, y := range d.y {
		per[d.group[i]] = append(per[d.group[i]], math.Log(y/d.m[i]))
	}
	out := make([]float64, d.groups)
	for g, v := range per {
		if len(v) > 0 {
			slices.Sort(v)
			out[g] = v[len(v)/3]
		}
	}
	return out
}

// emFrom runs EM from st (st.Rate 0: no stalls, only the clean levels
// and spread) and returns the fit and its log-likelihood.
func (d stallData) emFrom(st stallState) (stallState, float64) {
	prev, ll := st, math.Inf(-1)
	acc := newStallAcc(d.groups)
	for range emRounds {
		acc.reset()
		cur := d.expectAll(st, acc) // st's log-likelihood
		// The capped rate and the n > 1 terms make this EM generalised,
		// not strictly monotone: a step that lost is undone.
		if cur < ll {
			return prev, ll
		}
		if cur-ll < emTol*math.Abs(cur) {
			return st, cur
		}
		prev, ll = st, cur
		st = acc.maximise(st)
	}
	return st, d.logLik(st)
}

// logLik is the data's log-likelihood under st.
func (d stallData) logLik(st stallState) float64 {
	return d.expectAll(st, newStallAcc(d.groups))
}

// expectAll is the E-step over every step: it fills acc and returns the
// log-likelihood.
func (d stallData) expectAll(st stallState, acc *stallAcc) float64 {
	total := 0.0
	for i := range d.y {
		total += d.expect(i, st, acc)
	}
	return total
}

// stallAcc accumulates the E-step's weighted sums.
type stallAcc struct {
	w, wn       float64 // weight of explained steps, and of their stalls
	out         float64 // weight of outliers
	steps       int
	gw, gl      []float64 // per group: clean weight, weighted log ratio
	cl, cw      []float64 // clean terms: log ratio and weight, for σ
	cg          []int
	s1w, s1, s2 float64 // one-stall terms: weight, Σ w·log(stall), Σ w·log²
}

func newStallAcc(groups int) *stallAcc {
	return &stallAcc{gw: make([]float64, groups), gl: make([]float64, groups)}
}

func (a *stallAcc) reset() {
	a.w, a.wn, a.s1w, a.s1, a.s2, a.out, a.steps = 0, 0, 0, 0, 0, 0, 0
	clear(a.gw)
	clear(a.gl)
	a.cl, a.cw, a.cg = a.cl[:0], a.cw[:0], a.cg[:0]
}

// expect adds step i's responsibilities over its stall counts to acc and
// returns its log-likelihood.
func (d stallData) expect(i int, st stallState, acc *stallAcc) float64 {
	var lik [maxStallsSummed + 1]float64
	g, y := d.group[i], d.y[i]
	clean := d.m[i] * math.Exp(st.Level[g])
	rate := st.Rate
	if st.Ms > 0 {
		rate = sim.StallRate(d.m[i], st.Ms, rate) // as sim caps a short step's
	}
	capped := rate < st.Rate
	pn := math.Exp(-rate)
	lik[0] = pn * distuv.Normal{Mu: clean, Sigma: st.Sigma * clean}.Prob(y)
	total, terms := lik[0], 1
	for n := 1; n <= maxStallsSummed && rate > 0; n++ {
		pn *= rate / float64(n)
		x := y - clean
		if x <= 0 {
			break
		}
		s2 := math.Log1p(math.Expm1(st.LogSD*st.LogSD) / float64(n))
		lik[n] = pn * distuv.LogNormal{Mu: math.Log(float64(n)*st.Ms) - s2/2, Sigma: math.Sqrt(s2)}.Prob(x)
		total += lik[n]
		terms = n + 1
	}
	mix := (1-st.Outliers)*total + st.Outliers*d.outlier
	acc.out += st.Outliers * d.outlier / mix
	acc.steps++
	for n := range terms {
		r := (1 - st.Outliers) * lik[n] / mix
		if !capped { // a capped step's count says nothing of the rate
			acc.w += r
			acc.wn += r * float64(n)
		}
		switch n {
		case 0:
			l := y / d.m[i]
			acc.gw[g] += r
			acc.gl[g] += r * l
			acc.cl, acc.cw, acc.cg = append(acc.cl, l), append(acc.cw, r), append(acc.cg, g)
		case 1:
			l := math.Log(y - clean)
			acc.s1w += r
			acc.s1 += r * l
			acc.s2 += r * l * l
		}
	}
	return math.Log(mix)
}

// maximise is the M-step from the previous state prev.
func (a *stallAcc) maximise(prev stallState) stallState {
	st := stallState{Level: slices.Clone(prev.Level), Sigma: prev.Sigma, Ms: prev.Ms, LogSD: prev.LogSD,
		Outliers: min(max(a.out/float64(max(a.steps, 1)), 1e-4), maxOutlierShare)}
	st.Rate = prev.Rate
	if prev.Rate > 0 && a.w > 0 {
		st.Rate = a.wn / a.w
	}
	cw := 0.0
	for g := range a.gw {
		if a.gw[g] > 0 {
			st.Level[g] = math.Log(a.gl[g] / a.gw[g])
			cw += a.gw[g]
		}
	}
	if cw > 0 {
		ss := 0.0
		for k, l := range a.cl {
			e := l/math.Exp(st.Level[a.cg[k]]) - 1
			ss += a.cw[k] * e * e
		}
		st.Sigma = max(math.Sqrt(ss/cw), 1e-3)
	}
	if prev.Rate > 0 && a.s1w > 1 {
		mean := a.s1 / a.s1w
		v := max(a.s2/a.s1w-mean*mean, 1e-6)
		st.LogSD = math.Sqrt(v)
		st.Ms = math.Exp(mean + v/2)
	}
	return st
}

// median is v's upper median (v is not changed).
func median(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	return s[len(s)/2]
}

// stallParams reports the fit as three calibrated parameters.
func stallParams(f stallFit) []sim.CalibratedParam {
	var src string
	switch {
	case f.Steps < minStallSteps:
		src = fmt.Sprintf("too few decode steps (%d < %d): none", f.Steps, minStallSteps)
	case f.ok():
		src = fmt.Sprintf("token gaps of %d decode steps (Δ log-likelihood %.0f over none, BIC price %.0f)", f.Steps, f.DeltaLogLik, f.Threshold)
	case f.Best.Rate < 1e-3:
		src = fmt.Sprintf("token gaps of %d decode steps: none stands out of the clean spread (sd %.2g of the mean)", f.Steps, f.Best.Sigma)
	default:
		src = fmt.Sprintf("token gaps of %d decode steps: none (likeliest %.3g ms × %.3g a step, clean sd %.2g of the mean; Δ log-likelihood %.0f, BIC price %.0f)",
			f.Steps, f.Best.Ms, f.Best.Rate, f.Best.Sigma, f.DeltaLogLik, f.Threshold)
	}
	return []sim.CalibratedParam{
		{Name: "stall_ms", Value: f.Ms, SD: f.SDMs, Pinned: f.ok(), Source: src},
		{Name: "stall_cv", Value: f.CV, SD: f.SDCV, Pinned: f.ok(), Source: src},
		{Name: "stalls_per_step", Value: f.PerStep, SD: f.SDPerStep, Pinned: f.ok(), Source: src},
	}
}

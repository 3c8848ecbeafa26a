package calibrate

import (
	"errors"
	"math"

	"gonum.org/v1/gonum/mat"
)

// posterior is a Bayesian linear regression y ≈ X·β with independent
// Gaussian priors on β and Gaussian noise of variance σ²/wᵢ on row i (the
// weights W from the residuals' spread, see regressFree):
//
//	precision A = XᵀWX/σ² + diag(1/prior_sd²)
//	β           = A⁻¹·(XᵀWy/σ² + prior_mean/prior_sd²)
//	cov(β)      = A⁻¹·B·A⁻¹,  B = Σ xᵢxᵢᵀ·wᵢ²eᵢ²/σ⁴ + diag(1/prior_sd²)
//
// (the sandwich, which is A⁻¹ when the weighted residuals share one
// variance; see robustSD). σ² is re-estimated from the weighted residuals
// until it settles.
// Coefficients must be ≥ 0 (they are costs): one that comes out negative is
// fixed at 0 and the rest refitted. A coefficient the data pin has a posterior sd well
// below its prior sd; one the data cannot see keeps its prior.
type posterior struct {
	Beta, SD []float64
	Fixed    []bool  // held at 0 by the non-negativity constraint
	Sigma    float64 // residual sd (unweighted, in y's units)
	N        int
}

// regress fits y on the rows of x (all of length len(mean)). It solves in
// units of each prior's sd, so that coefficients of very different scales
// (an efficiency, a per-token cost) condition the system alike.
func regress(x [][]float64, y, mean, sd []float64) (*posterior, error) {
	p := len(mean)
	if len(x) == 0 {
		return nil, errors.New("no observations")
	}
	xs := make([][]float64, len(x))
	for i, row := range x {
		xs[i] = make([]float64, p)
		for j := range p {
			xs[i][j] = row[j] * sd[j]
		}
	}
	ms, ones := make([]float64, p), make([]float64, p)
	for j := range p {
		ms[j], ones[j] = mean[j]/sd[j], 1
	}
	post, err := regressScaled(xs, y, ms, ones)
	if err != nil {
		return nil, err
	}
	for j := range p {
		post.Beta[j] *= sd[j]
		post.SD[j] *= sd[j]
	}
	return post, nil
}

func regressScaled(x [][]float64, y, mean, sd []float64) (*posterior, error) {
	p := len(mean)
	fixed := make([]bool, p)
	for range p {
		post, err := regressFree(x, y, mean, sd, fixed)
		if err != nil {
			return nil, err
		}
		neg := -1
		for j, b := range post.Beta {
			if !fixed[j] && b < 0 && (neg < 0 || b/sd[j] < post.Beta[neg]/sd[neg]) {
				neg = j
			}
		}
		if neg < 0 {
			return post, nil
		}
		fixed[neg] = true
	}
	return regressFree(x, y, mean, sd, fixed)
}

// regressFree fits the coefficients not fixed at 0, by feasible weighted
// least squares. A step's noise grows with its length (a lognormal factor
// on every step) on top of a floor (host stalls, the clock), so one
// variance for all rows let the few long prompt steps, whose residuals are
// tens of milliseconds, decide the per-sequence and per-step costs that
// thousands of decode steps of a millisecond measure: fitted on its own
// plan, one CPU engine's fit put the ITL of its concurrency-1 runs 10–13 %
// above theirs (−3.5…+0.5 % weighted). So each row is weighted by the inverse of its variance, a + b·μ² in its
// fitted duration μ, with a and b taken from the squared residuals of the
// fit before (iteratively reweighted; the first fit is unweighted).
func regressFree(x [][]float64, y, mean, sd []float64, fixed []bool) (*posterior, error) {
	floor := noiseFloor(y)
	w := make([]float64, len(y))
	for i := range w {
		w[i] = 1
	}
	var post *posterior
	for round := range reweightings + 1 {
		next, err := regressWeighted(x, y, w, mean, sd, fixed, floor)
		if err != nil {
			return nil, err
		}
		settled := post != nil && closeBeta(post.Beta, next.Beta, sd)
		post = next
		if settled || round == reweightings {
			break
		}
		w = varianceWeights(x, y, post.Beta, floor)
	}
	post.Sigma = math.Sqrt(residualVariance(x, y, nil, post.Beta))
	return post, nil
}

// reweightings is how many times regressFree re-estimates the rows'
// variances at most; the fit settles in two or three.
const reweightings = 6

// regressWeighted is the posterior of the rows weighted by w (inverse
// relative variances, mean 1): σ² is re-estimated as Σ wᵢeᵢ²/n until it
// settles.
func regressWeighted(x [][]float64, y, w, mean, sd []float64, fixed []bool, floor float64) (*posterior, error) {
	p := len(mean)
	xtx := gram(x, func(i int) float64 { return w[i] }, fixed)
	xty := make([]float64, p)
	for i, row := range x {
		for a := range p {
			if !fixed[a] {
				xty[a] += w[i] * row[a] * y[i]
			}
		}
	}
	sigma2 := max(variance(y)/100, floor)
	var post *posterior
	for iter := 0; iter < 50; iter++ {
		beta, cov, err := solvePosterior(xtx, xty, mean, sd, fixed, sigma2)
		if err != nil {
			return nil, err
		}
		post = &posterior{Beta: beta, Fixed: append([]bool(nil), fixed...), N: len(y)}
		next := max(residualVariance(x, y, w, beta), floor)
		if math.Abs(next-sigma2) <= 1e-9*sigma2 || iter == 49 {
			post.SD = robustSD(x, y, w, beta, cov, sd, fixed, sigma2)
			break
		}
		sigma2 = next
	}
	return post, nil
}

// varianceWeights is the inverse of each row's variance a + b·μᵢ² (μᵢ its
// fitted value), scaled to mean 1: a and b ≥ 0 are the least-squares fit of the
// squared residuals on 1 and μ², a at least the noise floor.
func varianceWeights(x [][]float64, y, beta []float64, floor float64) []float64 {
	var s00, s01, s11, t0, t1 float64
	mu := make([]float64, len(y))
	for i, row := range x {
		mu[i] = max(dot(row, beta), 0)
		e2, m2 := sq(y[i]-mu[i]), sq(mu[i])
		s00++
		s01 += m2
		s11 += m2 * m2
		t0 += e2
		t1 += m2 * e2
	}
	a, b := t0/s00, 0.0 // one variance: all of it constant
	if det := s00*s11 - s01*s01; det > 0 {
		a, b = (s11*t0-s01*t1)/det, (s00*t1-s01*t0)/det
		switch {
		case b < 0:
			a, b = t0/s00, 0
		case a < 0:
			a, b = 0, t1/s11
		}
	}
	a = max(a, floor)
	w := make([]float64, len(y))
	sum := 0.0
	for i := range w {
		w[i] = 1 / (a + b*sq(mu[i]))
		sum += w[i]
	}
	for i := range w {
		w[i] *= float64(len(w)) / sum
	}
	return w
}

// closeBeta reports whether two fits agree to a thousandth of each
// coefficient's prior sd.
func closeBeta(a, b, sd []float64) bool {
	for j := range a {
		if math.Abs(a[j]-b[j]) > 1e-3*sd[j] {
			return false
		}
	}
	return true
}

func sq(v float64) float64 { return v * v }

// robustSD is each coefficient's sd from the sandwich A⁻¹·B·A⁻¹, with B
// the precision of the data as their weighted residuals show it
// (Σ xᵢxᵢᵀ·wᵢ²eᵢ²/σ⁴) plus the prior's. A step's noise grows with its
// length (a lognormal factor on every step, stalls): the one pooled σ of
// A⁻¹ alone, unweighted and set by the many short decode steps, made the
// long prompt steps' coefficients look several times surer than they were
// (fitted on noisy simulated plans, the compute and attention efficiencies
// came out 8 reported sds from their truth, rms, up to 13;
// TestReportedSDsCoverTheTruth). The weights now take most of that in; the
// sandwich keeps the sds honest where a + b·μ² misses the spread. With
// weighted residuals of one variance B = A and the sds are A⁻¹'s.
func robustSD(x [][]float64, y, w, beta []float64, ainv *mat.SymDense, sd []float64, fixed []bool, sigma2 float64) []float64 {
	p := len(beta)
	b := gram(x, func(i int) float64 {
		e := w[i] * (y[i] - dot(x[i], beta))
		return e * e / (sigma2 * sigma2)
	}, fixed)
	for j := range p {
		if !fixed[j] {
			b.SetSym(j, j, b.At(j, j)+1/(sd[j]*sd[j]))
		}
	}
	var ab, s mat.Dense
	ab.Mul(ainv, b)
	s.Mul(&ab, ainv)
	out := make([]float64, p)
	for j := range p {
		if !fixed[j] {
			out[j] = math.Sqrt(max(s.At(j, j), 0))
		}
	}
	return out
}

// gram is Σ w(i)·xᵢxᵢᵀ over the rows of x, the fixed coefficients' rows and
// columns left 0.
func gram(x [][]float64, w func(i int) float64, fixed []bool) *mat.SymDense {
	p := len(fixed)
	g := mat.NewSymDense(p, nil)
	for i, row := range x {
		wi := w(i)
		for a := range p {
			if fixed[a] {
				continue
			}
			for b := a; b < p; b++ {
				if !fixed[b] {
					g.SetSym(a, b, g.At(a, b)+wi*row[a]*row[b])
				}
			}
		}
	}
	return g
}

func solvePosterior(xtx *mat.SymDense, xty, mean, sd []float64, fixed []bool, sigma2 float64) ([]float64, *mat.SymDense, error) {
	p := len(mean)
	a := mat.NewSymDense(p, nil)
	b := mat.NewVecDense(p, nil)
	for i := range p {
		if fixed[i] {
			a.SetSym(i, i, 1) // β_i = 0 exactly
			continue
		}
		prec := 1 / (sd[i] * sd[i])
		a.SetSym(i, i, xtx.At(i, i)/sigma2+prec)
		for j := i + 1; j < p; j++ {
			if !fixed[j] {
				a.SetSym(i, j, xtx.At(i, j)/sigma2)
			}
		}
		b.SetVec(i, xty[i]/sigma2+mean[i]*prec)
	}
	var chol mat.Cholesky
	if !chol.Factorize(a) {
		return nil, nil, errors.New("regression: the posterior precision is not positive definite")
	}
	// A Condition error is gonum's warning that the result may be
	// inaccurate; the prior keeps the system solvable, so it is not fatal.
	var beta mat.VecDense
	if err := chol.SolveVecTo(&beta, b); err != nil && !isCondition(err) {
		return nil, nil, err
	}
	var cov mat.SymDense
	if err := chol.InverseTo(&cov); err != nil && !isCondition(err) {
		return nil, nil, err
	}
	out := make([]float64, p)
	for i := range p {
		if !fixed[i] {
			out[i] = beta.AtVec(i)
		}
	}
	return out, &cov, nil
}

// noiseFloor is the smallest noise variance assumed: a step is never
// known better than 0.1 % of the mean step (clock and rounding), which
// also keeps the posterior well conditioned on noise-free data.
func noiseFloor(y []float64) float64 {
	m := 0.0
	for _, v := range y {
		m += math.Abs(v)
	}
	f := 1e-3 * m / float64(len(y))
	return max(f*f, 1e-12)
}

// residualVariance is Σ wᵢeᵢ²/n, the residuals eᵢ of beta weighted by w;
// w nil weighs every row 1.
func residualVariance(x [][]float64, y, w, beta []float64) float64 {
	s := 0.0
	for i, row := range x {
		e2 := sq(y[i] - dot(row, beta))
		if w != nil {
			e2 *= w[i]
		}
		s += e2
	}
	return s / float64(len(y))
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func variance(y []float64) float64 {
	m := 0.0
	for _, v := range y {
		m += v
	}
	m /= float64(len(y))
	s := 0.0
	for _, v := range y {
		s += (v - m) * (v - m)
	}
	return s / float64(len(y))
}

func isCondition(err error) bool {
	var c mat.Condition
	return errors.As(err, &c)
}

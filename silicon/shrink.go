package silicon

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/simbench/simbench/sim"
)

// ShrinkChoice is what SelectShrink chose: every strength's
// leave-one-model-out score, the strength with the lowest, and that
// strength's folds.
type ShrinkChoice struct {
	Scores     []sim.ShrinkScore
	Strength   float64
	ModelFolds []sim.GPUFold
}

// SelectShrink chooses how strongly the fit shrinks towards centre (see
// Shrink): for each strength of grid, it fits the leave-one-model-out
// folds (FitModelFolds) and scores them by how well each predicts the
// model it held out, the root mean square of every held-out stage's
// residuals on FitTargets (the fit's own loss, on stages the fold never
// saw). The lowest score wins; of equal scores, the one earlier in grid.
// The choice is made on the same folds that then measure the
// leave-one-model-out error, so that error is slightly optimistic: it is
// the best of len(grid) tries.
func SelectShrink(ctx context.Context, stages []*Stage, base sim.Config, starts []sim.GPUPrior, opt FitOptions,
	centre sim.GPUPrior, grid []float64, progress func(string)) (ShrinkChoice, error) {
	if len(grid) == 0 {
		return ShrinkChoice{}, errors.New("shrink: no strength to try")
	}
	if len(Models(stages)) < 2 {
		return ShrinkChoice{}, errors.New("shrink: leave-one-model-out needs two models")
	}
	for _, strength := range grid {
		if !(strength >= 0) || math.IsInf(strength, 1) {
			return ShrinkChoice{}, fmt.Errorf("shrink: strength %g: want a finite number ≥ 0", strength)
		}
	}
	var out ShrinkChoice
	best := math.Inf(1)
	for _, strength := range grid {
		o := opt
		o.Shrink = Shrink{Strength: strength, Centre: centre}
		folds, err := FitModelFolds(ctx, stages, base, starts, o, progress)
		if err != nil {
			return ShrinkChoice{}, fmt.Errorf("shrink %g: %w", strength, err)
		}
		score, err := heldOutRMS(ctx, stages, base, folds, opt)
		if err != nil {
			return ShrinkChoice{}, fmt.Errorf("shrink %g: %w", strength, err)
		}
		progress(fmt.Sprintf("shrink %g: leave-one-model-out rms %.4f", strength, score))
		out.Scores = append(out.Scores, sim.ShrinkScore{Strength: strength, HeldOutRMS: score})
		if score < best {
			best, out.Strength, out.ModelFolds = score, strength, folds
		}
	}
	return out, nil
}

// heldOutRMS is the root mean square of every stage's residuals on
// FitTargets, each stage simulated with the prior of the model fold that
// held its model out (MaxRequests and Parallel from opt).
func heldOutRMS(ctx context.Context, stages []*Stage, base sim.Config, folds []sim.GPUFold, opt FitOptions) (float64, error) {
	var r []float64
	for _, f := range folds {
		held := slices.DeleteFunc(slices.Clone(stages), func(s *Stage) bool { return ModelOf(s) != f.HeldOut })
		ft := &fitter{ctx: ctx, stages: held, base: base, start: f.Prior,
			opt: FitOptions{MaxRequests: opt.MaxRequests, Parallel: opt.Parallel}}
		rs, err := ft.residuals([][]float64{toVector(f.Prior)})
		if err != nil {
			return 0, fmt.Errorf("without %s: %w", f.HeldOut, err)
		}
		r = append(r, rs[0]...)
	}
	if len(r) == 0 {
		return 0, errors.New("no held-out figure")
	}
	return math.Sqrt(sumSq(r) / float64(len(r))), nil
}

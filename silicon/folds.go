package silicon

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/simbench/simbench/sim"
)

// Deployments are the stages' deployments, in order.
func Deployments(stages []*Stage) []string {
	return keys(stages, func(s *Stage) string { return s.Deployment })
}

// Models are the stages' models (ModelOf), in order of first appearance.
func Models(stages []*Stage) []string { return keys(stages, ModelOf) }

// ModelOf is the model a stage serves: its Hugging Face name, else its
// preset's.
func ModelOf(s *Stage) string { return cmp.Or(s.Hardware.ModelName, s.Hardware.Model) }

// keys are the distinct keyOf(stage) of stages, in order of first
// appearance.
func keys(stages []*Stage, keyOf func(*Stage) string) []string {
	var out []string
	for _, s := range stages {
		if k := keyOf(s); !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// foldsBy fits one fold per key of stages (keyOf), each the best from
// starts (fitBest) on every stage of another key.
func foldsBy(ctx context.Context, stages []*Stage, base sim.Config, starts []sim.GPUPrior, opt FitOptions,
	progress func(string), keyOf func(*Stage) string) ([]sim.GPUFold, error) {
	var folds []sim.GPUFold
	for _, k := range keys(stages, keyOf) {
		rest := slices.DeleteFunc(slices.Clone(stages), func(s *Stage) bool { return keyOf(s) == k })
		r, err := fitBest(ctx, rest, base, starts, opt)
		if err != nil {
			return nil, fmt.Errorf("fold without %s: %w", k, err)
		}
		progress(fmt.Sprintf("without %s: rms %.4f, %s", k, r.RMSLog, describePrior(r.Prior)))
		folds = append(folds, sim.GPUFold{HeldOut: k, Prior: r.Prior})
	}
	return folds, nil
}

// FitModelFolds fits the prior once per model on every other model's
// stages (leave-one-model-out), each fold the best from starts (see
// FitFolds): the prediction of a model the fit never saw, which
// leave-one-deployment-out is not when another deployment of the same
// model stays in the fit. One model: no folds.
func FitModelFolds(ctx context.Context, stages []*Stage, base sim.Config, starts []sim.GPUPrior, opt FitOptions,
	progress func(string)) ([]sim.GPUFold, error) {
	if len(Models(stages)) < 2 {
		return nil, nil
	}
	return foldsBy(ctx, stages, base, starts, opt, progress, ModelOf)
}

// FitFolds fits the prior on every stage, then once per deployment on
// every other deployment (leave-one-deployment-out). Each fit is the best
// (lowest loss) of local searches from starts, fixed before any data: the
// search stops when a step gains little, so from one start it can stop in
// a basin another start's search leaves. A fold never starts from the
// whole fit: that fit saw the held-out deployment, a fold started there
// would mostly keep it, and its error would be the in-sample one under
// another name.
//
// The whole fit then starts again from the folds' median (each parameter's
// median over the folds) and keeps whichever fit matches the corpus
// better: the whole fit, in-sample by definition, may use what the folds
// found. No fold starts from anything but starts.
func FitFolds(ctx context.Context, stages []*Stage, base sim.Config, starts []sim.GPUPrior, opt FitOptions,
	progress func(string)) (FitResult, []sim.GPUFold, error) {
	all, err := fitBest(ctx, stages, base, starts, opt)
	if err != nil {
		return FitResult{}, nil, err
	}
	progress(fmt.Sprintf("all %d stages: rms %.4f, %s", len(stages), all.RMSLog, describePrior(all.Prior)))
	folds, err := foldsBy(ctx, stages, base, starts, opt, progress, func(s *Stage) string { return s.Deployment })
	if err != nil {
		return FitResult{}, nil, err
	}
	if len(folds) < 2 {
		return all, folds, nil
	}
	again, err := FitPrior(ctx, stages, base, medianPrior(folds, starts[0]), opt)
	if err != nil {
		return FitResult{}, nil, fmt.Errorf("all stages from the folds' median: %w", err)
	}
	progress(fmt.Sprintf("all %d stages from the folds' median: rms %.4f, %s", len(stages), again.RMSLog, describePrior(again.Prior)))
	if again.Loss < all.Loss {
		all = again
	}
	return all, folds, nil
}

// fitBest is the best (lowest loss) of FitPrior's fits of stages from each
// of starts.
func fitBest(ctx context.Context, stages []*Stage, base sim.Config, starts []sim.GPUPrior, opt FitOptions) (FitResult, error) {
	if len(starts) == 0 {
		return FitResult{}, errors.New("fit: no start")
	}
	var best FitResult
	for i, st := range starts {
		r, err := FitPrior(ctx, stages, base, st, opt)
		if err != nil {
			return FitResult{}, err
		}
		if i == 0 || r.Loss < best.Loss {
			best = r
		}
	}
	return best, nil
}

// medianPrior is each fitted parameter's median over the folds' priors
// (the median of an even count: the mean of the middle two), with base's
// combine mode and unfitted parameters.
func medianPrior(folds []sim.GPUFold, base sim.GPUPrior) sim.GPUPrior {
	vs := make([][]float64, len(folds))
	for j, f := range folds {
		vs[j] = toVector(f.Prior)
	}
	x := make([]float64, numParams)
	col := make([]float64, len(folds))
	for i := range x {
		for j, v := range vs {
			col[j] = v[i]
		}
		slices.Sort(col)
		n := len(col)
		x[i] = (col[(n-1)/2] + col[n/2]) / 2
	}
	return fromVector(x, base)
}

// FoldPrior is the prior of the fold that held key out (a deployment or
// a model, as the folds were fitted).
func FoldPrior(folds []sim.GPUFold, key string) (sim.GPUPrior, bool) {
	for _, f := range folds {
		if f.HeldOut == key {
			return f.Prior, true
		}
	}
	return sim.GPUPrior{}, false
}

// configWith is the stage's configuration over base with the prior
// prior(s) applied, or base's own timing when prior is nil.
func (s *Stage) configWith(base sim.Config, prior func(*Stage) sim.GPUPrior) (sim.Config, error) {
	cfg := base
	if prior != nil {
		sim.ApplyPrior(prior(s), &cfg)
	}
	return s.Config(cfg)
}

// Predict simulates every stage with the prior prior(stage) over base, or
// on base's own timing when prior is nil.
func Predict(ctx context.Context, stages []*Stage, base sim.Config, prior func(*Stage) sim.GPUPrior, maxRequests int) ([]Figures, error) {
	out := make([]Figures, len(stages))
	for i, s := range stages {
		cfg, err := s.configWith(base, prior)
		if err != nil {
			return nil, err
		}
		if out[i], err = s.Simulate(ctx, cfg, maxRequests); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// DrawSpread is how far a second draw of every stage's arrivals lands from
// the first on the same prior: each metric's median over the stages of
// |figure(draw b) − figure(draw a)| / figure(draw a), in %. A real stage's
// client draws its arrivals afresh on every run (inference-perf's timer is
// unseeded), so this is a floor under the spread of two real runs of a
// stage: theirs adds the server's own noise.
func DrawSpread(ctx context.Context, stages []*Stage, base sim.Config, prior func(*Stage) sim.GPUPrior, maxRequests int, a, b int64) ([]Median, error) {
	first := make([]*Stage, len(stages))
	second := Prediction{Figures: make([]Figures, len(stages))}
	for i, s := range stages {
		cfg, err := s.configWith(base, prior)
		if err != nil {
			return nil, err
		}
		ref := *s
		if ref.Actual, err = s.simulateDraw(ctx, cfg, maxRequests, a); err != nil {
			return nil, err
		}
		if second.Figures[i], err = s.simulateDraw(ctx, cfg, maxRequests, b); err != nil {
			return nil, err
		}
		first[i] = &ref
	}
	return MedianAbsErrors(first, second), nil
}

// WritePriorsGo writes the Go source of sim/timing's generated priors
// (gpupriors_gen.go): the whole fit, the leave-one-deployment-out folds,
// the leave-one-model-out ones and the shrinkage strength they were all
// fitted with (shrink.ModelFolds are the leave-one-model-out folds).
func WritePriorsGo(w io.Writer, all sim.GPUPrior, folds []sim.GPUFold, shrink ShrinkChoice, stages []*Stage) error {
	var b strings.Builder
	b.WriteString("// Code generated by `go test ./silicon -run TestWritePriors -write-priors`; DO NOT EDIT.\n\n")
	b.WriteString("package timing\n\n")
	fmt.Fprintf(&b, "// gpuPrior was fitted on the %d stages of %d deployments in testdata/silicon.\n", len(stages), len(Deployments(stages)))
	fmt.Fprintf(&b, "var gpuPrior = %s\n\n", priorLiteral(all))
	writeFolds(&b, "gpuPriorFolds", folds)
	b.WriteString("\n")
	writeFolds(&b, "gpuPriorModelFolds", shrink.ModelFolds)
	fmt.Fprintf(&b, "\nvar gpuPriorShrink = %s\n\nvar gpuPriorShrinkScores = []ShrinkScore{", fmtFloat(shrink.Strength))
	for i, sc := range shrink.Scores {
		if i == 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "\t{Strength: %s, HeldOutRMS: %s},\n", fmtFloat(sc.Strength), fmtFloat(round4(sc.HeldOutRMS)))
	}
	b.WriteString("}\n")
	c := corpusOf(stages)
	fmt.Fprintf(&b, "\n// gpuPriorCorpus is what the fit's stages ran on.\nvar gpuPriorCorpus = PriorCorpus{GPUs: %#v, Engines: %#v}\n", c.GPUs, c.Engines)
	_, err := io.WriteString(w, b.String())
	return err
}

// corpusOf is the GPUs (preset names) and engines stages ran on, sorted.
func corpusOf(stages []*Stage) sim.PriorCorpus {
	c := sim.PriorCorpus{
		GPUs:    keys(stages, func(s *Stage) string { return sim.CanonicalGPU(s.Hardware.GPU) }),
		Engines: keys(stages, func(s *Stage) string { return s.Engine.Type }),
	}
	slices.Sort(c.GPUs)
	slices.Sort(c.Engines)
	return c
}

// fmtFloat is v as a Go float literal.
func fmtFloat(v float64) string {
	s := strconv.FormatFloat(v, 'g', -1, 64)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}

// writeFolds writes folds as the Go variable name.
func writeFolds(b *strings.Builder, name string, folds []sim.GPUFold) {
	fmt.Fprintf(b, "var %s = []GPUFold{\n", name)
	for _, f := range folds {
		fmt.Fprintf(b, "\t{HeldOut: %q, Prior: %s},\n", f.HeldOut, priorLiteral(f.Prior))
	}
	b.WriteString("}\n")
}

func priorLiteral(p sim.GPUPrior) string {
	ph := p.Physics
	f := func(v float64) string { return strconv.FormatFloat(round4(v), 'g', -1, 64) }
	return fmt.Sprintf("GPUPrior{Physics: PhysicsConfig{ComputeEfficiency: %s, MemoryEfficiency: %s, KVEfficiency: %s, "+
		"PrefillEfficiency: %s, AttentionEfficiency: %s, "+
		"StepOverheadMs: %s, SeqOverheadMs: %s, PrefillOverheadMs: %s, Combine: %q}, RequestOverheadMs: %s}",
		f(ph.ComputeEfficiency), f(ph.MemoryEfficiency), f(ph.KVEfficiency), f(ph.PrefillEfficiency), f(ph.AttentionEfficiency),
		f(ph.StepOverheadMs), f(ph.SeqOverheadMs), f(ph.PrefillOverheadMs), ph.Combine, f(p.RequestOverheadMs))
}

// round4 keeps four significant digits: the fit is not known better.
func round4(v float64) float64 {
	if v == 0 {
		return 0
	}
	s := math.Pow(10, 3-math.Floor(math.Log10(math.Abs(v))))
	return math.Round(v*s) / s
}

// inSampleKey is the key of the prediction by the prior fitted on every
// corpus deployment: in-sample, not a prediction.
const inSampleKey = "in_sample"

// aPriori is the shipped prior that predicts stage s a priori: the fold
// that held its deployment out, or the default prior for a deployment the
// fit never saw.
func aPriori(s *Stage) sim.GPUPrior { return foldOrDefault(sim.GPUPriorFolds(), s.Deployment) }

// aPrioriModel is the shipped prior that predicts stage s without having
// seen its model: the fold that held the model out, or the default prior
// for a model the fit never saw.
func aPrioriModel(s *Stage) sim.GPUPrior { return foldOrDefault(sim.GPUPriorModelFolds(), ModelOf(s)) }

// foldOrDefault is the prior of the fold that held key out, else the
// default prior.
func foldOrDefault(folds []sim.GPUFold, key string) sim.GPUPrior {
	if p, ok := FoldPrior(folds, key); ok {
		return p
	}
	return sim.DefaultGPUPrior()
}

// Predictions are the fidelity table's rows for stages: the shipped
// priors, each stage predicted a priori (aPriori, and aPrioriModel: its
// model unseen), and by the prior fitted on the whole corpus.
func Predictions(ctx context.Context, stages []*Stage, maxRequests int) ([]Prediction, error) {
	all := sim.DefaultGPUPrior()
	rows := []struct {
		name, key string
		prior     func(*Stage) sim.GPUPrior
	}{
		{"default prior, leave-one-deployment-out", "a_priori", aPriori},
		{"default prior, leave-one-model-out", "a_priori_model", aPrioriModel},
		{"default prior (fitted on every corpus deployment)", inSampleKey, func(*Stage) sim.GPUPrior { return all }},
	}
	var out []Prediction
	for _, r := range rows {
		figs, err := Predict(ctx, stages, sim.DefaultConfig(), r.prior, maxRequests)
		if err != nil {
			return nil, err
		}
		out = append(out, Prediction{Name: r.name, Key: r.key, Figures: figs})
	}
	return out, nil
}

// paramValues are p's fitted parameters in ParamNames order, the
// efficiencies as fractions (kv_efficiency resolved: 0 takes
// memory_efficiency).
func paramValues(p sim.GPUPrior) [numParams]float64 {
	var out [numParams]float64
	for i, v := range toVector(p) {
		if i <= pCompute {
			v = math.Exp(v)
		}
		out[i] = v
	}
	return out
}

// atBound reports whether the fitted parameter i sits on a bound of the
// fit (an efficiency at 1 or at its floor, an overhead at 0): the data
// pushed it there and would have pushed it further, so they do not pin its
// value.
func atBound(i int, v float64) bool {
	if i <= pCompute {
		return round4(v) >= 1 || round4(v) <= minEff
	}
	return v <= 0
}

// WritePriorsMarkdown writes the trained priors as a table: each fitted
// parameter's value in the whole-corpus fit, its range over the
// leave-one-deployment-out folds, and how many of the fits left it on a
// bound of the fit, where the corpus does not pin it.
func WritePriorsMarkdown(b *bytes.Buffer, all sim.GPUPrior, folds []sim.GPUFold) {
	fmt.Fprintf(b, "| parameter | whole corpus | %d folds: min | max | fits on a bound |\n|---|---:|---:|---:|---:|\n", len(folds))
	whole := paramValues(all)
	var unpinned []string
	for i, name := range paramNames {
		lo, hi := math.Inf(1), math.Inf(-1)
		bound := 0
		if atBound(i, whole[i]) {
			bound++
		}
		for _, f := range folds {
			v := paramValues(f.Prior)[i]
			lo, hi = min(lo, v), max(hi, v)
			if atBound(i, v) {
				bound++
			}
		}
		if len(folds) == 0 {
			lo, hi = whole[i], whole[i]
		}
		fmt.Fprintf(b, "| `%s` | %s | %s | %s | %d of %d |\n", name, fmtParam(whole[i]), fmtParam(lo), fmtParam(hi), bound, len(folds)+1)
		if 2*bound > len(folds)+1 {
			unpinned = append(unpinned, "`"+name+"`")
		}
	}
	if len(unpinned) > 0 {
		fmt.Fprintf(b, "\nOn a bound in most fits, so not pinned by the corpus: %s.\n", strings.Join(unpinned, ", "))
	}
}

func fmtParam(v float64) string { return strconv.FormatFloat(round4(v), 'g', -1, 64) }

// WriteShrinkMarkdown writes the shrinkage strengths tried and their
// leave-one-model-out scores as a table, the chosen strength marked.
func WriteShrinkMarkdown(b *bytes.Buffer, strength float64, scores []sim.ShrinkScore) {
	if len(scores) == 0 {
		fmt.Fprintf(b, "Fitted by least squares alone (shrinkage strength %g; no strength was compared).\n", strength)
		return
	}
	b.WriteString("| strength | leave-one-model-out rms of the held-out log errors | chosen |\n|---:|---:|---|\n")
	for _, sc := range scores {
		mark := ""
		if sc.Strength == strength {
			mark = "yes"
		}
		fmt.Fprintf(b, "| %g | %.4f | %s |\n", sc.Strength, sc.HeldOutRMS, mark)
	}
}

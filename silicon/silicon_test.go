package silicon

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/sim"
	"github.com/simbench/simbench/sim/timing"
	"github.com/simbench/simbench/traces"
)

const corpus = "../testdata/silicon"

var writePriors = flag.Bool("write-priors", false, "fit the GPU priors on the corpus and write sim/timing/gpupriors_gen.go (then -write-fidelity writes docs/fidelity.md)")

func TestLoadCorpus(t *testing.T) {
	stages, err := Load(corpus)
	require.NoError(t, err)
	assert.Len(t, stages, 28)
	assert.Len(t, Deployments(stages), 17)
	// The mixture-of-experts stages (Llama-4-Scout, FP8 weights) have the
	// text model's shape of its config.json (testdata/models).
	scout, err := sim.ModelFromHFConfig("../testdata/models/llama-4-scout-17b-16e.json")
	require.NoError(t, err)
	moe, offload := 0, 0
	for _, s := range stages {
		cfg, err := s.Config(sim.DefaultConfig())
		require.NoError(t, err, s.ID)
		assert.Equal(t, "h100", cfg.Hardware.GPU)
		assert.Equal(t, s.Hardware.TP, cfg.Hardware.TensorParallel)
		// A run whose vLLM log shows the OffloadingConnector's CPU blocks
		// replays with that CPU tier; one without (0, or not published)
		// without.
		if b := s.Engine.CPUKVBlocks; b != nil && *b > 0 {
			offload++
			require.NotNil(t, cfg.Engine.KVOffload, s.ID)
			assert.Equal(t, *b, cfg.Engine.KVOffload.CPUBlocks, s.ID)
		} else {
			assert.Nil(t, cfg.Engine.KVOffload, s.ID)
		}
		if m := cfg.Hardware.CustomModel; m != nil && m.Experts > 0 {
			moe++
			assert.Equal(t, "fp8", m.WeightDType, s.ID)
			shape := *m
			shape.WeightDType = ""
			assert.Equal(t, scout, shape, s.ID)
		}
	}
	assert.Equal(t, 6, moe, "the Llama-4-Scout FP8 stages")
	assert.Equal(t, 19, offload, "the stages with a CPU tier")
}

func TestLoadStageErrorsNameFileAndField(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(corpus, "runs", "tv-64-qwen2-5-7b-instruct-tp1-roleplay-1-1-s0.json"))
	require.NoError(t, err)
	dir := t.TempDir()
	for name, body := range map[string][]byte{
		"unknown.json": bytes.Replace(src, []byte(`"tier"`), []byte(`"tierx"`), 1),
		"rate.json":    bytes.Replace(src, []byte(`"rate": 6.0`), []byte(`"rate": -1`), 1),
	} {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, body, 0o644))
		_, err := LoadStage(path)
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), path)
	}
	_, err = LoadStage(filepath.Join(dir, "rate.json"))
	assert.ErrorContains(t, err, "workload.rate")
	_, err = LoadStage(filepath.Join(dir, "unknown.json"))
	assert.ErrorContains(t, err, `"tierx"`)
}

func TestReplayCapKeepsWarmupAhead(t *testing.T) {
	stages, err := Load(filepath.Join(corpus, "runs", "tv-64-qwen2-5-7b-instruct-tp1-roleplay-1-1-s0.json"))
	require.NoError(t, err)
	s := stages[0]
	full, err := s.Replay(0)
	require.NoError(t, err)
	assert.Len(t, full.Requests, s.Workload.Requests)
	capped, err := s.Replay(100)
	require.NoError(t, err)
	warm := s.LeadIn(100)
	assert.Equal(t, s.Workload.UniquePrompts+int(s.Workload.Rate*warmupArrivalsS), warm)
	assert.Len(t, capped.Requests, warm+100)
	for _, r := range capped.Requests {
		require.False(t, r.Warmup, "the lead-in is the same stream, not AIPerf's warmup phase")
	}
	assert.Equal(t, full.Requests[0].HashIDs, capped.Requests[0].HashIDs, "the same prompts in the same order")
	assert.Equal(t, full.Requests[s.Workload.UniquePrompts].HashIDs[:len(full.Requests[0].HashIDs)-1],
		full.Requests[0].HashIDs[:len(full.Requests[0].HashIDs)-1], "a prompt repeats after one cycle: its full blocks shared")
}

// TestReplayArrivals: a stage's requests arrive as inference-perf's
// constant load timer sends them, a Poisson process whose count spans the
// stage's duration, not evenly spaced; another draw moves them.
func TestReplayArrivals(t *testing.T) {
	stages, err := Load(filepath.Join(corpus, "runs", "tv-64-qwen2-5-7b-instruct-tp1-roleplay-1-1-s0.json"))
	require.NoError(t, err)
	s := stages[0]
	wl, err := s.Replay(0)
	require.NoError(t, err)
	n := len(wl.Requests)
	span := float64(n) * 1000 / s.Workload.Rate
	last := wl.Requests[n-1].TimestampMs
	assert.Less(t, last, span)
	assert.Greater(t, last, 0.99*span)
	assert.InDelta(t, 1, traces.Describe(wl).GapCV, 0.05, "the gaps' coefficient of variation")
	other, err := s.replay(0, 1)
	require.NoError(t, err)
	assert.NotEqual(t, wl.Requests[1].TimestampMs, other.Requests[1].TimestampMs)
	assert.Equal(t, wl.Requests[1].HashIDs, other.Requests[1].HashIDs, "the same prompts")
}

// TestDrawSpread: one draw against itself spreads nothing; two draws of
// the arrivals move the percentiles of every stage.
func TestDrawSpread(t *testing.T) {
	all, err := Load(corpus)
	require.NoError(t, err)
	stages := all[:3]
	prior := func(*Stage) sim.GPUPrior { return sim.DefaultGPUPrior() }
	same, err := DrawSpread(context.Background(), stages, sim.DefaultConfig(), prior, 100, 0, 0)
	require.NoError(t, err)
	for _, m := range same {
		require.NotNil(t, m.Value, m.Metric)
		assert.Equal(t, 3, m.N, m.Metric)
		assert.Zero(t, *m.Value, m.Metric)
	}
	two, err := DrawSpread(context.Background(), stages, sim.DefaultConfig(), prior, 100, 0, 1)
	require.NoError(t, err)
	for _, m := range two {
		require.NotNil(t, m.Value, m.Metric)
		assert.Greater(t, *m.Value, 0.0, m.Metric)
		assert.Less(t, *m.Value, 50.0, m.Metric)
	}
}

// knownPriorStages are two deployments of different models whose
// "measured" figures are the simulator's own under truth.
func knownPriorStages(t *testing.T, truth sim.GPUPrior, maxReq int) []*Stage {
	return knownPriorStagesOf(t, truth, maxReq, "train-llama-2-7b-tp1-general", "tv-60-llama-3-1-70b-tp4-general-lite-4-1")
}

// knownPriorStagesOf are the stages of the deployments named, two each,
// with the simulator's own figures under truth as their "measured" ones.
func knownPriorStagesOf(t *testing.T, truth sim.GPUPrior, maxReq int, deployments ...string) []*Stage {
	t.Helper()
	all, err := Load(corpus)
	require.NoError(t, err)
	var stages []*Stage
	for _, s := range all {
		if slices.Contains(deployments, s.Deployment) {
			c := *s
			stages = append(stages, &c)
		}
	}
	require.Len(t, stages, 2*len(deployments))
	figs, err := Predict(context.Background(), stages, sim.DefaultConfig(), func(*Stage) sim.GPUPrior { return truth }, maxReq)
	require.NoError(t, err)
	for i := range stages {
		stages[i].Actual = figs[i]
	}
	return stages
}

// knownPrior is the prior knownPriorStages are measured under in the
// tests, and knownStart another start, from which a fit must find it.
var (
	knownPrior = sim.GPUPrior{Physics: sim.PhysicsConfig{ComputeEfficiency: 0.6, MemoryEfficiency: 0.8, KVEfficiency: 0.8,
		StepOverheadMs: 1.5, SeqOverheadMs: 0.01, Combine: "sum"}, RequestOverheadMs: 12}
	knownStart = func() sim.GPUPrior {
		p := knownPrior
		p.Physics.MemoryEfficiency, p.Physics.StepOverheadMs, p.RequestOverheadMs = 0.6, 0.5, 4
		return p
	}()
)

// TestFitRecoversKnownPrior: stages whose "measured" figures are the
// simulator's own under a known prior; a fit from another start finds
// that prior's parameters again, and its loss is the data's alone.
func TestFitRecoversKnownPrior(t *testing.T) {
	const maxReq = 60
	// Three models' bytes apart, so that the means alone (FitTargets) tell
	// the weights' efficiency from the step's overhead.
	stages := knownPriorStagesOf(t, knownPrior, maxReq, "train-llama-2-7b-tp1-general", "tv-60-llama-3-1-70b-tp4-general-lite-4-1",
		"tv-62-mistral-nemo-12b-tp2-general-lite-2-1")
	res, err := FitPrior(context.Background(), stages, sim.DefaultConfig(), knownStart,
		FitOptions{MaxRequests: maxReq, Fixed: []int{pKV, pCompute, pSeq, pPrefill}})
	require.NoError(t, err)
	got := res.Prior
	assert.InEpsilon(t, 0.8, got.Physics.MemoryEfficiency, 0.05, describePrior(got))
	assert.InDelta(t, 1.5, got.Physics.StepOverheadMs, 0.3, describePrior(got))
	assert.InDelta(t, 12, got.RequestOverheadMs, 1.5, describePrior(got))
	assert.Less(t, res.RMSLog, 0.02, describePrior(got))
	assert.InDelta(t, res.RMSLog*res.RMSLog*float64(len(stages)*len(FitTargets)), res.Loss, 1e-9, "no penalty: the data's sum of squares")
}

// TestWritePriors regenerates sim/timing/gpupriors_gen.go (with
// -write-priors): the fit on the whole corpus and one fold per deployment.
// It does not write docs/fidelity.md: this binary was built with the old
// priors, which every default configuration it builds still carries (the
// poly row's frontend overhead, for one), so the report of the new ones
// comes from a fresh build, `-write-fidelity`.
func TestWritePriors(t *testing.T) {
	if !*writePriors {
		t.Skip("run with -write-priors to refit the GPU priors")
	}
	ctx := context.Background()
	stages, err := Load(corpus)
	require.NoError(t, err)
	base := sim.DefaultConfig()
	start := sim.GPUPrior{Physics: sim.PhysicsConfig{ComputeEfficiency: 0.78, MemoryEfficiency: 0.78, KVEfficiency: 0.95,
		StepOverheadMs: 1.3, SeqOverheadMs: 0.02, PrefillOverheadMs: 0.2}, RequestOverheadMs: 19}
	// A second start, the hand-set prior the fit replaced: fixed before any
	// data, as start is. Both carry the GPU priors' combine mode and kernel
	// efficiencies, which every fit keeps.
	starts := []sim.GPUPrior{start.WithGPUStructure(), sim.HandSetPrior().WithGPUStructure()}
	opt := FitOptions{MaxRequests: 300, MaxIter: 6}
	// The shrinkage's strength, chosen by leave-one-model-out from a grid
	// fixed before any data (0: least squares), towards the hand-set prior.
	centre := sim.HandSetPrior()
	choice, err := SelectShrink(ctx, stages, base, starts, opt, centre, []float64{0, 0.1, 0.3, 1}, func(s string) { t.Log(s) })
	require.NoError(t, err)
	opt.Shrink = Shrink{Strength: choice.Strength, Centre: centre}
	all, folds, err := FitFolds(ctx, stages, base, starts, opt, func(s string) { t.Log(s) })
	require.NoError(t, err)
	var src bytes.Buffer
	require.NoError(t, WritePriorsGo(&src, all.Prior, folds, choice, stages))
	require.NoError(t, os.WriteFile("../sim/timing/gpupriors_gen.go", src.Bytes(), 0o644))
}

var writeFidelity = flag.Bool("write-fidelity", false, "regenerate docs/fidelity.md from the shipped priors (sim/timing/gpupriors_gen.go)")

// TestWriteFidelity regenerates docs/fidelity.md (with -write-fidelity)
// from the shipped priors and folds: after -write-priors refits them, or
// after a change that leaves the fit alone (calibration, reports).
func TestWriteFidelity(t *testing.T) {
	if !*writeFidelity {
		t.Skip("run with -write-fidelity to regenerate docs/fidelity.md")
	}
	stages, err := Load(corpus)
	require.NoError(t, err)
	writeFidelityDoc(t, stages)
}

// writeFidelityDoc writes docs/fidelity.md: every stage predicted by the
// old defaults, by the shipped fold that held its deployment out, by the
// shipped whole-corpus fit and calibrated on its deployment's lightest
// stage, and the shipped priors.
func writeFidelityDoc(t *testing.T, stages []*Stage) {
	all, folds := sim.DefaultGPUPrior(), sim.GPUPriorFolds()
	shrinkStrength, shrinkScores := sim.GPUPriorShrink()
	ctx := context.Background()
	base := sim.DefaultConfig()
	poly := sim.DefaultConfig()
	poly.Timing.Model = "poly"
	oldPhysics := sim.HandSetPrior()
	var preds []Prediction
	loo := func(s *Stage) sim.GPUPrior { p, _ := FoldPrior(folds, s.Deployment); return p }
	modelFolds := sim.GPUPriorModelFolds()
	lomo := func(s *Stage) sim.GPUPrior { p, _ := FoldPrior(modelFolds, ModelOf(s)); return p }
	for _, p := range []struct {
		name, key string
		base      sim.Config
		prior     func(*Stage) sim.GPUPrior
	}{
		{"poly (hardware-blind)", "poly", poly, nil},
		{"physics, hand-set priors", "hand_set", base, func(*Stage) sim.GPUPrior { return oldPhysics }},
		{"physics, trained priors, leave-one-deployment-out", "a_priori", base, loo},
		{"physics, trained priors, leave-one-model-out", "a_priori_model", base, lomo},
		{"physics, trained priors, in-sample", inSampleKey, base, func(*Stage) sim.GPUPrior { return all }},
	} {
		figs, err := Predict(ctx, stages, p.base, p.prior, 0)
		require.NoError(t, err)
		preds = append(preds, Prediction{Name: p.name, Key: p.key, Figures: figs})
	}
	cal, cals, err := Calibrated(ctx, stages, base, loo, Options{})
	require.NoError(t, err)
	var doc bytes.Buffer
	doc.WriteString("# Fidelity on public GPU runs\n\nGenerated by `go test ./silicon -run TestWriteFidelity -write-fidelity` from the priors `-write-priors` fits; do not edit.\n\n")
	doc.WriteString("Corpus: `testdata/silicon` (vLLM v0.15.1 on H100, measured by others; provenance in each file). ")
	fmt.Fprintf(&doc, "Every stage is replayed whole, a deployment's later stage from an idle server holding its prompts in the prefix cache (inference-perf lets each stage finish before the next begins); the priors were fitted to the stages' TTFT and ITL means (their percentiles are predictions, even in-sample) on replays of 300 measured requests per stage, each led in by a cold cycle of the stage's prompts and %d s of its arrivals (a later stage too, which its real run did not start with: see `Stage.Replay`), by least squares on the Huber loss (δ = %g) of the log errors (so that a stage no prior fits, one that saturates in simulation, does not outweigh the rest) plus the shrinkage towards the hand-set prior of strength %g that the end chooses (0: none). ", warmupArrivalsS, huberDelta, shrinkStrength)
	doc.WriteString("The leave-one-deployment-out row predicts each deployment with the prior fitted on every other deployment: ")
	doc.WriteString("it is the a-priori error for a deployment of a model the fit has seen in another deployment. ")
	doc.WriteString("The leave-one-model-out row predicts every deployment of a model with the prior fitted on every other model's: ")
	doc.WriteString("the a-priori error for a model the fit never saw. The in-sample row is not a prediction. The calibrated row is `simbench calibrate --real`'s fit ")
	doc.WriteString("on each deployment's lightest stage (its priors centred on the leave-one-deployment-out prior), predicting the deployment's heavier stages. ")
	doc.WriteString("`simbench fidelity testdata/silicon` prints the same tables for the shipped priors. ")
	doc.WriteString("No stage of the corpus was measured twice, so no real-vs-real spread stands beside these errors: ")
	doc.WriteString("how far a second run of the same stage would land from the first is unknown, and an error within a few percent may be within it. ")
	writeDrawSpread(t, &doc, stages, all)
	writeSpreadless(&doc, stages, cal)
	require.NoError(t, NewReport(stages, append(preds, cal), cals, 0).WriteMarkdown(&doc))
	doc.WriteString("\n## The trained priors\n\nThe whole-corpus fit is a GPU config's default timing (`sim/timing/gpupriors_gen.go`); each fold is the fit without one deployment, ")
	doc.WriteString("the prior that predicts that deployment above. Every fit is the best (lowest loss) of searches from two starts fixed before any data ")
	doc.WriteString("(the fit's start and the hand-set prior); the whole-corpus fit also searches from the folds' median. A parameter on a bound of the fit (an efficiency at 1, an overhead at 0) was pushed there by the data, ")
	doc.WriteString("which would have pushed it further: the corpus does not pin its value. The corpus's prompts are short and mostly prefix-cached, ")
	doc.WriteString("so what a long prompt's products and attention reach is not fitted: every start sets the GPU priors' structure (`timing.GPUPrior.WithGPUStructure`), ")
	fmt.Fprintf(&doc, "`timing.physics.combine: %s` (the prompts' products overlap the weights' reads) with `prefill_efficiency` %g and `attention_efficiency` %g, ",
		timing.GPUPriorCombine, timing.GPUPrefillEfficiency, timing.GPUAttentionEfficiency)
	doc.WriteString("the kernels' published throughput on an H100 (see `sim/timing/priors.go`), and every fit keeps them. ")
	doc.WriteString("`simbench calibrate` fits a deployment's own from a run of it with long prompts.\n\n")
	WritePriorsMarkdown(&doc, all, folds)
	doc.WriteString("\n### Shrinkage towards the hand-set prior\n\nA fit can minimise the data's loss plus a penalty, strength × Σ ((x − centre)/scale)², ")
	doc.WriteString("over the parameters the hand-set prior sets from physics (the weight and KV memory efficiencies by their logarithms, scale 0.3; the per-step overhead, scale 1 ms; per sequence, 0.02 ms), ")
	doc.WriteString("centred on the hand-set prior: a posterior mode rather than a least-squares fit (strength 0). The compute efficiency is not shrunk: every fit puts it on its upper bound, and a first try that shrank it (and the two overheads below) scored 0.1721 at best and saturated the corpus's one near-saturated stage in the folds without it; ")
	doc.WriteString("nor are the prefill and request overheads (the hand-set prior has neither). What it guards against: a fold without the small models can slide along ")
	doc.WriteString("the combination of weight-memory efficiency and per-step overhead that its stages pin, to values that do not carry to the models it held out; whether the pull is worth its bias is the grid's question. ")
	doc.WriteString("The strength is the one of a grid fixed before any data whose leave-one-model-out folds predicted their held-out models best ")
	doc.WriteString("(the root mean square of the held-out stages' log errors on the fit's targets, replays of 300 requests). ")
	doc.WriteString("The leave-one-model-out row above is measured on the folds that chose it, so it is the best of the grid's tries: slightly optimistic. ")
	if shrinkStrength == 0 {
		doc.WriteString("The grid chose 0: every fit above is least squares, without the penalty.\n\n")
	} else {
		fmt.Fprintf(&doc, "The grid chose %g: every fit above is a posterior mode.\n\n", shrinkStrength)
	}
	WriteShrinkMarkdown(&doc, shrinkStrength, shrinkScores)
	require.NoError(t, os.WriteFile("../docs/fidelity.md", doc.Bytes(), 0o644))
}

// writeDrawSpread writes how far a second draw of the stages' arrivals
// lands from the first under the in-sample prior: part of the spread two
// real runs of a stage would show.
func writeDrawSpread(t *testing.T, doc *bytes.Buffer, stages []*Stage, prior sim.GPUPrior) {
	t.Helper()
	med, err := DrawSpread(context.Background(), stages, sim.DefaultConfig(), func(*Stage) sim.GPUPrior { return prior }, 0, 0, 1)
	require.NoError(t, err)
	doc.WriteString("Part of that spread is the client's: inference-perf draws a stage's arrival times afresh, unseeded, on every run. Two draws of every stage's arrivals, replayed whole under the in-sample prior, land a median of ")
	for i, m := range med {
		sep := ", "
		switch i {
		case 0:
			sep = ""
		case len(med) - 1:
			sep = " and "
		}
		fmt.Fprintf(doc, "%s%.1f %% apart on %s", sep, *m.Value, ReportMetrics[i].Name)
	}
	doc.WriteString(" (|draw 1 − draw 0| / draw 0): a floor under the real-vs-real spread, to which the server's own noise adds. ")
}

// writeSpreadless writes what the percentiles' errors are read against:
// the median absolute errors of Spreadless, the reference exact on every
// mean with no spread, on every stage and on the stages cal predicts (the
// load sweeps' heavier ones).
func writeSpreadless(doc *bytes.Buffer, stages []*Stage, cal Prediction) {
	medians := func(stages []*Stage) map[string]float64 {
		med := map[string]float64{}
		for _, m := range MedianAbsErrors(stages, Spreadless(stages)) {
			if m.Value != nil {
				med[m.Metric] = *m.Value
			}
		}
		return med
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	var heavier []*Stage
	for i, s := range stages {
		if a := s.Actual; a.E2EMean != nil && a.E2EP99 != nil {
			r := 100 * (*a.E2EP99 / *a.E2EMean - 1)
			lo, hi = min(lo, r), max(hi, r)
		}
		if cal.Figures[i].E2EMean != nil {
			heavier = append(heavier, s)
		}
	}
	all, heavy := medians(stages), medians(heavier)
	doc.WriteString("What the percentiles ask: the corpus's prompt and output lengths are fixed, so a stage's latencies spread around their means through its arrivals: inference-perf's constant load type sends a Poisson process with its count fixed (exponential gaps rescaled to the stage's duration), not evenly spaced requests, and the replays draw theirs the same way, from the simulator's seed. ")
	fmt.Fprintf(doc, "A stage's measured E2E p99 is %.0f–%.0f %% above its mean. ", lo, hi)
	fmt.Fprintf(doc, "A reference exact on every stage's means but without spread, every request alike, scores a median absolute error of %.1f %% on TTFT p90, %.1f %% on TTFT p99, %.1f %% on E2E p90 and %.1f %% on E2E p99 over the %d stages, ",
		all["ttft_p90"], all["ttft_p99"], all["e2e_p90"], all["e2e_p99"], len(stages))
	fmt.Fprintf(doc, "and %.1f %% on E2E p90 and %.1f %% on E2E p99 over the %d heavier stages of the load sweeps (a reference, not a prediction).\n\n",
		heavy["e2e_p90"], heavy["e2e_p99"], len(heavier))
}

const heldout = "../testdata/heldout/gb200-qwen3-32b-sglang-kv"

// TestHeldOutCase: the GB200 case loads strictly, its filters leave the
// run's request count, and a short replay of it gives ITL percentiles in
// order (the whole replay is docs/heldout.md's, with -write-heldout).
func TestHeldOutCase(t *testing.T) {
	c, err := LoadCase(heldout)
	require.NoError(t, err)
	cfg, err := c.Config()
	require.NoError(t, err)
	assert.Equal(t, "sglang", cfg.Engine.Type)
	assert.Equal(t, 4, cfg.Workers)
	wl, err := c.Replay(0)
	require.NoError(t, err)
	assert.Len(t, wl.Requests, c.Trace.Requests)
	got, err := c.Simulate(context.Background(), cfg, 300)
	require.NoError(t, err)
	require.NotNil(t, got.P50)
	assert.Less(t, *got.P50, *got.P90)
	assert.Less(t, *got.P90, *got.P99)
	var b bytes.Buffer
	WriteCaseMarkdown(&b, c, got)
	assert.Contains(t, b.String(), "| p99 | 237.0 |")
}

func TestLoadCaseErrorsNameFileAndField(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "case.json"), []byte(`{"id": "x", "trace": {"file": "t.jsonl", "block_size": 512, "requests": 3}, "actual": {"itl_p50": 1, "itl_p90": -2, "itl_p99": 3}}`), 0o644))
	_, err := LoadCase(dir)
	require.ErrorContains(t, err, "case.json: actual.itl_p90: missing or out of range")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "case.json"), []byte(`{"id": "x", "bogus": 1}`), 0o644))
	_, err = LoadCase(dir)
	require.ErrorContains(t, err, `unknown field "bogus"`)
}

var writeHeldOut = flag.Bool("write-heldout", false, "replay the held-out public runs whole and write docs/heldout.md")

// TestWriteHeldOut regenerates docs/heldout.md (with -write-heldout): the
// default configuration's prediction of each held-out run, beside what
// was measured and what other simulators predicted.
func TestWriteHeldOut(t *testing.T) {
	if !*writeHeldOut {
		t.Skip("run with -write-heldout to replay the held-out runs and write docs/heldout.md")
	}
	var doc bytes.Buffer
	doc.WriteString("# Held-out public runs\n\nGenerated by `go test ./silicon -run TestWriteHeldOut -write-heldout`; do not edit.\n\n" +
		"Public runs replayed from their own traces with the default configuration and only the hardware, " +
		"engine and topology their sources name (`testdata/heldout`, provenance and assumptions in each " +
		"`case.json`). Nothing here is fitted: these are predictions. Errors are signed, (sim − real)/real.\n\n")
	c, err := LoadCase(heldout)
	require.NoError(t, err)
	cfg, err := c.Config()
	require.NoError(t, err)
	got, err := c.Simulate(context.Background(), cfg, 0)
	require.NoError(t, err)
	WriteCaseMarkdown(&doc, c, got)
	require.NoError(t, os.WriteFile("../docs/heldout.md", doc.Bytes(), 0o644))
}

// TestLaterStageStartsWarm: a deployment's stages ran one after another
// on one server, each drained before the next began, so a later stage's
// whole replay sends one cycle of its prompts first as a warmup phase (the
// prefix cache the stage before left, on an idle server); the first stage
// starts cold and its whole replay measures every request. A capped
// replay has no warmup phase: its lead-in is the stage's own stream.
func TestLaterStageStartsWarm(t *testing.T) {
	for _, tc := range []struct {
		file string
		warm bool
	}{
		{"tv-60-llama-3-1-70b-tp4-general-lite-4-1-s0.json", false},
		{"tv-60-llama-3-1-70b-tp4-general-lite-4-1-s1.json", true},
	} {
		stages, err := Load(filepath.Join(corpus, "runs", tc.file))
		require.NoError(t, err)
		s := stages[0]
		want := 0
		if tc.warm {
			want = s.Workload.UniquePrompts
		}
		for _, capped := range []int{0, 100} {
			wl, err := s.Replay(capped)
			require.NoError(t, err)
			warmup := 0
			for i, r := range wl.Requests {
				if r.Warmup {
					require.Less(t, i, want, "%s: the warmup phase comes first", tc.file)
					warmup++
				}
			}
			if capped == 0 {
				assert.Equal(t, want, warmup, tc.file)
				assert.Equal(t, want, s.LeadIn(0), tc.file)
				assert.Len(t, wl.Requests, s.Workload.Requests+want, tc.file)
			} else {
				assert.Zero(t, warmup, "%s capped: the lead-in is the stream", tc.file)
				assert.Len(t, wl.Requests, s.LeadIn(capped)+capped, tc.file)
			}
		}
	}
}

// TestCappedReplayMeetsTheSteadyState: a capped replay's measured requests
// meet the in-flight count of the whole replay's steady state: its lead-in
// is the same constant-rate stream, not AIPerf's warmup phase, which they
// would wait out and then start on an idle server. On a stage at 20 req/s
// (a mean E2E of about 6 s) their mean ITL is the whole replay's within
// 7 %; after a warmup phase it was 13 % short.
func TestCappedReplayMeetsTheSteadyState(t *testing.T) {
	stages, err := Load(filepath.Join(corpus, "runs", "train-codellama-34b-tp2-general-s1.json"))
	require.NoError(t, err)
	s := stages[0]
	base := sim.DefaultConfig()
	sim.ApplyPrior(sim.GPUPrior{Physics: sim.PhysicsConfig{ComputeEfficiency: 0.756, MemoryEfficiency: 0.799, KVEfficiency: 0.855,
		StepOverheadMs: 1.023, PrefillOverheadMs: 2.736, Combine: "sum"}, RequestOverheadMs: 6.08}, &base)
	cfg, err := s.Config(base)
	require.NoError(t, err)
	full, err := s.Simulate(context.Background(), cfg, 0)
	require.NoError(t, err)
	capped, err := s.Simulate(context.Background(), cfg, 200)
	require.NoError(t, err)
	assert.InEpsilon(t, *full.ITLMean, *capped.ITLMean, 0.07)
}

// TestFoldIgnoresItsHeldOutDeployment: a leave-one-deployment-out fold is
// the same whatever its held-out deployment measured, so its prediction of
// that deployment is a prediction (a fold started from the whole fit
// would carry the held-out figures in through its start); so is a
// leave-one-model-out fold of its held-out model's.
func TestFoldIgnoresItsHeldOutDeployment(t *testing.T) {
	all, err := Load(corpus)
	require.NoError(t, err)
	const held = "train-llama-2-7b-tp1-general"
	pick := func(scale float64) []*Stage {
		var out []*Stage
		for _, s := range all {
			if s.Deployment != held && s.Deployment != "tv-60-llama-3-1-70b-tp4-general-lite-4-1" {
				continue
			}
			c := *s
			if s.Deployment == held {
				c.Actual = scaledFigures(s.Actual, scale)
			}
			out = append(out, &c)
		}
		return out
	}
	opt := FitOptions{MaxRequests: 40, MaxIter: 2, Fixed: []int{pMemory, pKV, pCompute, pSeq, pPrefill, pRequest}}
	fold := func(scale float64) (sim.GPUPrior, sim.GPUPrior) {
		whole, folds, err := FitFolds(context.Background(), pick(scale), sim.DefaultConfig(), []sim.GPUPrior{sim.DefaultGPUPrior()}, opt, func(string) {})
		require.NoError(t, err)
		p, ok := FoldPrior(folds, held)
		require.True(t, ok)
		return whole.Prior, p
	}
	whole1, fold1 := fold(1)
	whole2, fold2 := fold(2)
	require.NotEqual(t, whole1, whole2, "the whole fit sees the held-out deployment's figures")
	assert.Equal(t, fold1, fold2, "the fold that held it out does not")

	modelFold := func(scale float64) sim.GPUPrior {
		stages := pick(scale)
		assert.Equal(t, []string{"meta-llama/Llama-2-7b-hf", "meta-llama/Llama-3.1-70B-Instruct"}, Models(stages))
		folds, err := FitModelFolds(context.Background(), stages, sim.DefaultConfig(), []sim.GPUPrior{sim.DefaultGPUPrior()}, opt, func(string) {})
		require.NoError(t, err)
		require.Len(t, folds, 2)
		p, ok := FoldPrior(folds, "meta-llama/Llama-2-7b-hf")
		require.True(t, ok)
		return p
	}
	assert.Equal(t, modelFold(1), modelFold(2), "the fold that held the model out does not see its figures")
}

// scaledFigures are f with every latency multiplied by k.
func scaledFigures(f Figures, k float64) Figures {
	scale := func(v *float64) *float64 {
		if v == nil {
			return nil
		}
		x := *v * k
		return &x
	}
	out := f
	for _, p := range []**float64{&out.TTFTMean, &out.TTFTP50, &out.TTFTP90, &out.TTFTP99, &out.E2EMean, &out.E2EP50,
		&out.E2EP90, &out.E2EP99, &out.ITLMean} {
		*p = scale(*p)
	}
	return out
}

// TestWritePriorsGoWritesTheShippedFile: WritePriorsGo, given the shipped
// prior and folds, writes sim/timing/gpupriors_gen.go byte for byte (its
// package clause and path included), so -write-priors regenerates the
// file the simulator compiles.
func TestWritePriorsGoWritesTheShippedFile(t *testing.T) {
	stages, err := Load(corpus)
	require.NoError(t, err)
	var src bytes.Buffer
	strength, scores := sim.GPUPriorShrink()
	shrink := ShrinkChoice{Scores: scores, Strength: strength, ModelFolds: sim.GPUPriorModelFolds()}
	require.NoError(t, WritePriorsGo(&src, sim.DefaultGPUPrior(), sim.GPUPriorFolds(), shrink, stages))
	shipped, err := os.ReadFile("../sim/timing/gpupriors_gen.go")
	require.NoError(t, err)
	assert.Equal(t, string(shipped), src.String())
}

// TestMedianPrior: each fitted parameter's median over the folds (the
// middle two's mean for an even count; efficiencies by their logarithms),
// the unfitted ones and the combine mode from the base.
func TestMedianPrior(t *testing.T) {
	fold := func(mem, step, req float64) sim.GPUFold {
		return sim.GPUFold{Prior: sim.GPUPrior{Physics: sim.PhysicsConfig{ComputeEfficiency: 1, MemoryEfficiency: mem, KVEfficiency: mem,
			StepOverheadMs: step, Combine: "sum"}, RequestOverheadMs: req}}
	}
	base := sim.GPUPrior{Physics: sim.PhysicsConfig{AttentionEfficiency: 0.5, Combine: "max"}}
	got := medianPrior([]sim.GPUFold{fold(0.5, 3, 7), fold(0.8, 1, 9), fold(0.7, 2, 8)}, base)
	assert.InDelta(t, 0.7, got.Physics.MemoryEfficiency, 1e-12)
	assert.InDelta(t, 2, got.Physics.StepOverheadMs, 1e-12)
	assert.InDelta(t, 8, got.RequestOverheadMs, 1e-12)
	assert.Equal(t, 0.5, got.Physics.AttentionEfficiency)
	assert.Equal(t, "max", got.Physics.Combine)
	even := medianPrior([]sim.GPUFold{fold(0.5, 4, 7), fold(0.8, 2, 9)}, base)
	assert.InDelta(t, math.Sqrt(0.5*0.8), even.Physics.MemoryEfficiency, 1e-12, "efficiencies: the geometric mean of the middle two")
	assert.InDelta(t, 3, even.Physics.StepOverheadMs, 1e-12)
}

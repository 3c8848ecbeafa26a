package calibrate

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/sim"
	"github.com/simbench/simbench/traces"
)

// mixShape is one kind of step in an aggregate's mix and its share of the
// steps.
type mixShape struct {
	share float64
	shape sim.StepShape
}

// aggregateStep is a run's mean step, for runs whose records have no token
// timing (or none at all: an aggregate-only export): its mean ITL, the
// mean of the steps its tokens came from. Those steps decode the batch a
// token saw (decodeBatch), at the mean context; an open loop's also
// compute the prompts that arrive meanwhile (promptMix). The step's
// features are its mix's mean features; Shape is the mix's likeliest
// decode-only shape, for the range and the stall groups.
func aggregateStep(t Target, opts StepsOptions) (Step, bool) {
	itl, ok := t.Profile.Value(results.TagITL, "avg")
	if !ok || itl <= 0 {
		return Step{}, false
	}
	isl := valueOr(t.Profile, results.TagISL, meanISL(t.Workload))
	osl := valueOr(t.Profile, results.TagOSL, 1)
	ctx := isl + osl/2
	batch := decodeBatch(t)
	var mix []mixShape
	lo := math.Floor(batch)
	for _, b := range []struct{ seqs, share float64 }{{lo, 1 - (batch - lo)}, {lo + 1, batch - lo}} {
		if b.share <= 0 {
			continue
		}
		decode := sim.StepShape{DecodeSeqs: int64(b.seqs), DecodeContext: int64(math.Round(b.seqs * ctx)), MaxContext: int64(ctx)}
		for _, m := range promptMix(t, opts, itl, isl, decode) {
			m.share *= b.share
			mix = append(mix, m)
		}
	}
	seqs := int64(math.Round(batch))
	return Step{Ms: itl, Gaps: 1, mix: mix, Shape: sim.StepShape{DecodeSeqs: seqs,
		DecodeContext: int64(math.Round(float64(seqs) * ctx)), MaxContext: int64(ctx)}}, true
}

// promptMix is decode's share of an open loop's steps with and without a
// prompt: prompts arrive at the measured request throughput λ and each
// computes its uncached tokens over ceil(tokens/chunk) steps, so an
// ITL-long step holds prompt work with probability 1 − exp(−λ·ITL·chunks)
// (Poisson arrivals), and λ·ITL prompts' tokens on average. A closed loop's
// prompts come only as requests finish, one per OSL tokens of a slot: the
// decode steps' mean already holds them, as at the same load it will.
func promptMix(t Target, opts StepsOptions, itlMs, isl float64, decode sim.StepShape) []mixShape {
	thr, ok := t.Profile.Value(results.TagRequestThroughput, "avg")
	if !hasTimestamps(t.Workload) || !ok || !(thr > 0) {
		return []mixShape{{1, decode}}
	}
	reuse := traces.Describe(t.Workload).PrefixReuseRatio
	cached, fresh := isl*reuse, isl*(1-reuse)
	chunks := 1.0
	if opts.ChunkTokens > 0 {
		chunks = max(1, math.Ceil(fresh/float64(opts.ChunkTokens)))
	}
	prompts := thr * itlMs / 1e3 // per step, on average
	q := 1 - math.Exp(-prompts*chunks)
	if !(q > 1e-9) || fresh < 1 {
		return []mixShape{{1, decode}}
	}
	n := prompts * fresh / q // prompt tokens of a step that has some
	withPrompt := decode
	withPrompt.PrefillTokens = int64(math.Round(n))
	withPrompt.PrefillSeqs = max(1, int64(math.Round(prompts/q)))
	withPrompt.PrefillPrefix = int64(math.Round(cached))
	m := fresh / chunks // one chunk of one prompt
	withPrompt.PrefillAttn = int64(math.Round(n * (cached + (m+1)/2)))
	withPrompt.MaxContext = max(decode.MaxContext, int64(math.Round(isl)))
	return []mixShape{{1 - q, decode}, {q, withPrompt}}
}

// decodeBatch is the mean number of sequences decoding in the steps a
// run's tokens came from, from its aggregate. A closed loop keeps its
// concurrency in flight. An open loop keeps what Little's law says of its
// measured throughput and latencies: a request decodes for E2E − TTFT, so
// throughput × mean(E2E − TTFT) requests decode at a time on average, and
// a token's own request decodes beside those others (arrivals at random
// times: the others a request finds are the time average). Its
// loadgen.concurrency is only the client's cap (an inference-perf client's
// workers × concurrency, 22,400), which bounds the batch but is not it.
func decodeBatch(t Target) float64 {
	limit := float64(t.Workload.Concurrency)
	if !hasTimestamps(t.Workload) {
		return max(limit, 1)
	}
	thr, ok1 := t.Profile.Value(results.TagRequestThroughput, "avg")
	e2e, ok2 := t.Profile.Value(results.TagRequestLatency, "avg")
	ttft, _ := t.Profile.Value(results.TagTTFT, "avg")
	if !ok1 || !ok2 || !(thr > 0) || !(e2e > ttft) {
		return max(limit, 1)
	}
	b := 1 + thr*(e2e-ttft)/1e3
	if limit > 0 {
		b = min(b, limit)
	}
	return b
}

// features writes the step's basis features to dst: its shape's, or its
// mix's mean.
func (s Step) features(b basis, dst []float64) {
	if len(s.mix) == 0 {
		b.features(s.Shape, dst)
		return
	}
	tmp := make([]float64, len(dst))
	clear(dst)
	for _, m := range s.mix {
		b.features(m.shape, tmp)
		for i, v := range tmp {
			dst[i] += m.share * v
		}
	}
}

// aggregateRounds is how many times settleAggregates corrects the
// aggregates' mean steps on the simulator.
const aggregateRounds = 4

// settleAggregates corrects the mean step of every aggregate target
// (aggregateStep) on the simulator: fit regresses the steps and returns
// the configuration they give; each round simulates the aggregate
// targets on it and moves each one's step towards the real mean ITL, then
// fits again. The mean step is a model of the steps behind an ITL (a batch
// by Little's law, prompts at random): the simulator runs the steps
// themselves, and where their mean is not the model's (a batch that swings
// with the load, longer than a Poisson one), this takes the simulator's.
// Under load the ITL moves more than the step does (slower steps hold more
// requests in flight: 2.8-fold at half the saturating rate, measured), so
// a step is moved by the log-ratio over that gain, measured between its
// last two rounds (secant; 1 at first). The last fit stands. Without
// aggregates, fit is not called.
func settleAggregates(ctx context.Context, obs *observations, targets []Target, opts Options, evals *int,
	fit func() (sim.Config, error)) error {
	type track struct {
		i               int
		logStep, logSim float64 // the round before's
		seen            bool
	}
	var tr []track
	for i, s := range obs.steps {
		if s.mix != nil {
			tr = append(tr, track{i: i})
		}
	}
	if len(tr) == 0 {
		return nil
	}
	terms := []Term{{results.TagITL, "avg", 1}}
	for round := range aggregateRounds + 1 {
		cfg, err := fit()
		if err != nil || round == aggregateRounds {
			return err
		}
		for k := range tr {
			t := &tr[k]
			rows, _, err := evaluate(ctx, cfg, []Target{targets[obs.target[t.i]]}, terms, opts.Seeds)
			if err != nil {
				return err
			}
			*evals += opts.Seeds
			if len(rows) != 1 || !(rows[0].Sim > 0) {
				continue
			}
			step, got := math.Log(obs.steps[t.i].Ms), math.Log(rows[0].Sim)
			gain := 1.0
			if t.seen && math.Abs(step-t.logStep) > 1e-6 {
				gain = min(max((got-t.logSim)/(step-t.logStep), 1), maxAggregateGain)
			}
			t.logStep, t.logSim, t.seen = step, got, true
			obs.steps[t.i].Ms = math.Exp(step + (math.Log(rows[0].Real)-got)/gain)
		}
	}
	return nil
}

// maxAggregateGain bounds the gain settleAggregates divides by: near
// saturation a step's ITL diverges, and a step moved by a tenth of the
// miss a round still settles.
const maxAggregateGain = 10

// relabel names what pinned the parameters when aggregates are among the
// steps: their mean ITLs, beside the token gaps or alone.
func relabel(ps []sim.CalibratedParam, obs observations) []sim.CalibratedParam {
	gaps, aggs := 0, 0
	for _, s := range obs.steps {
		if s.mix != nil {
			aggs++
		} else {
			gaps++
		}
	}
	if aggs == 0 {
		return ps
	}
	label := fmt.Sprintf("mean ITL of %d aggregate run(s) (simulated)", aggs)
	if gaps > 0 {
		label = "token gaps and the " + label
	}
	for i := range ps {
		ps[i].Source = strings.Replace(ps[i].Source, "token gaps", label, 1)
	}
	return ps
}

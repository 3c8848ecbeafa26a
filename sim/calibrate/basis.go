package calibrate

import (
	"fmt"

	"github.com/simbench/simbench/sim"
)

// basis is the step-time model calibrate fits by regression: step_ms =
// Σ β_i·feature_i(step), with a prior per coefficient.
type basis interface {
	model() string
	features(s sim.StepShape, dst []float64)
	prior() (mean, sd []float64)
	apply(cfg sim.Config, beta []float64) sim.Config
	params(post *posterior) []sim.CalibratedParam
}

// Physics-basis priors: what a serving engine typically achieves when the
// data cannot say. Efficiencies are fitted as their inverses (the cost
// multipliers k = 1/efficiency), which the step time is linear in.
const (
	priorComputeEff = 0.5  // of peak FLOP/s
	priorMemoryEff  = 0.7  // of peak bandwidth
	priorSeqMs      = 0.02 // per sequence per step (sampling, detokenising, bookkeeping)
	maxEfficiency   = 1e3  // written when the data make a cost term vanish
)

// physicsBasis fits sim's physics timing: features are the step's compute
// and memory times at the device's peaks (ms), 1 and its sequences, with
// attention's FLOPs and the KV cache's bytes apart from the rest. The
// weights' bytes are the same in every step: the data see their time and
// step_overhead_ms only together, and memory_efficiency's prior splits it.
//
// On a ggml CPU engine (gemm) a seventh feature marks the steps of two or
// more tokens, whose matrix products run as GEMM rather than one token's
// vector products (sim.PhysicsConfig.MultiTokenOverheadMs); elsewhere it
// is 0 and the overhead stays 0. Elsewhere an eighth marks the steps that
// compute a prompt chunk, which a GPU engine runs outside the decode
// steps' CUDA graph (PrefillOverheadMs); on a ggml CPU engine, where a
// prompt step is a GEMM step already, it is 0.
type physicsBasis struct {
	phys *sim.Physics
	gemm bool
	view sim.KVView // the engine's, as the simulator applies it
	// start is the physics timing the prior centres on: the base
	// configuration's own on a GPU (the priors fitted on public GPU runs,
	// unless the configuration sets others), nil for the hand-set physics
	// priors (a CPU engine, or a base whose timing is not physics).
	start *sim.PhysicsConfig
	// prefillExtra is what the prompt tokens' products cost beyond the
	// decodes', per unit of theirs: start's compute_efficiency /
	// prefill_efficiency − 1, held through the fit. One compute cost
	// multiplier prices both (a run's data seldom see the decodes'
	// products, which hide under the weights' reads, apart from the
	// prompts'), and the prompts keep the prior's ratio to it. 0 when start
	// sets no prefill_efficiency: one efficiency for all products.
	prefillExtra float64
	// expertExtra is the same for a mixture-of-experts model's routed
	// experts against the rest of the weights: start's memory_efficiency
	// / expert_efficiency − 1, held through the fit (one weights' cost
	// multiplier prices both; one deployment's runs cannot tell the
	// experts' reads from the other weights', both streamed once a step).
	// 0 when start sets no expert_efficiency.
	expertExtra float64
	// roof is set when start times with a combine that takes a max (each
	// kernel bounded by its own roofline under "kernels"; the prompts'
	// products against the weights' reads under "overlap"): a max is not
	// linear in the cost multipliers, so each step's features keep only the
	// side of each max that start's multipliers make the slower one (its
	// active set), and the fit is linear again around start. A fit that
	// moves an efficiency so far that a step's slower side changes prices
	// that step on the side start chose.
	roof *activeSet
}

// activeSet is start's combine mode and cost multipliers (1/efficiency),
// which decide each step's slower side under it (physicsBasis.roof).
type activeSet struct {
	combine                          string
	gemm, prefill, weights, attn, kv float64
}

// activeSetOf is start's multipliers when it times with "kernels" or
// "overlap", or nil.
func activeSetOf(start *sim.PhysicsConfig) *activeSet {
	if start == nil || (start.Combine != "kernels" && start.Combine != "overlap") {
		return nil
	}
	return &activeSet{combine: start.Combine, gemm: 1 / start.ComputeEfficiency,
		prefill: 1 / effOr(start.PrefillEfficiency, start.ComputeEfficiency),
		weights: 1 / start.MemoryEfficiency, attn: 1 / effOr(start.AttentionEfficiency, start.ComputeEfficiency),
		kv: 1 / effOr(start.KVEfficiency, start.MemoryEfficiency)}
}

// split is w's four cost features (ms at the peaks: the products with the
// prompts' extra, the weights' reads with the all-reduces, attention, the
// KV traffic) with, under a combine that takes a max, the faster side of
// each max set to 0 (the all-reduces stay: they add to the max). Under
// "overlap" the max is the prompts' products against the weights' reads:
// the decodes' products, attention and the KV traffic add whichever side
// is slower.
func (b physicsBasis) split(w sim.Work) (gemm, weights, attn, kv float64) {
	gemm, weights = (w.ComputeSec-w.AttnSec+b.prefillExtra*w.PrefillSec)*1e3, (w.MemorySec-w.KVSec+b.expertExtra*w.ExpertSec)*1e3
	attn, kv = w.AttnSec*1e3, w.KVSec*1e3
	r := b.roof
	if r == nil {
		return gemm, weights, attn, kv
	}
	comm := w.CommSec * 1e3
	decodes := w.ComputeSec - w.AttnSec - w.PrefillSec
	if r.combine == "overlap" {
		if r.prefill*w.PrefillSec*1e3 > r.weights*(weights-comm) {
			weights = comm
		} else {
			gemm = decodes * 1e3
		}
		return gemm, weights, attn, kv
	}
	if (r.gemm*decodes+r.prefill*w.PrefillSec)*1e3 > r.weights*(weights-comm) {
		weights = comm
	} else {
		gemm = 0
	}
	if r.attn*attn > r.kv*kv {
		kv = 0
	} else {
		attn = 0
	}
	return gemm, weights, attn, kv
}

// extraOf is what a term at efficiency part costs beyond the same term
// at efficiency whole, per unit of the latter: whole/part − 1, or 0 when
// part is unset (see physicsBasis.prefillExtra and .expertExtra).
func extraOf(whole, part float64) float64 {
	if !(part > 0) {
		return 0
	}
	return whole/part - 1
}

func (physicsBasis) model() string { return "physics" }

func (b physicsBasis) features(s sim.StepShape, dst []float64) {
	w := b.phys.Work(b.view.Apply(s))
	gemm, weights, attn, kv := b.split(w)
	dst[0], dst[1], dst[2], dst[3] = gemm, weights, 1, float64(w.Sequences)
	dst[4], dst[5], dst[6], dst[7] = attn, kv, 0, 0
	switch {
	case b.gemm && s.Tokens() >= 2:
		dst[6] = 1
	case !b.gemm && s.PrefillTokens > 0:
		dst[7] = 1
	}
}

// prior: attention is as efficient as the rest of the compute, and the KV
// traffic as the weights', unless the data (long prompts' prefills, long
// contexts' decodes) say otherwise; a multi-token step costs no more than
// its terms until decodes of one and of several sequences say it does.
// On a GPU the means are the base configuration's physics timing (start):
// what a run's data cannot see (one load cannot tell the weights' time
// from the per-step cost) stays at what the simulator already predicts,
// not at round numbers that predict public GPU runs worse. The start's
// layer_overhead_ms is a cost per step on one model, which a run's data
// cannot tell from step_overhead_ms: the step overhead's mean takes it
// (step + layer × layers), and apply writes the sum as the step overhead.
func (b physicsBasis) prior() (mean, sd []float64) {
	sd = []float64{2, 1, 1e4, 1, 8, 8, priorMultiTokenSD, priorPrefillSD}
	if p := b.start; p != nil {
		attn := effOr(p.AttentionEfficiency, p.ComputeEfficiency)
		kv := effOr(p.KVEfficiency, p.MemoryEfficiency)
		step := p.StepOverheadMs + p.LayerOverheadMs*float64(b.phys.Layers())
		return []float64{1 / p.ComputeEfficiency, 1 / p.MemoryEfficiency, step, p.SeqOverheadMs, 1 / attn, 1 / kv,
			p.MultiTokenOverheadMs, p.PrefillOverheadMs}, sd
	}
	return []float64{1 / priorComputeEff, 1 / priorMemoryEff, 1, priorSeqMs, 1 / priorComputeEff, 1 / priorMemoryEff, 0, 0}, sd
}

// effOr is e, or fallback when e is unset (0).
func effOr(e, fallback float64) float64 {
	if e > 0 {
		return e
	}
	return fallback
}

// physicsStart is the physics timing a GPU configuration's calibration
// starts from (physicsBasis.start): its own, when it times with physics
// and names no CPU.
func physicsStart(c sim.Config) *sim.PhysicsConfig {
	p := c.Timing.Physics
	if c.Timing.Model != "physics" || c.Hardware.CPU != "" || p.ComputeEfficiency <= 0 || p.MemoryEfficiency <= 0 {
		return nil
	}
	return &p
}

// priorMultiTokenSD is the prior sd (ms) of multi_token_overhead_ms, of the
// order of a CPU decode step: a plan with decodes of one and of several
// sequences pins it (on the CPU engine's e2e plan, 2.5 ± 0.4 ms), while at
// concurrency 1 alone the only steps of several tokens are the prompts',
// one per request, which the request overhead explains as well.
const priorMultiTokenSD = 2

// priorPrefillSD is the prior sd (ms) of prefill_overhead_ms, of the order
// of a small model's GPU step: prompts beside decodes in the token gaps pin
// it, and so, at concurrency 1, does the TTFT once the response headers
// bound the frontend's time (ackOverheadPrior); with neither, the frontend
// overhead takes the whole TTFT beyond the step model and it stays 0.
const priorPrefillSD = 2

func (b physicsBasis) apply(cfg sim.Config, beta []float64) sim.Config {
	cfg.Timing.Model = "physics"
	cfg.Timing.Physics = sim.PhysicsConfig{ComputeEfficiency: efficiency(beta[0]), MemoryEfficiency: efficiency(beta[1]),
		StepOverheadMs: beta[2], SeqOverheadMs: beta[3], AttentionEfficiency: efficiency(beta[4]), KVEfficiency: efficiency(beta[5]),
		MultiTokenOverheadMs: beta[6], PrefillOverheadMs: beta[7], Combine: "sum"}
	if b.roof != nil {
		cfg.Timing.Physics.Combine = b.roof.combine
	}
	if b.prefillExtra != 0 {
		cfg.Timing.Physics.PrefillEfficiency = efficiency(beta[0] * (1 + b.prefillExtra))
	}
	if b.expertExtra != 0 {
		cfg.Timing.Physics.ExpertEfficiency = efficiency(beta[1] * (1 + b.expertExtra))
	}
	return cfg
}

func efficiency(k float64) float64 {
	if k <= 1/maxEfficiency {
		return maxEfficiency
	}
	return 1 / k
}

func (b physicsBasis) params(post *posterior) []sim.CalibratedParam {
	mean, sd := b.prior()
	inv := func(i int, name, cost string) sim.CalibratedParam {
		p := param(post, i, name, mean, sd)
		k := post.Beta[i]
		p.Value, p.Prior = efficiency(k), 1/mean[i]
		if k > 0 {
			p.SD = post.SD[i] / (k * k) // delta method
		}
		if k <= 1/maxEfficiency {
			// The cost multiplier is at its bound 0: the efficiency is no
			// number, the term is off.
			p.Value, p.SD, p.NoCost, p.Pinned = 0, 0, true, true
			p.Source = "no " + cost + " cost visible in these runs"
		}
		return p
	}
	compute, memory := inv(0, "compute_efficiency", "compute"), inv(1, "memory_efficiency", "weight-streaming")
	ps := []sim.CalibratedParam{compute, memory,
		inv(4, "attention_efficiency", "attention"), inv(5, "kv_efficiency", "KV"),
		param(post, 2, "step_overhead_ms", mean, sd), param(post, 3, "seq_overhead_ms", mean, sd)}
	if b.prefillExtra != 0 {
		ps = append(ps, atRatio(compute, "prefill_efficiency", 1+b.prefillExtra))
	}
	if b.expertExtra != 0 {
		ps = append(ps, atRatio(memory, "expert_efficiency", 1+b.expertExtra))
	}
	if b.gemm {
		ps = append(ps, param(post, 6, "multi_token_overhead_ms", mean, sd))
	} else {
		pre := param(post, 7, "prefill_overhead_ms", mean, sd)
		if pre.Pinned && !post.Fixed[7] {
			pre.Source = "prompt steps: beside decodes in the token gaps, or TTFT beyond the frontend"
		}
		ps = append(ps, pre)
	}
	return ps
}

// atRatio is the efficiency name held at 1/r of the fitted p's (its
// extra cost, physicsBasis.prefillExtra or .expertExtra).
func atRatio(p sim.CalibratedParam, name string, r float64) sim.CalibratedParam {
	q := p
	q.Name, q.Value, q.SD, q.Prior = name, p.Value/r, p.SD/r, p.Prior/r
	q.Source = p.Source + " (" + p.Name + " at the prior's ratio)"
	return q
}

// linearBasis fits sim's linear timing (base + per prompt token + per
// decoding sequence + per context token) when the model and hardware are
// unknown: nothing physical is assumed, so the data must pin each term (a
// calibration plan with several loads and prompt lengths does).
type linearBasis struct {
	view sim.KVView // the engine's, as the simulator applies it
}

func (linearBasis) model() string { return "linear" }

func (b linearBasis) features(s sim.StepShape, dst []float64) {
	s = b.view.Apply(s)
	dst[0] = 1
	dst[1] = float64(s.PrefillTokens)
	dst[2] = float64(s.DecodeSeqs)
	dst[3] = float64(s.KVTokens())
}

// prior: each term is 0 unless the data say otherwise; the per-sequence
// and per-token priors are narrow enough that a run at one load gives the
// whole step to the base, not half of it to each sequence.
func (linearBasis) prior() (mean, sd []float64) {
	return []float64{0, 0, 0, 0}, []float64{1e4, 1, 1, 0.01}
}

func (linearBasis) apply(cfg sim.Config, beta []float64) sim.Config {
	cfg.Timing.Model = "linear"
	cfg.Timing.Linear = sim.LinearConfig{BaseMs: beta[0], PrefillTokenMs: beta[1], DecodeSeqMs: beta[2], ContextTokenMs: beta[3]}
	return cfg
}

func (b linearBasis) params(post *posterior) []sim.CalibratedParam {
	mean, sd := b.prior()
	return []sim.CalibratedParam{param(post, 0, "base_ms", mean, sd), param(post, 1, "prefill_token_ms", mean, sd),
		param(post, 2, "decode_seq_ms", mean, sd), param(post, 3, "context_token_ms", mean, sd)}
}

// param reports coefficient i: pinned when the data shrank its sd below
// half the prior's.
func param(post *posterior, i int, name string, mean, sd []float64) sim.CalibratedParam {
	p := sim.CalibratedParam{Name: name, Value: post.Beta[i], SD: post.SD[i], Prior: mean[i]}
	switch {
	case post.Fixed[i]:
		p.Source, p.Pinned = "token gaps: no such cost in these runs", true
	case post.SD[i] < sd[i]/2:
		p.Source, p.Pinned = "token gaps", true
	default:
		p.Source = "prior"
	}
	return p
}

// newBasis picks the regression basis: physics when the base config names
// its hardware (anything but the default H100 running Llama-3.1-8B, or a
// physics timing other than the default's GPU prior), linear otherwise;
// opts.Basis overrides.
func newBasis(opts Options) (basis, error) {
	kind := opts.Basis
	if kind == "" || kind == "auto" {
		kind = "linear"
		def := sim.DefaultConfig()
		if opts.Base.Hardware != def.Hardware || opts.Base.Timing.Model == "physics" && opts.Base.Timing.Physics != def.Timing.Physics {
			kind = "physics"
		}
	}
	switch kind {
	case "linear":
		return linearBasis{view: sim.EngineKVView(opts.Base.Engine)}, nil
	case "physics":
		p, err := sim.NewPhysics(opts.Base.Hardware)
		if err != nil {
			return nil, fmt.Errorf("calibrate: physics timing: %w", err)
		}
		start := physicsStart(opts.Base)
		b := physicsBasis{phys: p, gemm: ggmlCPU(opts.Base), view: sim.EngineKVView(opts.Base.Engine), start: start,
			roof: activeSetOf(start)}
		if start != nil {
			b.prefillExtra = extraOf(start.ComputeEfficiency, start.PrefillEfficiency)
			b.expertExtra = extraOf(start.MemoryEfficiency, start.ExpertEfficiency)
		}
		return b, nil
	}
	return nil, fmt.Errorf("calibrate: unknown timing basis %q (physics, linear or auto)", kind)
}

// ggmlCPU reports whether c is a llama.cpp engine (llama-server, Ollama's
// runner) on a CPU: ggml's CPU backend, which computes one token's matrix
// products as vector dot products and two or more with a tiled GEMM.
func ggmlCPU(c sim.Config) bool {
	return c.Engine.Type == "llamacpp" && c.Hardware.CPU != ""
}

package timing

import (
	"cmp"
	"fmt"
	"math"
)

// Work is the physical cost of one engine step on one worker, before any
// efficiency: seconds of compute at the device's peak FLOP/s and seconds of
// memory traffic at its peak bandwidth, each per GPU (or CPU) of the
// tensor-parallel group, with the all-reduce traffic counted as memory
// time.
type Work struct {
	FLOPs      float64 // floating-point operations of the whole step (all TP ranks)
	Bytes      float64 // bytes read and written by the whole step (all TP ranks)
	ComputeSec float64 // FLOPs / (peak × TP), each at its own rate (fp8 weights' products at the fp8 rate)
	AttnSec    float64 // the attention FLOPs' share of ComputeSec
	PrefillSec float64 // the prompt tokens' share of ComputeSec − AttnSec (by their share of the step's tokens)
	MemorySec  float64 // Bytes / (bandwidth × TP) + CommSec
	KVSec      float64 // the KV traffic's share of MemorySec
	ExpertSec  float64 // the routed experts' weights' share of MemorySec (MoE)
	CommBytes  float64 // the all-reduce payload of the step (TP > 1; one rank's, summed over the all-reduces)
	CommSec    float64 // the all-reduces' share of MemorySec: ring traffic over the link and their latencies
	Sequences  int64   // sequences in the step (prompt chunks and decodes)
}

// stepCosts are a model's per-step cost coefficients (the formulas are
// Physics'): FLOPs per token, per sequence and per query–key pair, KV and
// all-reduce bytes per token, and the weights a step reads. The roofline
// and physics timing models share them; they differ in how the terms
// combine.
type stepCosts struct {
	layerFlopsPerTok float64 // 2 × the layer weights one token computes with (its experts only)
	headFlopsPerSeq  float64 // LM head
	attnFlopsPerPair float64
	kvBytesPerTok    float64
	arBytesPerTok    float64 // all-reduce payload per token, all layers
	model            ModelSpec
	layerWeightBytes float64 // bytes of one layer weight (hardware.weight_dtype)
	headWeightBytes  float64 // bytes of one LM-head weight (hardware.dtype: quantized checkpoints keep it)
	dequantOps       float64 // per layer weight read, per tile of tokens (weight-only int8/int4; else 0)
}

// newStepCosts are m's costs with weights, KV and activations all of dt
// bytes (see withPrecision).
func newStepCosts(m ModelSpec, dt float64) stepCosts {
	return stepCosts{
		layerFlopsPerTok: 2 * m.activeLayerParams(),
		headFlopsPerSeq:  2 * float64(m.Vocab) * float64(m.Hidden),
		attnFlopsPerPair: 4 * float64(m.Layers) * float64(m.Heads) * float64(m.headDim()),
		kvBytesPerTok:    m.kvBytesPerToken(dt),
		arBytesPerTok:    2 * float64(m.Layers) * float64(m.Hidden) * dt,
		model:            m,
		layerWeightBytes: dt, headWeightBytes: dt,
	}
}

// withPrecision sets h's weight and KV-cache precisions apart from its
// activations' (hardware.dtype), on device d.
func (c stepCosts) withPrecision(h HardwareConfig, d Device) stepCosts {
	wd := h.weightDType(c.model)
	c.layerWeightBytes = weightDTypeBytes[wd]
	c.kvBytesPerTok = c.model.kvBytesPerToken(dtypeBytes[h.kvDType()])
	if weightOnly(wd) || fp8WeightOnly(wd, d) {
		c.dequantOps = dequantOpsPerWeight
	}
	return c
}

// fp8WeightOnly reports whether fp8 weights run weight-only on d: a GPU
// without fp8 tensor cores (Ampere: A100, RTX 3090) multiplies them at
// the 16-bit rate after widening each one it reads, as vLLM's fp8 Marlin
// kernel does on those GPUs, which costs the same dequantization as an
// int8 weight (see dequantOpsPerWeight). A CPU's fp8 is the model's
// business, not priced here.
func fp8WeightOnly(weightDType string, d Device) bool {
	return weightDType == "fp8" && !d.FP8Supported && !d.CPU
}

// Weight-only quantization (W8A16, W4A16): the kernel turns each int8 or
// int4 weight it reads into a 16-bit one (unpack, subtract the zero
// point, scale: dequantOpsPerWeight operations, counted as FLOPs at the
// 16-bit rate) once per tile of dequantTileTokens tokens it multiplies
// (a Marlin-style GEMM's M tile), then multiplies at the 16-bit rate. One
// decode token's products cost 2 FLOPs a weight, so the overhead is
// modest where it matters (large batches: 4 per 64 tokens, 3 %) and
// large only beside a step that memory bounds anyway.
const (
	dequantOpsPerWeight = 4
	dequantTileTokens   = 64
)

// flops are the step's floating-point operations (all TP ranks).
func (c stepCosts) flops(s StepShape) float64 {
	return c.linearFlops(s) + c.headFlopsPerSeq*float64(s.PrefillSeqs+s.DecodeSeqs+s.SpecTokens) + c.attnFlops(s) + c.dequantFlops(s)
}

// linearFlops are the layers' matrix products (projections, MLPs and
// experts), the FLOPs that run at the weights' rate.
func (c stepCosts) linearFlops(s StepShape) float64 {
	return c.layerFlopsPerTok * float64(s.Tokens())
}

// attnFlops are the attention FLOPs: QKᵀ and AV over each token's context.
func (c stepCosts) attnFlops(s StepShape) float64 {
	return c.attnFlopsPerPair * float64(s.PrefillAttn+s.DecodeContext+s.SpecAttn)
}

// dequantFlops is weight-only quantization's dequantization (see
// dequantOpsPerWeight).
func (c stepCosts) dequantFlops(s StepShape) float64 {
	if c.dequantOps == 0 {
		return 0
	}
	tokens := float64(s.Tokens())
	return c.dequantOps * c.layerWeights(tokens) * math.Ceil(tokens/dequantTileTokens)
}

// layerWeights is how many layer weights a step of tokens tokens reads:
// the static ones and, per MoE layer, the experts its tokens touch.
func (c stepCosts) layerWeights(tokens float64) float64 {
	return c.model.staticLayerParams() + c.expertWeights(tokens)
}

// expertWeights is the routed experts' share of layerWeights: per MoE
// layer, the experts a step of tokens tokens touches.
func (c stepCosts) expertWeights(tokens float64) float64 {
	m := c.model
	n := m.moeLayers()
	if n == 0 {
		return 0
	}
	return float64(n) * m.expertsTouched(tokens) * m.expertParams()
}

// weightBytes is the weights a step reads once, given the routed experts
// it touches (expertWeights): its layer weights and the LM head.
func (c stepCosts) weightBytes(experts float64) float64 {
	return (c.model.staticLayerParams()+experts)*c.layerWeightBytes + float64(c.model.Vocab)*float64(c.model.Hidden)*c.headWeightBytes
}

// kvBytes is the KV traffic: the context read and the tokens written.
func (c stepCosts) kvBytes(s StepShape) float64 {
	return float64(s.contextRead()+s.Tokens()) * c.kvBytesPerTok
}

// allReduceBytes is the tensor-parallel all-reduce payload of the step.
func (c stepCosts) allReduceBytes(s StepShape) float64 {
	return c.arBytesPerTok * float64(s.Tokens())
}

// Physics counts the FLOPs and bytes of a step from a model's shape and a
// device's peaks. The counts:
//
//	tokens   = prompt tokens + decoding sequences + draft positions verified
//	FLOPs    = 2·(active layer weights)·tokens              projections, MLPs, k experts a token
//	         + 2·vocab·hidden·(sequences + drafts)          LM head, one row per sequence and draft
//	         + 4·layers·heads·head_dim·(query–key pairs)    QKᵀ and AV over each token's context
//	         + 4·(layer weights read)·⌈tokens/64⌉           weight-only dequantization: int8/int4,
//	                                                         and fp8 on a GPU without fp8 tensor cores
//	bytes    = (layer weights read)·weight_dtype            weights once per step
//	         + vocab·hidden·dtype                           LM head
//	         + KV bytes per token·(context read + tokens written)
//	         KV bytes per token = 2·layers·kv_heads·head_dim·kv_cache_dtype
//	layer weights read = static + MoE layers·E·(1 − (1 − k/E)^tokens)·(one expert)
//	all-reduce (TP > 1) = 2·layers·tokens·hidden·dtype·2(TP−1)/TP over the link
//	                    + 2·layers·link latency
//
// where the query–key pairs are the prompt chunks' causal pairs
// (StepShape.PrefillAttn) plus every decoding sequence's context and its
// draft positions' (StepShape.SpecAttn), the
// active layer weights are attention, dense and shared MLPs, routers and
// experts_per_token routed experts per MoE layer, and the static ones the
// same without the routed experts (the expected count of distinct experts
// a step touches assumes uniform routing). The layers' products run at the
// fp8 rate with fp8 weights, the rest at hardware.dtype's.
type Physics struct {
	stepCosts
	peak, linearPeak, bw, link float64 // FLOP/s (activations, layer products), bytes/s, bytes/s of one device
	tp                         float64
	arLatency                  float64 // seconds of all-reduce latency per step (TP > 1)
}

// NewPhysics builds the step cost model of cfg's hardware: the model
// (hardware.model, model_config or custom_model), the device (hardware.cpu
// when set, else hardware.gpu), the tensor-parallel degree and the
// precisions.
func NewPhysics(h HardwareConfig) (*Physics, error) {
	d, err := h.ResolveDevice()
	if err != nil {
		return nil, err
	}
	m, err := h.ResolveModel()
	if err != nil {
		return nil, err
	}
	dt, ok := dtypeBytes[h.DType]
	if !ok {
		return nil, fmt.Errorf("hardware.dtype: unknown %q", h.DType)
	}
	linear := h.DType
	if h.weightDType(m) == "fp8" {
		linear = "fp8"
	}
	return &Physics{
		stepCosts:  newStepCosts(m, dt).withPrecision(h, d),
		peak:       d.peakFLOPS(h.DType),
		linearPeak: d.peakFLOPS(linear),
		bw:         d.MemBWGBs * 1e9,
		link:       d.LinkBWGBs * 1e9,
		tp:         float64(h.TensorParallel),
		arLatency:  2 * float64(m.Layers) * d.LinkLatencyUs * 1e-6,
	}, nil
}

// Layers is the model's layer count (what layer_overhead_ms multiplies).
func (p *Physics) Layers() int { return p.model.Layers }

// Work returns the cost of the step s.
func (p *Physics) Work(s StepShape) Work {
	flops, kv := p.flops(s), p.kvBytes(s)
	experts := p.expertWeights(float64(s.Tokens()))
	bytes := p.weightBytes(experts) + kv
	w := Work{FLOPs: flops, Bytes: bytes, Sequences: s.PrefillSeqs + s.DecodeSeqs,
		ComputeSec: flops/(p.peak*p.tp) + p.linearFlops(s)*(1/p.linearPeak-1/p.peak)/p.tp,
		AttnSec:    p.attnFlops(s) / (p.peak * p.tp),
		MemorySec:  bytes / (p.bw * p.tp), KVSec: kv / (p.bw * p.tp), ExpertSec: experts * p.layerWeightBytes / (p.bw * p.tp)}
	if n := s.Tokens(); n > 0 && s.PrefillTokens > 0 {
		w.PrefillSec = (w.ComputeSec - w.AttnSec) * float64(s.PrefillTokens) / float64(n)
	}
	if p.tp > 1 && p.link > 0 {
		w.CommBytes = p.allReduceBytes(s)
		w.CommSec = w.CommBytes*2*(p.tp-1)/p.tp/p.link + p.arLatency
		w.MemorySec += w.CommSec
	}
	return w
}

// physicsTiming is the physics-structured step time (see PhysicsConfig):
// the physical compute and memory times divided by their achieved
// efficiencies, combined, plus a fixed cost per step and a cost per
// sequence in the step.
type physicsTiming struct {
	phys               *Physics
	cfg                PhysicsConfig
	kc, ka, kp, km, kk float64 // 1/efficiency: compute, attention, prompt tokens' products, weights (and all-reduce), KV
	ke                 float64 // 1/efficiency: the routed experts' weights
}

func newPhysicsTiming(pc PhysicsConfig, h HardwareConfig) (*physicsTiming, error) {
	p, err := NewPhysics(h)
	if err != nil {
		return nil, err
	}
	ka := 1 / cmp.Or(pc.AttentionEfficiency, pc.ComputeEfficiency)
	kk := 1 / cmp.Or(pc.KVEfficiency, pc.MemoryEfficiency)
	kp := 1 / cmp.Or(pc.PrefillEfficiency, pc.ComputeEfficiency)
	ke := 1 / cmp.Or(pc.ExpertEfficiency, pc.MemoryEfficiency)
	return &physicsTiming{phys: p, cfg: pc, kc: 1 / pc.ComputeEfficiency, ka: ka, kp: kp, km: 1 / pc.MemoryEfficiency, kk: kk, ke: ke}, nil
}

func (t *physicsTiming) stepMs(s StepShape) float64 {
	w := t.phys.Work(s)
	ms := t.workMs(w) + t.cfg.StepOverheadMs + t.cfg.LayerOverheadMs*float64(t.phys.Layers()) + t.cfg.SeqOverheadMs*float64(w.Sequences)
	if s.Tokens() >= 2 {
		ms += t.cfg.MultiTokenOverheadMs
	}
	if s.PrefillTokens > 0 {
		ms += t.cfg.PrefillOverheadMs
	}
	return ms
}

// workMs is the step's compute and memory times (ms), each at its
// efficiency, joined as the combine mode says. "kernels" bounds each kind
// of kernel by its own roofline: the matrix products by their FLOPs or the
// weights they read, whichever is slower, attention by its FLOPs or the KV
// cache it reads, then adds the two and the all-reduces (a step runs its
// kernels one after another, and each overlaps its own arithmetic with its
// own reads). "overlap" adds the terms as "sum" does, but for the prompt
// tokens' products and the weights' reads, of which the slower counts
// (a short chunk beside the decodes hides under the reads). The other
// modes join the step's totals (see combine).
func (t *physicsTiming) workMs(w Work) float64 {
	decodes := t.kc * (w.ComputeSec - w.AttnSec - w.PrefillSec)
	prompts := t.kp * w.PrefillSec
	weights := t.km*(w.MemorySec-w.KVSec-w.CommSec) + t.experts(w)
	switch t.cfg.Combine {
	case "kernels":
		return (max(decodes+prompts, weights) + max(t.ka*w.AttnSec, t.kk*w.KVSec) + t.km*w.CommSec) * 1e3
	case "overlap":
		return (decodes + max(prompts, weights) + t.ka*w.AttnSec + t.kk*w.KVSec + t.km*w.CommSec) * 1e3
	}
	c := (decodes + prompts + t.ka*w.AttnSec) * 1e3
	m := (weights + t.km*w.CommSec + t.kk*w.KVSec) * 1e3
	return combine(t.cfg.Combine, c, m)
}

// experts is what the routed experts' reads cost beyond the weights'
// efficiency (seconds): 0, exactly, for a dense model or an unset
// expert_efficiency.
func (t *physicsTiming) experts(w Work) float64 { return (t.ke - t.km) * w.ExpertSec }

// combine joins a step's compute and memory times (ms) as the physics
// timing's combine mode says: "sum" (they do not overlap), "max" (a
// roofline: they overlap fully) or "smooth" (the 2-norm, between the two).
func combine(mode string, compute, memory float64) float64 {
	switch mode {
	case "max":
		return max(compute, memory)
	case "smooth":
		return math.Hypot(compute, memory)
	default:
		return compute + memory
	}
}

package sim

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
	ComputeSec float64 // FLOPs / (peak × TP)
	AttnSec    float64 // the attention FLOPs' share of ComputeSec
	MemorySec  float64 // Bytes / (bandwidth × TP) + all-reduce bytes / link bandwidth
	KVSec      float64 // the KV traffic's share of MemorySec
	Sequences  int64   // sequences in the step (prompt chunks and decodes)
}

// stepCosts are a model's per-step cost coefficients (the formulas are
// Physics'): FLOPs per token, per sequence and per query–key pair, and KV
// and all-reduce bytes per token. The roofline and physics timing models
// share them; they differ in the weight bytes and how the terms combine.
type stepCosts struct {
	layerFlopsPerTok float64 // 2 × all layers' weights
	headFlopsPerSeq  float64 // LM head
	attnFlopsPerPair float64
	kvBytesPerTok    float64
	arBytesPerTok    float64 // all-reduce payload per token, all layers
}

func newStepCosts(m ModelSpec, dt float64) stepCosts {
	return stepCosts{
		layerFlopsPerTok: 2 * float64(m.Layers) * m.layerParams(),
		headFlopsPerSeq:  2 * float64(m.Vocab) * float64(m.Hidden),
		attnFlopsPerPair: 4 * float64(m.Layers) * float64(m.Heads) * float64(m.headDim()),
		kvBytesPerTok:    m.kvBytesPerToken(dt),
		arBytesPerTok:    2 * float64(m.Layers) * float64(m.Hidden) * dt,
	}
}

// flops are the step's floating-point operations (all TP ranks).
func (c stepCosts) flops(s StepShape) float64 {
	return c.layerFlopsPerTok*float64(s.PrefillTokens+s.DecodeSeqs) + c.headFlopsPerSeq*float64(s.PrefillSeqs+s.DecodeSeqs) +
		c.attnFlops(s)
}

// attnFlops are the attention FLOPs: QKᵀ and AV over each token's context.
func (c stepCosts) attnFlops(s StepShape) float64 {
	return c.attnFlopsPerPair * float64(s.PrefillAttn+s.DecodeContext)
}

// kvBytes is the KV traffic: the context read and the tokens written.
func (c stepCosts) kvBytes(s StepShape) float64 {
	return float64(s.contextRead()+s.PrefillTokens+s.DecodeSeqs) * c.kvBytesPerTok
}

// allReduceBytes is the tensor-parallel all-reduce payload of the step.
func (c stepCosts) allReduceBytes(s StepShape) float64 {
	return c.arBytesPerTok * float64(s.PrefillTokens+s.DecodeSeqs)
}

// Physics counts the FLOPs and bytes of a step from a model's shape and a
// device's peaks. The counts:
//
//	tokens   = prompt tokens + decoding sequences
//	FLOPs    = 2·(layer weights)·tokens                     projections and MLP
//	         + 2·vocab·hidden·sequences                     LM head, one row per sequence
//	         + 4·layers·heads·head_dim·(query–key pairs)    QKᵀ and AV over each token's context
//	bytes    = (layer weights + vocab·hidden)·dtype         weights once per step
//	         + KV bytes per token·(context read + tokens written)
//	         KV bytes per token = 2·layers·kv_heads·head_dim·dtype
//	all-reduce (TP > 1) = 2·layers·tokens·hidden·dtype·2(TP−1)/TP over the link
//
// where the query–key pairs are the prompt chunks' causal pairs
// (StepShape.PrefillAttn) plus every decoding sequence's context.
type Physics struct {
	stepCosts
	weightBytes    float64
	peak, bw, link float64 // FLOP/s, bytes/s, bytes/s of one device
	tp             float64
}

// NewPhysics builds the step cost model of cfg's hardware: the model
// (hardware.model or custom_model), the device (hardware.cpu when set, else
// hardware.gpu) and the tensor-parallel degree and dtype.
func NewPhysics(h HardwareConfig) (*Physics, error) {
	d, err := h.device()
	if err != nil {
		return nil, err
	}
	m, err := h.model()
	if err != nil {
		return nil, err
	}
	dt, ok := dtypeBytes[h.DType]
	if !ok {
		return nil, fmt.Errorf("hardware.dtype: unknown %q", h.DType)
	}
	return &Physics{
		stepCosts:   newStepCosts(m, dt),
		weightBytes: (float64(m.Layers)*m.layerParams() + float64(m.Vocab)*float64(m.Hidden)) * dt,
		peak:        d.peakFLOPS(h.DType),
		bw:          d.MemBWGBs * 1e9,
		link:        d.LinkBWGBs * 1e9,
		tp:          float64(h.TensorParallel),
	}, nil
}

// Work returns the cost of the step s.
func (p *Physics) Work(s StepShape) Work {
	flops, kv := p.flops(s), p.kvBytes(s)
	bytes := p.weightBytes + kv
	w := Work{FLOPs: flops, Bytes: bytes, Sequences: s.PrefillSeqs + s.DecodeSeqs,
		ComputeSec: flops / (p.peak * p.tp), AttnSec: p.attnFlops(s) / (p.peak * p.tp),
		MemorySec: bytes / (p.bw * p.tp), KVSec: kv / (p.bw * p.tp)}
	if p.tp > 1 && p.link > 0 {
		w.MemorySec += p.allReduceBytes(s) * 2 * (p.tp - 1) / p.tp / p.link
	}
	return w
}

// physicsTiming is the physics-structured step time (see PhysicsConfig):
// the physical compute and memory times divided by their achieved
// efficiencies, combined, plus a fixed cost per step and a cost per
// sequence in the step.
type physicsTiming struct {
	phys           *Physics
	cfg            PhysicsConfig
	kc, ka, km, kk float64 // 1/efficiency: compute, attention, weights (and all-reduce), KV
}

func newPhysicsTiming(c *Config) (*physicsTiming, error) {
	p, err := NewPhysics(c.Hardware)
	if err != nil {
		return nil, err
	}
	pc := c.Timing.Physics
	ka := 1 / cmp.Or(pc.AttentionEfficiency, pc.ComputeEfficiency)
	kk := 1 / cmp.Or(pc.KVEfficiency, pc.MemoryEfficiency)
	return &physicsTiming{phys: p, cfg: pc, kc: 1 / pc.ComputeEfficiency, ka: ka, km: 1 / pc.MemoryEfficiency, kk: kk}, nil
}

func (t *physicsTiming) stepMs(s StepShape) float64 {
	w := t.phys.Work(s)
	c, m := (t.kc*(w.ComputeSec-w.AttnSec)+t.ka*w.AttnSec)*1e3, (t.km*(w.MemorySec-w.KVSec)+t.kk*w.KVSec)*1e3
	ms := combine(t.cfg.Combine, c, m) + t.cfg.StepOverheadMs + t.cfg.SeqOverheadMs*float64(w.Sequences)
	if s.Tokens() >= 2 {
		ms += t.cfg.MultiTokenOverheadMs
	}
	if s.PrefillTokens > 0 {
		ms += t.cfg.PrefillOverheadMs
	}
	return ms
}

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

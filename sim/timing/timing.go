package timing

import (
	"fmt"
	"math"
)

// StepShape is what a timing model sees of one engine step (one forward
// pass): the prompt chunks and decoding sequences it computes.
type StepShape struct {
	PrefillTokens int64 // prompt tokens computed in the step (chunks, recomputation)
	PrefillSeqs   int64 // sequences with prompt tokens in the step
	PrefillPrefix int64 // Σ tokens already in KV before each prompt chunk
	PrefillAttn   int64 // Σ n·(prefix + (n+1)/2): query–key pairs of the chunks (causal)
	DecodeSeqs    int64 // sequences decoding one token
	DecodeContext int64 // Σ KV tokens read by the decoding sequences
	KVCapacity    int64 // tokens the worker's KV cache holds
	MaxContext    int64 // the longest context among the step's sequences, its new tokens included (KVView)
	ViewCells     int64 // KV cells the step passes over when the engine's view pads them (KVView); 0: its context
	// SpecTokens are the draft positions the step verifies beside each
	// decoding sequence's own token (speculative decoding), and SpecAttn
	// their query–key pairs: a draft at position j of a sequence of
	// context c attends to c + j keys.
	SpecTokens int64
	SpecAttn   int64
}

// Tokens is how many tokens the step computes: its prompt tokens, one
// per decoding sequence and the draft positions it verifies.
func (s StepShape) Tokens() int64 { return s.PrefillTokens + s.DecodeSeqs + s.SpecTokens }

// KVTokens is the context tokens whose KV the step reads (contextRead),
// for the calibration's linear basis.
func (s StepShape) KVTokens() int64 { return s.contextRead() }

// contextRead is the context tokens whose KV the step reads: every decoding
// sequence's context, plus every prompt chunk's prefix and the chunk itself,
// or the cells of the engine's padded view (KVView).
func (s StepShape) contextRead() int64 {
	if s.ViewCells > 0 {
		return s.ViewCells
	}
	return s.DecodeContext + s.PrefillPrefix + s.PrefillTokens
}

// KVView is how an engine passes over its KV cache. vLLM and SGLang read
// each sequence's own blocks (the zero view: the shape as it is).
// llama.cpp with a KV stream per slot (kv_unified false, as Ollama's runner
// runs it) hands every sequence of a step the same n_kv cells: the step's
// longest used span rounded up to Pad (256), at least Pad and at most a
// slot's Cells (llama_kv_cache::get_n_kv), the cells past a sequence's own
// context masked. Its attention kernel passes over all of them for every
// sequence, skipping the masked ones' arithmetic: the step's attention
// FLOPs stay those of its own context, while the KV term is counted over
// the cells passed. So a decode of one 1,500-token and three 300-token
// sequences passes over 4 × 1,536 cells, and one of a 100-token sequence
// over 256.
type KVView struct {
	Pad, Cells int64
}

// Apply is s as the engine computes it: with a padded view, the KV cells
// every sequence of the step passes over (StepShape.ViewCells).
func (v KVView) Apply(s StepShape) StepShape {
	if v.Pad <= 0 || s.PrefillSeqs+s.DecodeSeqs == 0 {
		return s
	}
	nkv := max(v.Pad, (s.MaxContext+v.Pad-1)/v.Pad*v.Pad)
	if v.Cells > 0 {
		nkv = min(nkv, max(v.Cells, s.MaxContext))
	}
	s.ViewCells = max((s.PrefillSeqs+s.DecodeSeqs)*nkv, s.DecodeContext+s.PrefillPrefix+s.PrefillTokens)
	return s
}

// timingModel gives the duration of one step in ns (before speedup).
type timingModel interface {
	stepMs(s StepShape) float64
}

// Clock converts a model's milliseconds into integer step nanoseconds: divided
// by the speedup, rounded, and at least 1 ns so that virtual time advances.
type Clock struct {
	model   timingModel
	speedup float64
	view    KVView // the engine's: every model prices the step as the engine computes it
}

// StepNs is the duration of the step s in ns.
func (c Clock) StepNs(s StepShape) int64 {
	ns := math.Round(c.model.stepMs(c.view.Apply(s)) * 1e6 / c.speedup)
	if !(ns >= 1) { // also catches NaN
		return 1
	}
	return int64(ns)
}

// TimingModels returns the names timing.model takes, NewClock's cases.
func TimingModels() []string { return []string{"poly", "linear", "roofline", "physics", "table"} }

// NewClock builds the timing model t configures on the hardware h, for an
// engine that passes over its KV cache as view says.
func NewClock(t TimingConfig, h HardwareConfig, view KVView) (Clock, error) {
	var m timingModel
	var err error
	switch t.Model {
	case "poly":
		p := t.Poly
		m = polyTiming{pre: [3]float64(p.Prefill), dec: [3]float64(p.Decode), floor: p.DecodeFloorMs}
	case "linear":
		m = linearTiming(t.Linear)
	case "roofline":
		m, err = newRoofline(t.Roofline, h)
	case "physics":
		m, err = newPhysicsTiming(t.Physics, h)
	case "table":
		m, err = LoadTable(t.Table.File)
		if err != nil {
			err = fmt.Errorf("timing.table.file: %w", err)
		}
	default:
		err = fmt.Errorf("timing.model: unknown model %q", t.Model)
	}
	return Clock{model: m, speedup: t.Speedup, view: view}, err
}

// polyTiming is DynoSim's default polynomial (simulators.md §1.6a):
//
//	prefill_ms = p0 + p1·T + p2·T²      T = new prompt tokens in the step
//	decode_ms  = max(floor, d0 + d1·u + d2·u²)
//	u          = Σ decoding context tokens / KV capacity tokens, capped at 1
//
// A step pays prefill_ms when it computes prompt tokens and decode_ms when it
// decodes; DynoSim's pass is the same serial sum. Unlike DynoSim, sequences
// that finish their prompt in the step are not decoders of that step.
type polyTiming struct {
	pre, dec [3]float64
	floor    float64
}

func (p polyTiming) stepMs(s StepShape) float64 {
	ms := 0.0
	if t := float64(s.PrefillTokens); t > 0 {
		ms += p.pre[0] + p.pre[1]*t + p.pre[2]*t*t
	}
	if s.DecodeSeqs > 0 {
		u := 0.0
		if s.KVCapacity > 0 {
			u = min(1, float64(s.DecodeContext)/float64(s.KVCapacity))
		}
		ms += max(p.floor, p.dec[0]+p.dec[1]*u+p.dec[2]*u*u)
	}
	return ms
}

// linearTiming is the calibration model (see LinearConfig).
type linearTiming LinearConfig

func (l linearTiming) stepMs(s StepShape) float64 {
	return l.BaseMs + l.PrefillTokenMs*float64(s.PrefillTokens) +
		l.DecodeSeqMs*float64(s.DecodeSeqs) + l.ContextTokenMs*float64(s.contextRead())
}

// roofline bounds a step by compute or memory, whichever is slower, per GPU of
// a tensor-parallel group, plus the all-reduces and a fixed overhead, from
// Physics' counts (see Physics):
//
//	time = max(FLOPs/(peak·eff), (bytes + input embedding)/(bandwidth·eff))/tp
//	       + (2·layers·(tokens·hidden·dtype)·2(tp−1)/tp / link bandwidth
//	          + 2·layers·link latency)/eff + overhead
//
// The input embedding (untied models) is counted as read whole every
// step, as this model always has.
type roofline struct {
	phys       *Physics
	embedSec   float64 // the untied input embedding at peak bandwidth, per GPU
	eff        float64
	overheadMs float64
}

func newRoofline(rc RooflineConfig, h HardwareConfig) (*roofline, error) {
	p, err := NewPhysics(h)
	if err != nil {
		return nil, err
	}
	m := p.model
	embed := (m.embedParams() - float64(m.Vocab)*float64(m.Hidden)) * p.headWeightBytes
	return &roofline{phys: p, embedSec: embed / (p.bw * p.tp), eff: rc.Efficiency,
		overheadMs: rc.StepOverheadMs}, nil
}

func (r *roofline) stepMs(s StepShape) float64 {
	w := r.phys.Work(s)
	sec := max(w.ComputeSec, w.MemorySec-w.CommSec+r.embedSec)/r.eff + w.CommSec/r.eff
	return sec*1e3 + r.overheadMs
}

package timing

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// Upper bounds of sizes, far beyond any real deployment.
const (
	MaxStepTokens = 1 << 21 // tokens in one engine step
	maxTensorPar  = 1024    // GPUs per replica
)

// maxStallsPerStep bounds timing.stalls_per_step: more than a few stalls
// in every step is not a stall but the step's own cost.
const maxStallsPerStep = 10

// bothOrNeither refuses one of a pair of settings that only work together.
func bothOrNeither(ka string, a float64, kb string, b float64) error {
	if (a > 0) != (b > 0) {
		return fmt.Errorf("%s and %s: set both or neither, got %g and %g", ka, kb, a, b)
	}
	return nil
}

// needs refuses a setting that means nothing without another.
func needs(ka string, a float64, kb string, b float64) error {
	if a > 0 && b <= 0 {
		return fmt.Errorf("%s: needs %s, got %g without it", ka, kb, a)
	}
	return nil
}

// Validate checks every timing.* key; the error names the offending one.
func (t TimingConfig) Validate() error {
	return FirstErr(
		OneOf("timing.model", t.Model, TimingModels()...),
		FiniteIn("timing.speedup", t.Speedup, 1e-6, 1e6),
		FiniteIn("timing.jitter", t.Jitter, 0, 2),
		FiniteIn("timing.stall_ms", t.StallMs, 0, 1e6),
		FiniteIn("timing.stall_cv", t.StallCV, 0, 10),
		FiniteIn("timing.stalls_per_step", t.StallsPerStep, 0, maxStallsPerStep),
		bothOrNeither("timing.stall_ms", t.StallMs, "timing.stalls_per_step", t.StallsPerStep),
		needs("timing.stall_cv", t.StallCV, "timing.stall_ms", t.StallMs),
		FiniteIn("timing.drift_cv", t.DriftCV, 0, 1),
		FiniteIn("timing.drift_period_ms", t.DriftPeriodMs, 0, 1e9),
		bothOrNeither("timing.drift_cv", t.DriftCV, "timing.drift_period_ms", t.DriftPeriodMs),
		t.validateModel(),
	)
}

func (t TimingConfig) validateModel() error {
	switch t.Model {
	case "poly":
		return t.Poly.validate()
	case "linear":
		return t.Linear.validate()
	case "roofline":
		return FirstErr(FiniteIn("timing.roofline.efficiency", t.Roofline.Efficiency, 1e-3, 1),
			FiniteIn("timing.roofline.step_overhead_ms", t.Roofline.StepOverheadMs, 0, 1e6))
	case "physics":
		return t.Physics.validate()
	default: // table
		if t.Table.File == "" {
			return errors.New("timing.table.file: required with timing.model table")
		}
	}
	return nil
}

func (p PolyConfig) validate() error {
	if len(p.Prefill) != 3 {
		return fmt.Errorf("timing.poly.prefill: want 3 coefficients [p0, p1, p2], got %d", len(p.Prefill))
	}
	if len(p.Decode) != 3 {
		return fmt.Errorf("timing.poly.decode: want 3 coefficients [d0, d1, d2], got %d", len(p.Decode))
	}
	for i, v := range append(append([]float64(nil), p.Prefill...), p.Decode...) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("timing.poly: coefficient %d is not finite", i)
		}
	}
	if err := FiniteIn("timing.poly.decode_floor_ms", p.DecodeFloorMs, 0, 1e6); err != nil {
		return err
	}
	if t, ms := quadMin([3]float64(p.Prefill), 1, MaxStepTokens); !(ms > 0) {
		return fmt.Errorf("timing.poly.prefill: a prefill of %.0f tokens takes %.4g ms; step times must be positive for 1..%d tokens", t, ms, MaxStepTokens)
	}
	if u, ms := quadMin([3]float64(p.Decode), 0, 1); !(max(ms, p.DecodeFloorMs) > 0) {
		return fmt.Errorf("timing.poly.decode: a decode step at KV utilisation %.3g takes %.4g ms; step times must be positive (or set decode_floor_ms)", u, ms)
	}
	return nil
}

// quadMin returns where on [lo, hi] c0 + c1·x + c2·x² is least, and its value there.
func quadMin(c [3]float64, lo, hi float64) (x, v float64) {
	f := func(x float64) float64 { return c[0] + c[1]*x + c[2]*x*x }
	x, v = lo, f(lo)
	cands := []float64{hi}
	if c[2] > 0 {
		cands = append(cands, min(max(-c[1]/(2*c[2]), lo), hi))
	}
	for _, y := range cands {
		if fy := f(y); fy < v {
			x, v = y, fy
		}
	}
	return x, v
}

func (p PhysicsConfig) validate() error {
	return FirstErr(
		FiniteIn("timing.physics.compute_efficiency", p.ComputeEfficiency, 1e-6, 1e3),
		FiniteIn("timing.physics.memory_efficiency", p.MemoryEfficiency, 1e-6, 1e3),
		FiniteIn("timing.physics.attention_efficiency", p.AttentionEfficiency, 0, 1e3),
		FiniteIn("timing.physics.prefill_efficiency", p.PrefillEfficiency, 0, 1e3),
		FiniteIn("timing.physics.kv_efficiency", p.KVEfficiency, 0, 1e3),
		FiniteIn("timing.physics.expert_efficiency", p.ExpertEfficiency, 0, 1e3),
		FiniteIn("timing.physics.step_overhead_ms", p.StepOverheadMs, 0, 1e6),
		FiniteIn("timing.physics.seq_overhead_ms", p.SeqOverheadMs, 0, 1e6),
		FiniteIn("timing.physics.multi_token_overhead_ms", p.MultiTokenOverheadMs, 0, 1e6),
		FiniteIn("timing.physics.prefill_overhead_ms", p.PrefillOverheadMs, 0, 1e6),
		FiniteIn("timing.physics.layer_overhead_ms", p.LayerOverheadMs, 0, 1e6),
		OneOf("timing.physics.combine", p.Combine, "sum", "max", "smooth", "kernels", "overlap"),
	)
}

func (l LinearConfig) validate() error {
	err := FirstErr(
		FiniteIn("timing.linear.base_ms", l.BaseMs, 0, 1e6),
		FiniteIn("timing.linear.prefill_token_ms", l.PrefillTokenMs, 0, 1e6),
		FiniteIn("timing.linear.decode_seq_ms", l.DecodeSeqMs, 0, 1e6),
		FiniteIn("timing.linear.context_token_ms", l.ContextTokenMs, 0, 1e6),
	)
	if err == nil && l.BaseMs == 0 && l.PrefillTokenMs == 0 && l.DecodeSeqMs == 0 && l.ContextTokenMs == 0 {
		return errors.New("timing.linear: every coefficient is 0; steps would take no time")
	}
	return err
}

// Validate checks every hardware.* key and that the device and model
// resolve; the error names the offending key.
func (h HardwareConfig) Validate() error {
	if err := InRange("hardware.tensor_parallel", h.TensorParallel, 1, maxTensorPar); err != nil {
		return err
	}
	if _, ok := dtypeBytes[h.DType]; !ok {
		return fmt.Errorf("hardware.dtype: must be one of %s, got %q", strings.Join(sortedKeys(dtypeBytes), ", "), h.DType)
	}
	if err := FirstErr(OptionalOneOf("hardware.weight_dtype", h.WeightDType, weightDTypes...),
		OptionalOneOf("hardware.kv_cache_dtype", h.KVCacheDType, kvCacheDTypes...)); err != nil {
		return err
	}
	if _, err := h.ResolveDevice(); err != nil {
		return err
	}
	_, err := h.ResolveModel()
	return err
}

package timing

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/internal/tinygguf"
)

// TestPhysicsWork checks the FLOP and byte counts of one step against
// values computed by hand from each model's config (see the comments).
func TestPhysicsWork(t *testing.T) {
	qwen := HardwareConfig{GPU: "rtx-6000-ada", Model: "qwen3-0.6b", TensorParallel: 1, DType: "bf16"}
	tiny := HardwareConfig{GPU: "h100", CPU: "x86-64-v3-2vcpu", Model: "simbench-tiny", TensorParallel: 1, DType: "fp16"}
	cases := []struct {
		name         string
		hw           HardwareConfig
		step         StepShape
		flops, bytes float64
		computeSec   float64
		memorySec    float64
		kvSec        float64 // the KV cache's bytes (context read, tokens written) at peak bandwidth
	}{
		{
			// qwen3-0.6b: layer weights 1024·16·128·2 + 1024·8·128·2 + 3·1024·3072
			// = 15,728,640, ×28 = 440,401,920; LM head 151936·1024 = 155,582,464;
			// KV per token 2·28·8·128·2 = 114,688 B.
			// 100 prompt tokens: 2·440,401,920·100 + 2·155,582,464 + 4·28·16·128·5050.
			name: "qwen3-0.6b prefill 100", hw: qwen,
			step:  StepShape{PrefillTokens: 100, PrefillSeqs: 1, PrefillAttn: 100 * 101 / 2},
			flops: 89_549_897_728, bytes: 1_191_968_768 + 200*114_688,
			computeSec: 89_549_897_728 / 364e12, memorySec: 1_214_906_368 / 960e9, kvSec: 200 * 114_688 / 960e9,
		},
		{
			// 4 decodes over 150 tokens each: 2·440,401,920·4 + 4·2·155,582,464 + 229,376·600.
			name: "qwen3-0.6b decode 4", hw: qwen,
			step:  StepShape{DecodeSeqs: 4, DecodeContext: 600},
			flops: 4_905_500_672, bytes: 1_261_240_320,
			computeSec: 4_905_500_672 / 364e12, memorySec: 1_261_240_320 / 960e9, kvSec: 604 * 114_688 / 960e9,
		},
		{
			// simbench-tiny: layer weights 512·8·64·2 + 512·4·64·2 + 3·512·1536 =
			// 3,145,728, ×4 = 12,582,912; LM head 4096·512 = 2,097,152; KV per
			// token 2·4·4·64·2 = 4,096 B; CPU peak 2 cores·32·2.3 GHz = 147.2 GFLOP/s.
			// 128 prompt tokens: 2·12,582,912·128 + 2·2,097,152 + 4·4·8·64·8256.
			name: "simbench-tiny prefill 128 on CPU", hw: tiny,
			step:  StepShape{PrefillTokens: 128, PrefillSeqs: 1, PrefillAttn: 128 * 129 / 2},
			flops: 3_293_052_928, bytes: 29_360_128 + 256*4_096,
			computeSec: 3_293_052_928 / 147.2e9, memorySec: 30_408_704 / 25e9, kvSec: 256 * 4_096 / 25e9,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewPhysics(tc.hw)
			require.NoError(t, err)
			w := p.Work(tc.step)
			assert.InEpsilon(t, tc.flops, w.FLOPs, 1e-12)
			assert.InEpsilon(t, tc.bytes, w.Bytes, 1e-12)
			assert.InEpsilon(t, tc.computeSec, w.ComputeSec, 1e-12)
			assert.InEpsilon(t, tc.memorySec, w.MemorySec, 1e-12)
			assert.InEpsilon(t, tc.kvSec, w.KVSec, 1e-12)
		})
	}
}

// TestTinyPresetMatchesGenerator pins the simbench-tiny preset to the model
// `simbench tiny-model` writes.
func TestTinyPresetMatchesGenerator(t *testing.T) {
	g := tinygguf.Default()
	m := modelPresets["simbench-tiny"]
	assert.Equal(t, ModelSpec{Layers: g.Layers, Hidden: g.Hidden, Heads: g.Heads, KVHeads: g.KVHeads,
		Intermediate: g.FF, Vocab: g.Vocab}, m)
	assert.Equal(t, g.HeadDim(), m.headDim())
}

func TestPhysicsTiming(t *testing.T) {
	cfg := defaultConfig()
	cfg.Hardware = HardwareConfig{GPU: "rtx-6000-ada", Model: "qwen3-0.6b", TensorParallel: 1, DType: "bf16"}
	cfg.Timing.Model = "physics"
	cfg.Timing.Physics = PhysicsConfig{ComputeEfficiency: 0.5, MemoryEfficiency: 0.8, StepOverheadMs: 10,
		SeqOverheadMs: 0.1, Combine: "sum"}
	require.NoError(t, cfg.Validate())
	s := StepShape{DecodeSeqs: 4, DecodeContext: 600}
	c, m := 4_905_500_672/364e12*1e3/0.5, 1_261_240_320/960e9*1e3/0.8
	for mode, want := range map[string]float64{"sum": c + m, "max": max(c, m), "smooth": 0} {
		cfg.Timing.Physics.Combine = mode
		clk, err := newTiming(&cfg)
		require.NoError(t, err)
		got := clk.model.stepMs(s) - 10 - 0.4
		if mode == "smooth" {
			assert.Greater(t, got, max(c, m))
			assert.Less(t, got, c+m)
			continue
		}
		assert.InEpsilon(t, want, got, 1e-9, mode)
	}
}

// TestPhysicsSplitEfficiencies: attention_efficiency prices only the
// attention FLOPs (4·layers·heads·head_dim per query–key pair) and
// kv_efficiency only the KV cache's bytes (2·layers·kv_heads·head_dim·dtype
// per token of context read or written), prefill_efficiency only the
// prompt tokens' matrix products; 0 leaves them at compute_ and
// memory_efficiency, which always price the rest.
func TestPhysicsSplitEfficiencies(t *testing.T) {
	cases := []struct {
		name   string
		step   StepShape
		set    func(*PhysicsConfig, float64)
		partMs float64 // the priced part at peak, simbench-tiny on the 2-vCPU preset
		rest   float64 // compute_ or memory_efficiency
		low    float64
	}{
		{"attention", StepShape{PrefillTokens: 128, PrefillSeqs: 1, PrefillAttn: 128 * 129 / 2},
			func(p *PhysicsConfig, e float64) { p.AttentionEfficiency = e }, 4.0 * 4 * 8 * 64 * 8256 / 147.2e9 * 1e3, 0.5, 0.05},
		{"kv", StepShape{DecodeSeqs: 4, DecodeContext: 1000},
			func(p *PhysicsConfig, e float64) { p.KVEfficiency = e }, 1004.0 * 4_096 / 25e9 * 1e3, 0.8, 0.1},
		// A prompt's products: 128 tokens × 2 × 4 layers × (512×1536
		// attention projections + 3×512×1536 MLP) and one LM head row
		// (2 × 4096 × 512); its attention stays at compute_efficiency.
		{"prefill", StepShape{PrefillTokens: 128, PrefillSeqs: 1, PrefillAttn: 128 * 129 / 2},
			func(p *PhysicsConfig, e float64) { p.PrefillEfficiency = e }, (128*2*4*(512*1536+3*512*1536) + 2*4096*512) / 147.2e9 * 1e3, 0.5, 0.25},
		// In a mixed step the prompt's share of the products is its share
		// of the step's tokens: 128 of 132.
		{"prefill beside decodes", StepShape{PrefillTokens: 128, PrefillSeqs: 1, PrefillAttn: 128 * 129 / 2, DecodeSeqs: 4, DecodeContext: 1000},
			func(p *PhysicsConfig, e float64) { p.PrefillEfficiency = e },
			(132*2*4*(512*1536+3*512*1536) + 5*2*4096*512) * 128 / 132 / 147.2e9 * 1e3, 0.5, 0.25},
		{"no prompt, no prefill cost", StepShape{DecodeSeqs: 4, DecodeContext: 1000},
			func(p *PhysicsConfig, e float64) { p.PrefillEfficiency = e }, 0, 0.5, 0.25},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := defaultConfig()
			cfg.Hardware = HardwareConfig{GPU: "h100", CPU: "x86-64-v3-2vcpu", Model: "simbench-tiny", TensorParallel: 1, DType: "fp16"}
			cfg.Timing.Model = "physics"
			cfg.Timing.Physics = PhysicsConfig{ComputeEfficiency: 0.5, MemoryEfficiency: 0.8, Combine: "sum"}
			stepMs := func(e float64) float64 {
				tc.set(&cfg.Timing.Physics, e)
				require.NoError(t, cfg.Validate())
				clk, err := newTiming(&cfg)
				require.NoError(t, err)
				return clk.model.stepMs(tc.step)
			}
			base := stepMs(0)
			assert.InEpsilon(t, base, stepMs(tc.rest), 1e-12)
			assert.InEpsilon(t, base+tc.partMs*(1/tc.low-1/tc.rest), stepMs(tc.low), 1e-9)
		})
	}
}

// physicsStepMs gives a step's time under cfg's physics timing with one
// of its fixed overheads (set) at the given value.
func physicsStepMs(t *testing.T, cfg testConfig, set func(*PhysicsConfig, float64)) func(float64, StepShape) float64 {
	return func(overhead float64, s StepShape) float64 {
		set(&cfg.Timing.Physics, overhead)
		require.NoError(t, cfg.Validate())
		clk, err := newTiming(&cfg)
		require.NoError(t, err)
		return clk.model.stepMs(s)
	}
}

// overheadCase is a step and whether an overhead applies to it.
type overheadCase struct {
	name  string
	step  StepShape
	extra bool
}

// checkOverhead: the overhead adds exactly its value to the steps it
// applies to and nothing to the others.
func checkOverhead(t *testing.T, stepMs func(float64, StepShape) float64, ms float64, cases []overheadCase) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want := stepMs(0, tc.step)
			if tc.extra {
				want += ms
			}
			assert.InDelta(t, want, stepMs(ms, tc.step), 1e-9)
		})
	}
}

// TestPhysicsMultiTokenOverhead: multi_token_overhead_ms is added to every
// step of two or more tokens (prompt tokens and decodes together) and to
// no step of one.
func TestPhysicsMultiTokenOverhead(t *testing.T) {
	cfg := defaultConfig()
	cfg.Hardware = HardwareConfig{GPU: "h100", CPU: "x86-64-v3-2vcpu", Model: "simbench-tiny", TensorParallel: 1, DType: "fp16"}
	cfg.Timing.Model = "physics"
	cfg.Timing.Physics = PhysicsConfig{ComputeEfficiency: 0.5, MemoryEfficiency: 0.8, StepOverheadMs: 1, Combine: "sum"}
	checkOverhead(t, physicsStepMs(t, cfg, func(p *PhysicsConfig, v float64) { p.MultiTokenOverheadMs = v }), 2.5, []overheadCase{
		{"one decode", StepShape{DecodeSeqs: 1, DecodeContext: 300}, false},
		{"one prompt token", StepShape{PrefillTokens: 1, PrefillSeqs: 1, PrefillAttn: 1}, false},
		{"two decodes", StepShape{DecodeSeqs: 2, DecodeContext: 600}, true},
		{"a prompt chunk", StepShape{PrefillTokens: 64, PrefillSeqs: 1, PrefillAttn: 64 * 65 / 2}, true},
		{"a decode beside a prompt token", StepShape{PrefillTokens: 1, PrefillSeqs: 1, PrefillAttn: 1, DecodeSeqs: 1, DecodeContext: 300}, true},
	})
}

// TestPhysicsPrefillOverhead: prefill_overhead_ms is added to every step
// that computes a prompt chunk, with decodes beside it or not, and to no
// step of decodes alone, however many.
func TestPhysicsPrefillOverhead(t *testing.T) {
	cfg := defaultConfig()
	cfg.Hardware = HardwareConfig{GPU: "rtx-6000-ada", Model: "qwen3-0.6b", TensorParallel: 1, DType: "bf16"}
	cfg.Timing.Model = "physics"
	cfg.Timing.Physics = PhysicsConfig{ComputeEfficiency: 0.5, MemoryEfficiency: 0.7, StepOverheadMs: 16, Combine: "sum"}
	checkOverhead(t, physicsStepMs(t, cfg, func(p *PhysicsConfig, v float64) { p.PrefillOverheadMs = v }), 1.75, []overheadCase{
		{"one decode", StepShape{DecodeSeqs: 1, DecodeContext: 300}, false},
		{"eight decodes", StepShape{DecodeSeqs: 8, DecodeContext: 2400}, false},
		{"one prompt token", StepShape{PrefillTokens: 1, PrefillSeqs: 1, PrefillAttn: 1}, true},
		{"a prompt chunk beside decodes", StepShape{PrefillTokens: 100, PrefillSeqs: 1, PrefillAttn: 100 * 101 / 2, DecodeSeqs: 3, DecodeContext: 900}, true},
	})
}

// TestPhysicsLayerOverhead: layer_overhead_ms is added to every step, decode
// or prompt, once per layer of the model (28 for Qwen3-0.6B, 80 for
// Llama-3.1-70B), under either combine, and on any GPU alike.
func TestPhysicsLayerOverhead(t *testing.T) {
	steps := []StepShape{
		{DecodeSeqs: 1, DecodeContext: 300},
		{DecodeSeqs: 8, DecodeContext: 2400},
		{PrefillTokens: 512, PrefillSeqs: 1, PrefillAttn: 512 * 513 / 2, DecodeSeqs: 3, DecodeContext: 900},
	}
	for _, tc := range []struct {
		gpu, model, combine string
		tp, layers          int
	}{
		{"h100", "qwen3-0.6b", "sum", 1, 28},
		{"gb200", "qwen3-0.6b", "sum", 1, 28},
		{"h100", "llama-3.1-70b", "kernels", 4, 80},
	} {
		cfg := defaultConfig()
		cfg.Hardware = HardwareConfig{GPU: tc.gpu, Model: tc.model, TensorParallel: tc.tp, DType: "bf16"}
		cfg.Timing.Model = "physics"
		cfg.Timing.Physics = PhysicsConfig{ComputeEfficiency: 0.6, MemoryEfficiency: 0.8, StepOverheadMs: 0.5, SeqOverheadMs: 0.01, Combine: tc.combine}
		stepMs := physicsStepMs(t, cfg, func(p *PhysicsConfig, v float64) { p.LayerOverheadMs = v })
		for _, s := range steps {
			assert.InDelta(t, stepMs(0, s)+0.07*float64(tc.layers), stepMs(0.07, s), 1e-9, "%s %s %+v", tc.gpu, tc.model, s)
		}
	}
}

// TestPhysicsOverlapCombine: under combine overlap the prompt tokens'
// matrix products and the weights' reads overlap (the slower counts),
// while the decodes' products, attention, the KV reads and the
// all-reduces add to them as under sum; the FLOPs and bytes are Work's.
func TestPhysicsOverlapCombine(t *testing.T) {
	const ce, pe, ae, me, ke = 0.9, 0.6, 0.5, 0.75, 0.9
	cases := []struct {
		name         string
		tp           int
		step         StepShape
		promptsBound bool
	}{
		{"decodes: nothing to overlap", 1, StepShape{DecodeSeqs: 32, DecodeContext: 32 * 2000}, false},
		{"a short chunk beside decodes hides under the weights' reads", 1, StepShape{PrefillTokens: 32, PrefillSeqs: 1, PrefillAttn: 32 * 500,
			DecodeSeqs: 16, DecodeContext: 16 * 700}, false},
		{"a long prompt: its products bound", 1, StepShape{PrefillTokens: 8192, PrefillSeqs: 1, PrefillAttn: 8192 * 8193 / 2}, true},
		{"a prompt beside decodes, TP 4: the all-reduces add", 4, StepShape{PrefillTokens: 2048, PrefillSeqs: 1, PrefillAttn: 2048 * 2049 / 2,
			DecodeSeqs: 64, DecodeContext: 64 * 1500}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, w := seventyBStep(t, tc.tp, PhysicsConfig{ComputeEfficiency: ce, PrefillEfficiency: pe, AttentionEfficiency: ae,
				MemoryEfficiency: me, KVEfficiency: ke, StepOverheadMs: 1, Combine: "overlap"}, tc.step)
			decodes, prompts := (w.ComputeSec-w.AttnSec-w.PrefillSec)/ce, w.PrefillSec/pe
			weights := (w.MemorySec - w.KVSec - w.CommSec) / me
			assert.Equal(t, tc.promptsBound, prompts > weights, "prompts' products against weights")
			rest := decodes + w.AttnSec/ae + w.KVSec/ke + w.CommSec/me
			want := (max(prompts, weights)+rest)*1e3 + 1
			assert.InEpsilon(t, want, got, 1e-12)
			sum := (prompts+weights+rest)*1e3 + 1
			if tc.step.PrefillTokens > 0 {
				assert.Less(t, got, sum, "the prompts' products overlap the weights' reads")
			} else {
				assert.InEpsilon(t, sum, got, 1e-12, "a decode step is priced as under sum")
			}
		})
	}
}

// TestPhysicsKernelsCombine: under combine kernels the matrix products and
// the weights' reads overlap (the slower counts), as do attention and the
// KV reads, and the two pairs and the all-reduces add up; the products'
// and attention's FLOPs and the weights' and KV bytes are Work's.
func TestPhysicsKernelsCombine(t *testing.T) {
	const ce, ae, me, ke = 0.6, 0.5, 0.75, 0.9
	cases := []struct {
		name         string
		tp           int
		step         StepShape
		computeBound bool // both pairs
	}{
		{"decodes: the reads bound both pairs", 1, StepShape{DecodeSeqs: 32, DecodeContext: 32 * 2000}, false},
		{"a long prompt: the products and attention bound", 1, StepShape{PrefillTokens: 8192, PrefillSeqs: 1, PrefillAttn: 8192 * 8193 / 2}, true},
		{"a prompt beside decodes, TP 4: the all-reduces add", 4, StepShape{PrefillTokens: 2048, PrefillSeqs: 1, PrefillAttn: 2048 * 2049 / 2,
			DecodeSeqs: 64, DecodeContext: 64 * 1500}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, w := seventyBStep(t, tc.tp, PhysicsConfig{ComputeEfficiency: ce, AttentionEfficiency: ae, MemoryEfficiency: me,
				KVEfficiency: ke, StepOverheadMs: 1, Combine: "kernels"}, tc.step)
			products, attn := (w.ComputeSec-w.AttnSec)/ce, w.AttnSec/ae
			weights, kv := (w.MemorySec-w.KVSec-w.CommSec)/me, w.KVSec/ke
			assert.Equal(t, tc.computeBound, products > weights, "products against weights")
			assert.Equal(t, tc.computeBound, attn > kv, "attention against KV")
			want := (max(products, weights)+max(attn, kv)+w.CommSec/me)*1e3 + 1
			assert.InEpsilon(t, want, got, 1e-12)
			sum := (products+attn+weights+kv+w.CommSec/me)*1e3 + 1
			assert.Less(t, got, sum, "some of the step overlaps")
			if tc.tp > 1 {
				assert.Positive(t, w.CommSec)
			}
		})
	}
}

// TestShippedPriorsHaveTheGPUStructure: the whole-corpus prior and every
// fold were fitted from starts with the GPU priors' combine mode and
// kernel efficiencies (WithGPUStructure), which every fit keeps, so a
// refit from starts without them shows here.
func TestShippedPriorsHaveTheGPUStructure(t *testing.T) {
	priors := []GPUPrior{DefaultGPUPrior()}
	for _, f := range append(GPUPriorFolds(), GPUPriorModelFolds()...) {
		priors = append(priors, f.Prior)
	}
	for i, p := range priors {
		assert.Equal(t, p, p.WithGPUStructure(), "prior %d", i)
	}
	assert.Equal(t, "overlap", DefaultGPUPrior().Physics.Combine)
}

// seventyBStep is the step time (ms) of step for Llama-3.1-70B on H100s at
// tensor parallelism tp under the physics timing pc, and its Work.
func seventyBStep(t *testing.T, tp int, pc PhysicsConfig, step StepShape) (float64, Work) {
	t.Helper()
	cfg := defaultConfig()
	cfg.Hardware = HardwareConfig{GPU: "h100", Model: "llama-3.1-70b", TensorParallel: tp, DType: "bf16"}
	cfg.Timing.Model = "physics"
	cfg.Timing.Physics = pc
	require.NoError(t, cfg.Validate())
	clk, err := newTiming(&cfg)
	require.NoError(t, err)
	p, err := NewPhysics(cfg.Hardware)
	require.NoError(t, err)
	return clk.model.stepMs(step), p.Work(step)
}

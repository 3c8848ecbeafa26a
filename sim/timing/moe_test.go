package timing

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	mixtralConfig = "../../testdata/models/mixtral-8x7b.json"
	llama70Config = "../../testdata/models/llama-3.1-70b.json"
	scoutConfig   = "../../testdata/models/llama-4-scout-17b-16e.json"
	qwenMoEConfig = "../../testdata/models/qwen3-30b-a3b.json"
)

// TestModelParamsByHand checks the weight counts of the config.json models
// against published sizes, computed by hand in the comments.
func TestModelParamsByHand(t *testing.T) {
	cases := []struct {
		path           string
		params, active float64 // all weights; the layer weights one token computes with
	}{
		// Mixtral-8x7B: attention 4096·32·128·2 + 4096·8·128·2 = 41,943,040 a layer;
		// router 4096·8 = 32,768; one expert 3·4096·14336 = 176,160,768.
		// Layers: 32·(41,943,040 + 32,768 + 8·176,160,768) = 46,440,382,464; embeddings
		// 2·32000·4096 = 262,144,000; 46.7 B in all. Active: 32·(41,975,808 + 2·176,160,768).
		{mixtralConfig, 46_702_526_464, 12_617_515_008},
		// Llama-3.1-70B: 80·(8192·64·128·2 + 8192·8·128·2 + 3·8192·28672) + 2·128256·8192.
		{llama70Config, 70_552_387_584, 68_451_041_280},
		// Llama-4-Scout: attention 5120·40·128·2 + 5120·8·128·2 = 62,914,560; an expert
		// (and the shared one) 3·5120·8192 = 125,829,120; router 5120·16 = 81,920.
		// 48·(62,914,560 + 81,920 + 17·125,829,120) + 2·202048·5120; active 48·(… + 2·125,829,120).
		{scoutConfig, 107_769_364_480, 15_103_426_560},
		// Qwen3-30B-A3B: attention 2048·32·128·2 + 2048·4·128·2 = 18,874,368; router
		// 2048·128 = 262,144; an expert 3·2048·768 = 4,718,592.
		// 48·(18,874,368 + 262,144 + 128·4,718,592) + 2·151936·2048; active 48·(… + 8·4,718,592).
		{qwenMoEConfig, 30_531_911_680, 2_730_491_904},
	}
	for _, tc := range cases {
		t.Run(tc.path, func(t *testing.T) {
			m, err := ModelFromHFConfig(tc.path)
			require.NoError(t, err)
			assert.Equal(t, tc.params, m.Params())
			assert.Equal(t, tc.active, m.activeLayerParams())
		})
	}
}

// TestMoEAndTPWork checks the FLOPs, weight and KV bytes and the
// all-reduce of one step of a mixture of experts (Mixtral-8x7B) and of a
// dense model under TP 4 (Llama-3.1-70B) against values computed by hand
// in the comments.
func TestMoEAndTPWork(t *testing.T) {
	mixtral := HardwareConfig{GPU: "h100", Model: "mixtral", ModelConfig: mixtralConfig, TensorParallel: 2, DType: "bf16"}
	mixtralFP8 := mixtral
	mixtralFP8.TensorParallel, mixtralFP8.WeightDType, mixtralFP8.KVCacheDType = 1, "fp8", "fp8"
	llama := HardwareConfig{GPU: "a100", Model: "llama", ModelConfig: llama70Config, TensorParallel: 4, DType: "bf16"}
	llamaInt4 := llama
	llamaInt4.WeightDType = "int4"
	llamaFP8 := llama
	llamaFP8.WeightDType = "fp8"
	cases := []struct {
		name                   string
		hw                     HardwareConfig
		step                   StepShape
		flops, weightBytes, kv float64
		commBytes, commSec     float64
		computeSec             float64
		memorySec              float64 // without the all-reduce
		expertBytes            float64 // the routed experts' share of weightBytes
	}{
		{
			// Mixtral, 4 decodes over 1,000 tokens each, TP 2 on H100.
			// FLOPs: 2·12,617,515,008·4 (active layers) + 2·32000·4096·4 (LM head)
			// + 4·32·32·128·4000 (attention) = 104,085,848,064.
			// Experts touched per layer: 8·(1 − (6/8)^4) = 5.46875, ×32 layers = 175;
			// layer weights read 32·41,975,808 + 175·176,160,768 = 32,171,360,256;
			// weight bytes 2·(32,171,360,256 + 131,072,000) = 64,604,864,512.
			// KV: 2·32·8·128·2 = 131,072 B a token, (4000 read + 4 written)·131,072.
			// All-reduce: 2·32·4096·2 B·4 tokens = 2,097,152 B, ×2(2−1)/2 over 450 GB/s,
			// + 2·32·6.6 µs = 422.4 µs.
			name: "mixtral decode 4, tp 2", hw: mixtral,
			step:  StepShape{DecodeSeqs: 4, DecodeContext: 4000},
			flops: 104_085_848_064, weightBytes: 64_604_864_512, kv: 4004 * 131_072,
			commBytes: 2_097_152, commSec: 2_097_152/450e9 + 422.4e-6,
			computeSec: 104_085_848_064 / (989.5e12 * 2),
			memorySec:  (64_604_864_512 + 4004*131_072) / (3350e9 * 2),
			// Routed experts: 175·176,160,768 weights at 2 B.
			expertBytes: 61_656_268_800,
		},
		{
			// Mixtral, one 512-token prompt, fp8 weights and KV, TP 1.
			// Every expert is touched (8·(1 − 0.75^512) = 8 to 1e-60): layer weights
			// 46,440,382,464 at 1 B, LM head 131,072,000 at 2 B: 46,702,526,464 B.
			// KV: 65,536 B a token (fp8), 512 read + 512 written.
			// FLOPs: 2·12,617,515,008·512 = 12,920,335,368,192 at the fp8 rate (2·989.5 T);
			// LM head 2·131,072,000 and attention 524,288·(512·513/2) = 68,853,694,464
			// at the bf16 rate.
			name: "mixtral prefill 512, fp8", hw: mixtralFP8,
			step:  StepShape{PrefillTokens: 512, PrefillSeqs: 1, PrefillAttn: 512 * 513 / 2},
			flops: 12_920_335_368_192 + 262_144_000 + 68_853_694_464, weightBytes: 46_702_526_464, kv: 1024 * 65_536,
			computeSec: 12_920_335_368_192/(2*989.5e12) + (262_144_000+68_853_694_464)/989.5e12,
			memorySec:  (46_702_526_464 + 1024*65_536) / 3350e9,
			// Routed experts: 8·32·176,160,768 weights at 1 B.
			expertBytes: 45_097_156_608,
		},
		{
			// Llama-3.1-70B, 8 decodes over 1,000 tokens each, TP 4 on A100.
			// FLOPs: 2·68,451,041,280·8 + 2·1,050,673,152·8 + 4·80·64·128·8000
			// = 1,095,216,660,480 + 16,810,770,432 + 20,971,520,000.
			// Weights (68,451,041,280 + 1,050,673,152)·2 B; KV 327,680 B a token, 8,008 tokens.
			// All-reduce: 2·80·8192·2 B·8 = 20,971,520 B, ×2·3/4 = 31,457,280 B over
			// 300 GB/s = 104.8576 µs, + 2·80·6.6 µs = 1,056 µs.
			name: "llama-3.1-70b decode 8, tp 4", hw: llama,
			step:  StepShape{DecodeSeqs: 8, DecodeContext: 8000},
			flops: 1_132_998_950_912, weightBytes: 139_003_428_864, kv: 8008 * 327_680,
			commBytes: 20_971_520, commSec: 104.8576e-6 + 1056e-6,
			computeSec: 1_132_998_950_912 / (312e12 * 4),
			memorySec:  (139_003_428_864 + 8008*327_680) / (2039e9 * 4),
		},
		{
			// The same with int4 weights (W4A16): 0.5 B + one fp16 scale per 128,
			// 33/64 B a weight: 68,451,041,280·33/64 = 35,295,068,160 B, + the LM head
			// in bf16 2,101,346,304 B. Dequantization: 4 ops a weight read, one tile of
			// 8 ≤ 64 tokens: 4·68,451,041,280 = 273,804,165,120 FLOPs more.
			name: "llama-3.1-70b int4 decode 8, tp 4", hw: llamaInt4,
			step:  StepShape{DecodeSeqs: 8, DecodeContext: 8000},
			flops: 1_132_998_950_912 + 273_804_165_120, weightBytes: 37_396_414_464, kv: 8008 * 327_680,
			commBytes: 20_971_520, commSec: 104.8576e-6 + 1056e-6,
			computeSec: (1_132_998_950_912 + 273_804_165_120) / (312e12 * 4),
			memorySec:  (37_396_414_464 + 8008*327_680) / (2039e9 * 4),
		},
		{
			// The same with fp8 weights on the A100, which has no fp8 tensor
			// cores: 1 B a weight, 68,451,041,280 B, + the LM head in bf16
			// 2,101,346,304 B; products at the bf16 rate after the same
			// dequantization as int4's, 4·68,451,041,280 FLOPs more.
			name: "llama-3.1-70b fp8 decode 8, tp 4, a100 (weight-only)", hw: llamaFP8,
			step:  StepShape{DecodeSeqs: 8, DecodeContext: 8000},
			flops: 1_132_998_950_912 + 273_804_165_120, weightBytes: 70_552_387_584, kv: 8008 * 327_680,
			commBytes: 20_971_520, commSec: 104.8576e-6 + 1056e-6,
			computeSec: (1_132_998_950_912 + 273_804_165_120) / (312e12 * 4),
			memorySec:  (70_552_387_584 + 8008*327_680) / (2039e9 * 4),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewPhysics(tc.hw)
			require.NoError(t, err)
			w := p.Work(tc.step)
			assert.InEpsilon(t, tc.flops, w.FLOPs, 1e-12, "FLOPs")
			assert.InEpsilon(t, tc.weightBytes+tc.kv, w.Bytes, 1e-12, "bytes")
			assert.InEpsilon(t, tc.kv, p.kvBytes(tc.step), 1e-12, "KV bytes")
			assert.InEpsilon(t, tc.computeSec, w.ComputeSec, 1e-12, "compute")
			assert.InEpsilon(t, tc.memorySec+tc.commSec, w.MemorySec, 1e-12, "memory")
			assert.InDelta(t, tc.commBytes, w.CommBytes, 1e-3, "all-reduce bytes")
			assert.InDelta(t, tc.commSec, w.CommSec, 1e-15, "all-reduce time")
			assert.InDelta(t, tc.expertBytes/(p.bw*p.tp), w.ExpertSec, 1e-15, "experts' time")
		})
	}
}

// TestAllReduceLatencyZeroKeepsFormula: with link_latency_us 0 the
// all-reduce is bandwidth alone, as before the latency existed.
func TestAllReduceLatencyZeroKeepsFormula(t *testing.T) {
	g := gpuPresets["a100"]
	g.LinkLatencyUs = 0
	hw := HardwareConfig{GPU: "custom", CustomGPU: &g, Model: "llama-3.1-70b", TensorParallel: 4, DType: "bf16"}
	p, err := NewPhysics(hw)
	require.NoError(t, err)
	w := p.Work(StepShape{DecodeSeqs: 8, DecodeContext: 8000})
	assert.InDelta(t, 104.8576e-6, w.CommSec, 1e-15)
}

// TestExpertsTouched: a step of one token reads its k experts; a large
// step reads them all (uniform routing).
func TestExpertsTouched(t *testing.T) {
	m := ModelSpec{Experts: 128, ExpertsPerToken: 8}
	assert.InDelta(t, 8, m.expertsTouched(1), 1e-12)
	assert.InDelta(t, 128*(1-0.9375*0.9375), m.expertsTouched(2), 1e-12)
	assert.InDelta(t, 128, m.expertsTouched(4096), 1e-9)
	assert.Zero(t, ModelSpec{}.expertsTouched(100))
}

// TestRooflineDenseByHand prices one decode of Llama-3.1-8B (context
// 1,000) on H100s as the roofline always has, plus the all-reduce latency
// under TP. Weights: 32·(4096·32·128·2 + 4096·8·128·2 + 3·4096·14336)
// + 2·128256·4096 = 6,979,321,856 + 1,050,673,152 = 8,029,995,008 (the
// input embedding counted, as roofline always has), at 2 B; KV 131,072 B a
// token, 1,001 tokens: 16,191,193,088 B at 3350 GB/s × 0.6 = 8.05532 ms,
// + 1 ms. Under TP 2
// half of it, + (524,288 B·2·1/2 / 450 GB/s + 2·32·6.6 µs)/0.6.
func TestRooflineDenseByHand(t *testing.T) {
	step := StepShape{DecodeSeqs: 1, DecodeContext: 1000}
	memMs := 16_191_193_088 / (3350e9 * 0.6) * 1e3
	for tp, want := range map[int]float64{1: memMs + 1, 2: memMs/2 + (524_288/450e9+422.4e-6)/0.6*1e3 + 1} {
		cfg := defaultConfig()
		cfg.Timing.Model, cfg.Hardware.TensorParallel = "roofline", tp
		clk, err := newTiming(&cfg)
		require.NoError(t, err)
		assert.InEpsilon(t, want, clk.model.stepMs(step), 1e-12, "tp %d", tp)
	}
}

// TestPhysicsExpertEfficiency: expert_efficiency prices the routed
// experts' reads apart from the other weights' (unset: at
// memory_efficiency) and changes nothing for a dense model, under both
// combines (a decode step of four is bound by its reads under kernels).
func TestPhysicsExpertEfficiency(t *testing.T) {
	step := StepShape{DecodeSeqs: 4, DecodeContext: 4000}
	for _, tc := range []struct {
		model, combine string
		moe            bool
	}{{"mixtral-8x7b", "sum", true}, {"mixtral-8x7b", "kernels", true}, {"llama-3.1-8b", "sum", false}} {
		t.Run(tc.model+" "+tc.combine, func(t *testing.T) {
			cfg := defaultConfig()
			cfg.Hardware = HardwareConfig{GPU: "h100", Model: tc.model, TensorParallel: 2, DType: "bf16"}
			cfg.Timing.Model = "physics"
			cfg.Timing.Physics = PhysicsConfig{ComputeEfficiency: 0.5, MemoryEfficiency: 0.8, Combine: tc.combine}
			stepMs := func(e float64) float64 {
				cfg.Timing.Physics.ExpertEfficiency = e
				require.NoError(t, cfg.Validate())
				clk, err := newTiming(&cfg)
				require.NoError(t, err)
				return clk.model.stepMs(step)
			}
			p, err := NewPhysics(cfg.Hardware)
			require.NoError(t, err)
			experts := p.Work(step).ExpertSec * 1e3
			assert.Equal(t, tc.moe, experts > 0)
			assert.InEpsilon(t, stepMs(0), stepMs(0.8), 1e-12, "unset is memory_efficiency")
			assert.InDelta(t, stepMs(0)+experts*(1/0.4-1/0.8), stepMs(0.4), 1e-9)
		})
	}
}

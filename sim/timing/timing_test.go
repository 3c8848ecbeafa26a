package timing

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The sample values of DynoSim's polynomial quoted in simulators.md §1.6a.
func TestPolyMatchesDynoSimSamples(t *testing.T) {
	cfg := defaultConfig()
	cfg.Timing.Model = "poly"
	clk, err := newTiming(&cfg)
	require.NoError(t, err)
	for _, tc := range []struct {
		tokens int64
		ms     float64
	}{{512, 24.39}, {1024, 32.49}, {2048, 49.36}, {4096, 85.76}, {8192, 169.14}, {16384, 378.28}} {
		got := clk.model.stepMs(StepShape{PrefillTokens: tc.tokens, PrefillSeqs: 1})
		assert.InDelta(t, tc.ms, got, 0.01, "prefill %d", tc.tokens)
	}
	for _, tc := range []struct{ u, ms float64 }{{0, 5.74}, {0.25, 17.63}, {0.5, 26.31}, {0.75, 31.77}, {1, 34.01}, {3, 34.01}} {
		got := clk.model.stepMs(StepShape{DecodeSeqs: 1, DecodeContext: int64(tc.u * 1000), KVCapacity: 1000})
		assert.InDelta(t, tc.ms, got, 0.01, "decode u=%g", tc.u)
	}
	// A mixed step pays both; an empty decode term is floored at 1 ms.
	mixed := clk.model.stepMs(StepShape{PrefillTokens: 512, DecodeSeqs: 3, KVCapacity: 1000})
	assert.InDelta(t, 24.39+5.74, mixed, 0.01)
	cfg.Timing.Poly.Decode = []float64{-5, 0, 0}
	clk, err = newTiming(&cfg)
	require.NoError(t, err)
	assert.Equal(t, 1.0, clk.model.stepMs(StepShape{DecodeSeqs: 1, KVCapacity: 1}))
}

func TestLinearAndSpeedup(t *testing.T) {
	cfg := defaultConfig()
	cfg.Timing.Model = "linear"
	cfg.Timing.Linear = LinearConfig{BaseMs: 2, PrefillTokenMs: 0.01, DecodeSeqMs: 0.5, ContextTokenMs: 0.001}
	cfg.Timing.Speedup = 2
	clk, err := newTiming(&cfg)
	require.NoError(t, err)
	s := StepShape{PrefillTokens: 100, PrefillSeqs: 1, PrefillPrefix: 50, DecodeSeqs: 4, DecodeContext: 1000}
	// 2 + 0.01·100 + 0.5·4 + 0.001·(1000 + 50 + 100) = 6.15 ms, halved.
	assert.Equal(t, int64(3_075_000), clk.StepNs(s))
	// Never less than 1 ns.
	cfg.Timing.Linear = LinearConfig{ContextTokenMs: 1e-9}
	clk, err = newTiming(&cfg)
	require.NoError(t, err)
	assert.Equal(t, int64(1), clk.StepNs(StepShape{}))
}

// Decode of one sequence on one H100 is memory-bound: ~16 GB of weights at
// 3.35 TB/s × 0.6 ≈ 8 ms, plus the 1 ms overhead. An 8k-token prefill is
// compute-bound: ≈ 2·7.5e9·8192 FLOP / (989.5e12·0.6) ≈ 0.21 s plus
// attention.
func TestRooflineOrdersOfMagnitude(t *testing.T) {
	cfg := defaultConfig()
	cfg.Timing.Model = "roofline"
	clk, err := newTiming(&cfg)
	require.NoError(t, err)
	dec := clk.model.stepMs(StepShape{DecodeSeqs: 1, DecodeContext: 1000})
	assert.InDelta(t, 9.0, dec, 0.5)
	pre := clk.model.stepMs(StepShape{PrefillTokens: 8192, PrefillSeqs: 1, PrefillAttn: 8192 * 8193 / 2})
	assert.InDelta(t, 240, pre, 30)
	// Batching decodes is almost free while memory-bound.
	dec64 := clk.model.stepMs(StepShape{DecodeSeqs: 64, DecodeContext: 64000})
	assert.Less(t, dec64, 2*dec)

	cfg.Hardware.TensorParallel = 2
	clk2, err := newTiming(&cfg)
	require.NoError(t, err)
	assert.Less(t, clk2.model.stepMs(StepShape{DecodeSeqs: 1, DecodeContext: 1000}), dec)
}

func TestTableInterpolation(t *testing.T) {
	csv := "# measured\ndecode_seqs,prefill_tokens,step_ms\n1,0,10\n8,0,12\n1,1000,50\n8,1000,60\n"
	tab, err := ReadTable(strings.NewReader(csv))
	require.NoError(t, err)
	assert.Equal(t, 10.0, tab.At(0, 1))
	assert.Equal(t, 60.0, tab.At(1000, 8))
	assert.InDelta(t, 30.0, tab.At(500, 1), 1e-12)   // halfway in prefill
	assert.InDelta(t, 11.0, tab.At(0, 4.5), 1e-12)   // halfway in decode
	assert.InDelta(t, 90.0, tab.At(2000, 1), 1e-12)  // extrapolated
	assert.InDelta(t, 0.0, tab.At(-1000, 1), 1e-12)  // clamped at 0
	assert.InDelta(t, 33.0, tab.At(500, 4.5), 1e-12) // bilinear: (11 + 55)/2
}

func TestTableErrors(t *testing.T) {
	for _, tc := range []struct{ csv, want string }{
		{"prefill,decode_seqs,step_ms\n", `unknown column "prefill"`},
		{"prefill_tokens,decode_seqs,decode_seqs\n", "once each"},
		{"prefill_tokens,decode_seqs,step_ms\n0,1,x\n", "line 2: column step_ms"},
		{"prefill_tokens,decode_seqs,step_ms\n0,1,5\n10,2,6\n", "not a full grid"},
		{"prefill_tokens,decode_seqs,step_ms\n0,1,5\n0,1,6\n0,2,5\n10,1,5\n10,2,5\n", "not a full grid"},
		{"prefill_tokens,decode_seqs,step_ms\n0,1,5\n0,1,6\n0,2,5\n10,2,5\n", "duplicate grid point prefill_tokens=0 decode_seqs=1"},
		{"prefill_tokens,decode_seqs,step_ms\n", "no rows"},
		{"prefill_tokens,decode_seqs,step_ms\n0,1\n", "wrong number of fields"},
		// one row, or one value on an axis, is no grid: it extrapolated a constant
		{"prefill_tokens,decode_seqs,step_ms\n0,1,7\n", "not a grid: 1 prefill_tokens value(s) × 1 decode_seqs value(s); want at least 2 of each"},
		{"prefill_tokens,decode_seqs,step_ms\n0,1,7\n0,8,9\n", "not a grid: 1 prefill_tokens value(s) × 2 decode_seqs value(s)"},
	} {
		_, err := ReadTable(strings.NewReader(tc.csv))
		require.Error(t, err, tc.csv)
		assert.Contains(t, err.Error(), tc.want)
	}
	cfg := defaultConfig()
	cfg.Timing.Model, cfg.Timing.Table.File = "table", filepath.Join(t.TempDir(), "none.csv")
	_, err := newTiming(&cfg)
	assert.ErrorContains(t, err, "timing.table.file:")

	path := filepath.Join(t.TempDir(), "t.csv")
	require.NoError(t, os.WriteFile(path, []byte("prefill_tokens,decode_seqs,step_ms\n0,1,5\n0,2,5\n100,1,5\n100,2,5\n"), 0o644))
	cfg.Timing.Table.File = path
	clk, err := newTiming(&cfg)
	require.NoError(t, err)
	assert.Equal(t, int64(5_000_000), clk.StepNs(StepShape{DecodeSeqs: 1}))
}

// Every name TimingModels gives is a model newTiming builds, and the
// validator takes exactly those names.
func TestTimingModelsAreTheModelsBuilt(t *testing.T) {
	for _, name := range TimingModels() {
		t.Run(name, func(t *testing.T) {
			cfg := defaultConfig()
			cfg.Timing.Model = name
			cfg.Timing.Table.File = "testdata/does-not-exist.csv"
			_, err := newTiming(&cfg)
			if err != nil {
				assert.NotContains(t, err.Error(), "unknown model")
			}
			if err := cfg.Validate(); err != nil {
				assert.NotContains(t, err.Error(), "timing.model:")
			}
		})
	}
	cfg := defaultConfig()
	cfg.Timing.Model = "cubic"
	assert.ErrorContains(t, cfg.Validate(), "timing.model: must be one of poly, linear, roofline, physics, table")
}

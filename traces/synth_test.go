package traces

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func gaps(wl *Workload) []float64 {
	var out []float64
	var prev float64
	first := true
	for _, r := range wl.Requests {
		if !r.HasTimestamp {
			continue
		}
		if !first {
			out = append(out, r.TimestampMs-prev)
		}
		prev, first = r.TimestampMs, false
	}
	return out
}

func meanStd(xs []float64) (mean, std float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		std += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(std / float64(len(xs)))
}

func TestSynthesizeDeterministic(t *testing.T) {
	spec := SynthSpec{Rate: 10, RequestCount: 500, ISL: 2000, ISLStddev: 800, OSL: 100, OSLStddev: 50, SharedPrefixTokens: 512, Seed: 42}
	a, err := Synthesize(spec)
	require.NoError(t, err)
	b, err := Synthesize(spec)
	require.NoError(t, err)
	assert.Equal(t, a, b)
	spec.Seed = 43
	c, err := Synthesize(spec)
	require.NoError(t, err)
	assert.NotEqual(t, a.Digest, c.Digest)
	assert.Equal(t, "synthetic:poisson rate=10 cap=0 requests=500 warmup=0 isl=2000±800 osl=100±50 shared_prefix=512x1 block=512 turns=1 delay=0ms seed=42", a.Source)
}

func TestSynthesizeConcurrencyMode(t *testing.T) {
	wl, err := Synthesize(SynthSpec{Concurrency: 8, RequestCount: 20, WarmupCount: 3, ISL: 100, OSL: 10})
	require.NoError(t, err)
	require.Len(t, wl.Requests, 23)
	assert.Equal(t, 8, wl.Concurrency)
	assert.Equal(t, 512, wl.BlockSize)
	for i, r := range wl.Requests {
		assert.False(t, r.HasTimestamp)
		assert.Equal(t, i < 3, r.Warmup, "request %d", i)
		assert.Equal(t, i, r.Row)
		assert.Equal(t, 100, r.InputLength)
		assert.Equal(t, 10, r.OutputLength)
		assert.Len(t, r.HashIDs, 1)
	}
	assert.Equal(t, "synthetic:concurrency concurrency=8 requests=20 warmup=3 isl=100±0 osl=10±0 shared_prefix=0x1 block=512 turns=1 delay=0ms seed=0", wl.Source)
}

func TestSynthesizeArrivals(t *testing.T) {
	const n, rate = 10000, 50.0 // mean gap 20 ms
	tests := []struct {
		name   string
		spec   SynthSpec
		wantCV float64 // coefficient of variation of the gaps
	}{
		{"constant", SynthSpec{Mode: ModeConstant}, 0},
		{"poisson", SynthSpec{Mode: ModePoisson}, 1},
		{"poisson-span", SynthSpec{Mode: ModePoissonSpan}, 1},
		{"gamma k=4", SynthSpec{Mode: ModeGamma, GammaShape: 4}, 0.5},
		{"gamma k=0.25", SynthSpec{Mode: ModeGamma, GammaShape: 0.25}, 2},
		{"gamma k=1 is poisson", SynthSpec{Mode: ModeGamma, GammaShape: 1}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.spec
			s.Rate, s.RequestCount, s.ISL, s.OSL, s.Seed, s.Concurrency = rate, n, 10, 10, 1, 64
			wl, err := Synthesize(s)
			require.NoError(t, err)
			assert.Equal(t, 64, wl.Concurrency, "a cap in rate modes")
			assert.Equal(t, 0.0, wl.Requests[0].TimestampMs)
			g := gaps(wl)
			require.Len(t, g, n-1)
			mean, std := meanStd(g)
			assert.InEpsilon(t, 1000/rate, mean, 0.05, "mean gap")
			assert.InDelta(t, tt.wantCV, std/mean, 0.1*tt.wantCV+1e-9, "coefficient of variation")
		})
	}
}

// TestSynthesizePoissonSpan: each phase's sessions start at times that
// span the phase's count over the rate, less the first gap (inference-perf's
// constant load timer), counted from the phase's first session; the same
// seed gives the same times.
func TestSynthesizePoissonSpan(t *testing.T) {
	spec := SynthSpec{Mode: ModePoissonSpan, Rate: 5, WarmupCount: 40, RequestCount: 150, Turns: 3, ISL: 10, OSL: 10, Seed: 7}
	wl, err := Synthesize(spec)
	require.NoError(t, err)
	phases := map[bool][]float64{}
	for _, r := range wl.Requests {
		if r.HasTimestamp {
			phases[r.Warmup] = append(phases[r.Warmup], r.TimestampMs)
		}
	}
	for warmup, sessions := range map[bool]int{true: 14, false: 50} { // ⌈40/3⌉, ⌈150/3⌉
		ts := phases[warmup]
		require.Len(t, ts, sessions, "warmup %v", warmup)
		span := float64(sessions) * 1000 / spec.Rate
		assert.Equal(t, 0.0, ts[0], "warmup %v: the phase counts from its first session", warmup)
		assert.True(t, sort.Float64sAreSorted(ts), "warmup %v", warmup)
		assert.Less(t, ts[len(ts)-1], span, "warmup %v: the first gap precedes the first session", warmup)
		assert.Greater(t, ts[len(ts)-1], 0.5*span, "warmup %v", warmup)
	}
	again, err := Synthesize(spec)
	require.NoError(t, err)
	assert.Equal(t, wl.Requests, again.Requests)
	spec.Seed = 8
	other, err := Synthesize(spec)
	require.NoError(t, err)
	assert.NotEqual(t, wl.Requests[3].TimestampMs, other.Requests[3].TimestampMs, "the second session's start")
	assert.Contains(t, wl.Source, "synthetic:poisson-span rate=5 ")
}

func TestGammaSampleMoments(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, pcgStream))
	for _, k := range []float64{0.3, 1, 2.5, 9} {
		xs := make([]float64, 20000)
		for i := range xs {
			xs[i] = gammaSample(rng, k)
		}
		mean, std := meanStd(xs)
		assert.InEpsilon(t, k, mean, 0.05, "mean for k=%v", k)
		assert.InEpsilon(t, math.Sqrt(k), std, 0.07, "std for k=%v", k)
	}
}

func TestSynthesizeLengths(t *testing.T) {
	wl, err := Synthesize(SynthSpec{Concurrency: 1, RequestCount: 10000, ISL: 3000, ISLStddev: 1000, OSL: 200, OSLStddev: 300, Seed: 5})
	require.NoError(t, err)
	var isl, osl []float64
	for _, r := range wl.Requests {
		isl = append(isl, float64(r.InputLength))
		osl = append(osl, float64(r.OutputLength))
		require.GreaterOrEqual(t, r.OutputLength, 1)
		require.True(t, hashIDsConsistent(r.InputLength, len(r.HashIDs), 512))
		require.Len(t, r.HashIDs, blocksFor(r.InputLength, 512))
	}
	m, s := meanStd(isl)
	assert.InEpsilon(t, 3000, m, 0.03)
	assert.InEpsilon(t, 1000, s, 0.05)
	assert.Equal(t, 1.0, distOf(osl).Min, "clamped to >= 1")
}

// TestSynthesizeLengthRanges: a range clips the normal draws to [min,
// max] (inference-perf's lengths), so the bounds gather what lies beyond
// them; without one the same seed draws past them.
func TestSynthesizeLengthRanges(t *testing.T) {
	spec := SynthSpec{Concurrency: 1, RequestCount: 2000, ISL: 2048, ISLStddev: 40, OSL: 512, OSLStddev: 20, Seed: 9}
	free, err := Synthesize(spec)
	require.NoError(t, err)
	spec.ISLRange, spec.OSLRange = [2]int{2000, 2100}, [2]int{480, 550}
	clipped, err := Synthesize(spec)
	require.NoError(t, err)
	var outside, atBound int
	for i, r := range clipped.Requests {
		f := free.Requests[i]
		require.GreaterOrEqual(t, r.InputLength, 2000)
		require.LessOrEqual(t, r.InputLength, 2100)
		require.GreaterOrEqual(t, r.OutputLength, 480)
		require.LessOrEqual(t, r.OutputLength, 550)
		if f.OutputLength < 480 || f.OutputLength > 550 {
			outside++
			assert.Contains(t, []int{480, 550}, r.OutputLength, "a draw beyond the range lands on its bound")
		}
		if r.InputLength == 2000 || r.InputLength == 2100 {
			atBound++
		}
	}
	assert.Greater(t, outside, 10, "512 ± 20 falls below 480 in about 5 %% of draws")
	assert.Greater(t, atBound, 10)
	assert.Contains(t, clipped.Source, "isl_range=2000..2100 osl_range=480..550")
	assert.NotContains(t, free.Source, "range")
}

func TestSynthesizeSharedPrefix(t *testing.T) {
	wl, err := Synthesize(SynthSpec{Concurrency: 1, RequestCount: 6, ISL: 1500, OSL: 1, SharedPrefixTokens: 1024, NumPrefixGroups: 2, BlockSize: 256})
	require.NoError(t, err)
	// 1024/256 = 4 shared blocks per group; 1500 tokens = 6 blocks (5 full + 220).
	// Group 0 ids 0-3, group 1 ids 4-7, unique ids from 8.
	want := [][]int64{
		{0, 1, 2, 3, 8, 9}, {4, 5, 6, 7, 10, 11}, {0, 1, 2, 3, 12, 13},
		{4, 5, 6, 7, 14, 15}, {0, 1, 2, 3, 16, 17}, {4, 5, 6, 7, 18, 19},
	}
	for i, r := range wl.Requests {
		assert.Equal(t, want[i], r.HashIDs)
	}
	assert.InDelta(t, 4*1024.0/(6*1500), Describe(wl).PrefixReuseRatio, 1e-12)
}

func TestSynthesizeShortRequestSharesOnlyFullBlocks(t *testing.T) {
	wl, err := Synthesize(SynthSpec{Concurrency: 1, RequestCount: 1, ISL: 700, OSL: 1, SharedPrefixTokens: 1536})
	require.NoError(t, err)
	assert.Equal(t, []int64{0, 3}, wl.Requests[0].HashIDs)
}

func TestSynthesizeMultiTurn(t *testing.T) {
	wl, err := Synthesize(SynthSpec{Mode: ModeConstant, Rate: 2, RequestCount: 7, WarmupCount: 2, ISL: 600, OSL: 5, Turns: 3, TurnDelayMs: 250})
	require.NoError(t, err)
	type turn struct {
		session string
		turn    int
		warmup  bool
		ts      float64
		hasTs   bool
		delay   float64
		isl     int
		ids     []int64
	}
	var got []turn
	for _, r := range wl.Requests {
		got = append(got, turn{r.SessionID, r.Turn, r.Warmup, r.TimestampMs, r.HasTimestamp, r.DelayMs, r.InputLength, r.HashIDs})
	}
	assert.Equal(t, []turn{
		{"s0", 0, true, 0, true, 0, 600, []int64{0, 1}},
		{"s0", 1, true, 0, false, 250, 1200, []int64{0, 2, 3}},
		{"s1", 0, false, 500, true, 0, 600, []int64{4, 5}},
		{"s1", 1, false, 0, false, 250, 1200, []int64{4, 6, 7}},
		{"s1", 2, false, 0, false, 250, 1800, []int64{4, 6, 8, 9}},
		{"s2", 0, false, 1000, true, 0, 600, []int64{10, 11}},
		{"s2", 1, false, 0, false, 250, 1200, []int64{10, 12, 13}},
		{"s2", 2, false, 0, false, 250, 1800, []int64{10, 12, 14, 15}},
		{"s3", 0, false, 1500, true, 0, 600, []int64{16, 17}},
	}, got)
	assertRoundTrip(t, wl)
}

func TestSynthesizeErrors(t *testing.T) {
	ok := SynthSpec{Concurrency: 1, RequestCount: 1, ISL: 1, OSL: 1}
	tests := []struct {
		name string
		edit func(*SynthSpec)
		want string
	}{
		{"no load", func(s *SynthSpec) { s.Concurrency = 0 }, "--concurrency must be > 0 in concurrency mode, got 0"},
		{"too many in flight", func(s *SynthSpec) { s.Concurrency = 1_000_000_000 }, "--concurrency must be at most 65536 requests in flight, got 1000000000"},
		{"cap too high", func(s *SynthSpec) { s.Mode, s.Rate, s.Concurrency = ModePoisson, 1, 65537 }, "--concurrency must be at most 65536 requests in flight, got 65537"},
		{"bad mode", func(s *SynthSpec) { s.Mode = "burst" }, `--arrival-pattern must be constant, poisson or gamma (or mode concurrency), got "burst"`},
		{"rate in concurrency mode", func(s *SynthSpec) { s.Mode, s.Rate = ModeConcurrency, 3 }, "--request-rate (3) is not used in concurrency mode; use --arrival-pattern"},
		{"no rate", func(s *SynthSpec) { s.Mode = ModePoisson }, "--request-rate must be > 0 for --arrival-pattern poisson, got 0"},
		{"infinite rate", func(s *SynthSpec) { s.Mode, s.Rate = ModeConstant, math.Inf(1) }, "--request-rate must be > 0 for --arrival-pattern constant, got +Inf"},
		{"negative shape", func(s *SynthSpec) { s.Mode, s.Rate, s.GammaShape = ModeGamma, 1, -2 }, "--gamma-shape must be > 0, got -2"},
		{"no requests", func(s *SynthSpec) { s.RequestCount = 0 }, "--request-count must be > 0, got 0"},
		{"negative warmup", func(s *SynthSpec) { s.WarmupCount = -1 }, "--warmup-request-count must be >= 0, got -1"},
		{"too many", func(s *SynthSpec) { s.RequestCount = 20_000_000 }, "at most 10000000 requests (--request-count + --warmup-request-count)"},
		{"isl", func(s *SynthSpec) { s.ISL = 0 }, "--isl must be in [1, 16777216], got 0"},
		{"osl", func(s *SynthSpec) { s.OSL = -1 }, "--osl must be in [1, 16777216], got -1"},
		{"isl stddev", func(s *SynthSpec) { s.ISLStddev = -1 }, "--isl-stddev must be >= 0, got -1"},
		{"isl range", func(s *SynthSpec) { s.ISLRange = [2]int{10, 5} }, "the input length range must be 1 <= min <= max, got 10..5"},
		{"osl range", func(s *SynthSpec) { s.OSLRange = [2]int{0, 5} }, "the output length range must be 1 <= min <= max, got 0..5"},
		{"block size", func(s *SynthSpec) { s.BlockSize = -1 }, "--hash-block-size must be > 0, got -1"},
		{"prefix not whole blocks", func(s *SynthSpec) { s.SharedPrefixTokens = 100 }, "--shared-prefix-tokens (100) must be a multiple of --hash-block-size (512): only whole blocks can be shared"},
		{"groups", func(s *SynthSpec) { s.NumPrefixGroups = -1 }, "--num-prefix-groups must be > 0, got -1"},
		{"turns", func(s *SynthSpec) { s.Turns = -1 }, "--turns must be > 0, got -1"},
		{"turn delay", func(s *SynthSpec) { s.TurnDelayMs = -1 }, "--turn-delay-ms must be a finite number >= 0, got -1"},
		{"several at once", func(s *SynthSpec) { s.ISL, s.OSL = 0, 0 }, "--isl must be in [1, 16777216], got 0\n--osl must be in [1, 16777216], got 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := ok
			tt.edit(&s)
			_, err := Synthesize(s)
			require.EqualError(t, err, "synthesize: "+tt.want)
		})
	}
}

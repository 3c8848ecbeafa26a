package sim

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/servermetrics"
	"github.com/simbench/simbench/traces"
)

// specCfg is the default H100 / Llama-3.1-8B worker with speculative
// decoding of k tokens at acceptance rates, and no frontend overhead.
func specCfg(method string, k int, rates ...float64) Config {
	cfg := DefaultConfig()
	cfg.Frontend.RequestOverheadMs = 0
	cfg.Engine.SpeculativeConfig = &SpeculativeConfig{Method: method, NumSpeculativeTokens: k, AcceptanceRate: rates}
	return cfg
}

func TestSpecConfigParse(t *testing.T) {
	cfg, err := ParseConfig([]byte("engine:\n  speculative_config:\n    method: eagle3\n    num_speculative_tokens: 3\n    acceptance_rate: 0.7\n"))
	require.NoError(t, err)
	require.NoError(t, cfg.Validate())
	assert.Equal(t, AcceptanceRate{0.7}, cfg.Engine.SpeculativeConfig.AcceptanceRate)
	assert.Equal(t, []float64{0.7, 0.7, 0.7}, cfg.Engine.SpeculativeConfig.Rates())

	cfg, err = ParseConfig([]byte("engine:\n  speculative_config:\n    method: mtp\n    num_speculative_tokens: 2\n    acceptance_rate: [0.9, 0.6]\n"))
	require.NoError(t, err)
	require.NoError(t, cfg.Validate())
	assert.Equal(t, []float64{0.9, 0.6}, cfg.Engine.SpeculativeConfig.Rates())

	cfg, err = ParseConfig([]byte("engine:\n  speculative_config:\n    method: ngram\n    num_speculative_tokens: 2\n"))
	require.NoError(t, err)
	require.NoError(t, cfg.Validate())
	assert.Equal(t, []float64{defaultAcceptance[SpecNgram], defaultAcceptance[SpecNgram]}, cfg.Engine.SpeculativeConfig.Rates())

	// Printed and read back, the configuration is the same.
	cfg = specCfg(SpecDraftModel, 4, 0.8)
	cfg.Engine.SpeculativeConfig.Model = "llama-3.1-8b"
	y, err := cfg.YAML()
	require.NoError(t, err)
	back, err := ParseConfig(y)
	require.NoError(t, err)
	assert.Equal(t, cfg.Engine.SpeculativeConfig, back.Engine.SpeculativeConfig)

	_, err = ParseConfig([]byte("engine:\n  speculative_config:\n    method: eagle\n    num_speculative_token: 3\n"))
	require.ErrorContains(t, err, `line 4: unknown key "engine.speculative_config.num_speculative_token"`)
}

func TestSpecConfigValidate(t *testing.T) {
	cases := []struct {
		name string
		edit func(c *Config)
		want string
	}{
		{"method", func(c *Config) { c.Engine.SpeculativeConfig.Method = "medusa" }, "engine.speculative_config.method: must be one of eagle, eagle3, mtp, ngram, draft_model"},
		{"k 0", func(c *Config) { c.Engine.SpeculativeConfig.NumSpeculativeTokens = 0 }, "engine.speculative_config.num_speculative_tokens: must be in [1, 16], got 0"},
		{"rates length", func(c *Config) { c.Engine.SpeculativeConfig.AcceptanceRate = AcceptanceRate{0.9, 0.8} },
			"engine.speculative_config.acceptance_rate: 2 rates, want one or num_speculative_tokens (4)"},
		{"rate above 1", func(c *Config) { c.Engine.SpeculativeConfig.AcceptanceRate = AcceptanceRate{1.5} },
			"engine.speculative_config.acceptance_rate[0]: must be in [0, 1], got 1.5"},
		{"rate NaN", func(c *Config) { c.Engine.SpeculativeConfig.AcceptanceRate = AcceptanceRate{math.NaN()} },
			"engine.speculative_config.acceptance_rate[0]: must be in [0, 1]"},
		{"sglang", func(c *Config) { c.Engine.Type = "sglang" }, `engine.speculative_config: modelled on vllm's scheduler; engine.type is "sglang"`},
		{"linear", func(c *Config) { c.Timing.Model = "linear"; c.Timing.Linear.BaseMs = 1 }, `timing.model is "linear", want physics or roofline`},
		{"draft without model", func(c *Config) { c.Engine.SpeculativeConfig.Method = SpecDraftModel }, "engine.speculative_config.model: draft_model needs the drafter"},
		{"eagle with model", func(c *Config) { c.Engine.SpeculativeConfig.Model = "llama-3.1-8b" }, "engine.speculative_config.model: only draft_model has a model of its own"},
		{"unknown drafter", func(c *Config) {
			c.Engine.SpeculativeConfig.Method, c.Engine.SpeculativeConfig.Model = SpecDraftModel, "llama-0b"
		}, `engine.speculative_config (the draft model's model, custom_model, model_config): hardware.model: unknown model "llama-0b"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := specCfg(SpecEagle3, 4)
			tc.edit(&cfg)
			require.ErrorContains(t, cfg.Validate(), tc.want)
		})
	}
}

// A draft model's weights and KV share the GPU: fewer KV blocks than
// with an n-gram drafter, which has none.
func TestSpecDrafterMemory(t *testing.T) {
	ngram, err := specCfg(SpecNgram, 4).KVBlocks()
	require.NoError(t, err)
	plain, err := DefaultConfig().KVBlocks()
	require.NoError(t, err)
	assert.Equal(t, plain, ngram)
	eagle, err := specCfg(SpecEagle, 4).KVBlocks()
	require.NoError(t, err)
	assert.Less(t, eagle, plain)
	dm := specCfg(SpecDraftModel, 4)
	dm.Engine.SpeculativeConfig.CustomModel = &ModelSpec{Layers: 16, Hidden: 2048, Heads: 32, KVHeads: 8, Intermediate: 8192, Vocab: 128256}
	draft, err := dm.KVBlocks()
	require.NoError(t, err)
	assert.Less(t, draft, eagle)
}

// tokensPerStep is the mean tokens of the records' chunks after the
// first (the first is the prompt's step).
func tokensPerStep(recs []*results.Record) (float64, int) {
	tokens, chunks := 0, 0
	for _, r := range recs {
		for _, c := range r.Chunks[1:] {
			tokens += c.Tokens
			chunks++
		}
	}
	return float64(tokens) / float64(chunks), chunks
}

func longRequests(n, isl, osl int) *traces.Workload {
	reqs := make([]traces.Request, n)
	for i := range reqs {
		reqs[i] = req(float64(i)*10, isl, osl)
	}
	return workload(reqs...)
}

// With a per-position acceptance a and k drafts, a decoding sequence
// emits (1 − a^(k+1))/(1 − a) tokens a step on average; per-position
// rates give 1 + Σ Π. The simulated mean over many steps is within 1 %.
func TestSpecMeanTokensPerStep(t *testing.T) {
	cases := []struct {
		k     int
		rates []float64
	}{
		{4, []float64{0.7}},
		{2, []float64{0.5}},
		{6, []float64{0.85}},
		{3, []float64{0.9, 0.7, 0.4}},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.k, tc.rates), func(t *testing.T) {
			cfg := specCfg(SpecEagle, tc.k, tc.rates...)
			recs, sum := runAll(t, cfg, longRequests(8, 200, 8000))
			want := ExpectedTokensPerStep(cfg.Engine.SpeculativeConfig.Rates())
			if len(tc.rates) == 1 {
				a := tc.rates[0]
				assert.InDelta(t, (1-math.Pow(a, float64(tc.k+1)))/(1-a), want, 1e-12)
			}
			got, steps := tokensPerStep(recs)
			assert.Greater(t, steps, 10000)
			assert.InEpsilon(t, want, got, 0.01, "tokens per step over %d steps", steps)
			sp := sum.Speculative
			require.NotNil(t, sp)
			assert.InEpsilon(t, want, sp.MeanAcceptedLength, 0.01)
			for i, a := range cfg.Engine.SpeculativeConfig.Rates() {
				if i > 0 {
					a *= sp.PerPosition[i-1] // conditional on the positions before
				}
				assert.InDelta(t, a, sp.PerPosition[i], 0.02, "position %d", i)
			}
		})
	}
}

// One decoding sequence alone: every step after the prompt's verifies k
// drafts, all accepted, and its chunk of k + 1 tokens comes one step
// (the target's verification and the drafter's passes) after the last;
// the request's ITL is the step time / (k + 1).
func TestSpecSingleSequenceITL(t *testing.T) {
	const k, steps, isl = 3, 50, 300
	for _, method := range []string{SpecEagle, SpecNgram} {
		t.Run(method, func(t *testing.T) {
			cfg := specCfg(method, k, 1)
			wl := workload(req(0, isl, 1+(k+1)*steps))
			recs, _ := runAll(t, cfg, wl)
			r := recs[0]
			require.Len(t, r.Chunks, 1+steps)
			s, err := newSimulator(cfg, wl, nil, nil)
			require.NoError(t, err)
			p := s.pools[0]
			var total int64
			for j, c := range r.Chunks[1:] {
				assert.Equal(t, k+1, c.Tokens)
				ctx := int64(isl + 1 + j*(k+1)) // the known tokens at the step's start
				shape := StepShape{DecodeSeqs: 1, DecodeContext: ctx, SpecTokens: k, SpecAttn: k*ctx + k*(k+1)/2,
					KVCapacity: s.workers[0].kvCap, MaxContext: ctx + 1 + k}
				stepNs := p.clock.StepNs(shape) + p.spec.draftNs(shape, 1, ctx, k)
				assert.Equal(t, stepNs, c.AtNs-r.Chunks[j].AtNs, "step %d", j)
				total += stepNs
			}
			itl := float64(r.EndNs-r.Chunks[0].AtNs) / float64(r.OutputTokens-1)
			assert.InDelta(t, float64(total)/steps/(k+1), itl, 1e-6)
			plain := DefaultConfig()
			plain.Frontend.RequestOverheadMs = 0
			base, _ := runAll(t, plain, wl)
			assert.Less(t, itl, float64(base[0].EndNs-base[0].Chunks[0].AtNs)/float64(r.OutputTokens-1),
				"all drafts accepted: faster than one token a step")
		})
	}
}

// noSpecLeak checks, after every step end, that every running request
// holds the blocks of its computed tokens and no more (rejected drafts'
// KV freed), besides the engines' own accounting.
func noSpecLeak(t *testing.T) Option {
	return withHook(func(s *simulator) {
		for _, w := range s.workers {
			if msg := stepViolation(s, w); msg != "" {
				t.Fatalf("%s at %d ns: %s", w.name, s.now, msg)
			}
			if w.busy {
				continue
			}
			for _, r := range w.running {
				if r.blocks() != ceilDiv(r.computed, w.bs) {
					t.Fatalf("%s at %d ns: a request holds %d blocks for %d computed tokens", w.name, s.now, r.blocks(), r.computed)
				}
			}
		}
	})
}

// runChecked simulates wl under noSpecLeak and returns the simulator (its
// workers' state at the end), the records by workload index and the
// summary.
func runChecked(t *testing.T, cfg Config, wl *traces.Workload) (*simulator, []*results.Record, *Summary) {
	t.Helper()
	s, err := newSimulator(cfg, wl, nil, []Option{noSpecLeak(t)})
	require.NoError(t, err)
	recs := make([]*results.Record, len(wl.Requests))
	s.sink = func(r *results.Record) error { recs[r.TraceRow] = r; return nil }
	sum, err := s.run(t.Context())
	require.NoError(t, err)
	return s, recs, sum
}

// KV is conserved with rejections, under preemption, chunked prefill and
// prefix caching: no request holds blocks past its computed tokens
// between steps, every block is released at the end, every request
// gets its tokens, and the counters add up.
func TestSpecKVConservation(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			wl := randomWorkload(seed, 120, seed%2 == 0)
			cfg := specCfg(SpecEagle3, 1+int(seed), 0.6)
			cfg.Seed = int64(seed)
			cfg.Workers = 1 + int(seed%2)
			cfg.Engine.BlockSize = 16
			cfg.Engine.NumGPUBlocks = 140
			cfg.Engine.MaxNumBatchedTokens = 512
			cfg.Engine.MaxNumSeqs = 8
			cfg.Engine.Preemption = []string{"lifo", "fifo"}[seed%2]
			s, recs, sum := runChecked(t, cfg, wl)
			assert.Positive(t, sum.Preemptions, "the test means to preempt")
			for _, w := range s.workers {
				assert.Zero(t, w.kv.held, w.name)
				assert.True(t, w.kv.check(), w.name)
			}
			multi := 0
			for i, r := range recs {
				require.NotNil(t, r)
				if r.Error != nil {
					continue
				}
				n := 0
				for _, c := range r.Chunks {
					n += c.Tokens
					if c.Tokens > 1 {
						multi++
					}
				}
				assert.Equal(t, wl.Requests[i].OutputLength, n)
				assert.Equal(t, n, r.OutputTokens)
			}
			assert.Positive(t, multi)
			sp := sum.Speculative
			require.NotNil(t, sp)
			assert.LessOrEqual(t, sp.AcceptedTokens, sp.DraftTokens)
			assert.LessOrEqual(t, sp.DraftTokens, sp.Drafts*int64(cfg.Engine.SpeculativeConfig.NumSpeculativeTokens))
			for i := 1; i < len(sp.PerPosition); i++ {
				assert.LessOrEqual(t, sp.PerPosition[i], sp.PerPosition[i-1])
			}
		})
	}
}

// A seed gives the same run; another seed other acceptance draws.
func TestSpecDeterministic(t *testing.T) {
	wl := randomWorkload(7, 80, false)
	cfg := specCfg(SpecMTP, 3, 0.8)
	cfg.Workers = 2
	a, sa := runAll(t, cfg, wl)
	b, sb := runAll(t, cfg, wl)
	require.Equal(t, a, b)
	require.Equal(t, sa, sb)
	cfg.Seed = 9
	c, sc := runAll(t, cfg, wl)
	assert.NotEqual(t, sa.Speculative.AcceptedTokens, sc.Speculative.AcceptedTokens)
	differ := false
	for i := range a {
		differ = differ || len(a[i].Chunks) != len(c[i].Chunks)
	}
	assert.True(t, differ)
}

// The simulated vLLM worker exposes the spec-decode families, and they
// add up to the summary's counts.
func TestSpecServerMetrics(t *testing.T) {
	cfg := specCfg(SpecEagle3, 4, 0.7)
	cfg.ServerMetrics.IntervalMs = 50
	_, sum, _, e := runMetrics(t, cfg, longRequests(6, 500, 300))
	sp := sum.Speculative
	require.NotNil(t, sp)
	assert.Equal(t, float64(sp.Drafts), counterTotal(e, "vllm:spec_decode_num_drafts"))
	assert.Equal(t, float64(sp.DraftTokens), counterTotal(e, "vllm:spec_decode_num_draft_tokens"))
	assert.Equal(t, float64(sp.AcceptedTokens), counterTotal(e, "vllm:spec_decode_num_accepted_tokens"))
	m, ok := e.Metrics["vllm:spec_decode_num_accepted_tokens_per_pos"]
	require.True(t, ok)
	require.Len(t, m.Series, 4)
	var perPos float64
	for i := range m.Series {
		v, _ := m.Series[i].Stat("total")
		perPos += v
	}
	assert.Equal(t, float64(sp.AcceptedTokens), perPos)
	// compare's common metrics derive the summary's ratios from them.
	got := map[string]float64{}
	for _, m := range servermetrics.CommonMetrics(e) {
		got[m.Name], _ = m.Stats.Get("avg")
	}
	assert.InDelta(t, sp.AcceptanceRate, got[servermetrics.SpecAcceptanceRate], 1e-12)
	assert.InDelta(t, sp.MeanAcceptedLength, got[servermetrics.SpecMeanAcceptedLength], 1e-12)
	// Off, the families are absent.
	_, _, _, off := runMetrics(t, metricsCfg("vllm", 1), longRequests(2, 100, 20))
	assert.NotContains(t, off.Metrics, "vllm:spec_decode_num_drafts")
}

// sim's text report and sim_summary.json give the acceptance; without
// speculative decoding neither mentions it.
func TestSpecReported(t *testing.T) {
	wl := longRequests(3, 200, 100)
	for _, on := range []bool{true, false} {
		cfg := specCfg(SpecEagle3, 4, 0.7)
		if !on {
			cfg.Engine.SpeculativeConfig = nil
		}
		files, text, b := writeRunReport(t, cfg, wl)
		agg, hasAgg := files.Profile.SpecDecode()
		tpc, _ := files.Profile.Value(results.TagTokensPerChunk, "avg")
		if on {
			assert.Contains(t, text, "speculative decoding eagle3, 4 draft tokens: acceptance rate ")
			assert.Contains(t, string(b), `"mean_accepted_length"`)
			// The aggregate's simbench section has the same values, read
			// from the workers' registries as a real run's from its server.
			require.True(t, hasAgg)
			sp := files.Summary.Speculative
			assert.Equal(t, float64(sp.Drafts), agg.Drafts)
			assert.InDelta(t, sp.AcceptanceRate, agg.AcceptanceRate(), 1e-12)
			assert.InDelta(t, sp.MeanAcceptedLength, agg.MeanAcceptedLength(), 1e-12)
			assert.InDeltaSlice(t, sp.PerPosition, agg.PositionRates(), 1e-12)
			assert.Greater(t, tpc, 1.5, "accepted drafts arrive in multi-token chunks")
		} else {
			assert.NotContains(t, text, "speculative")
			assert.NotContains(t, string(b), "speculative")
			assert.False(t, hasAgg)
			assert.Equal(t, 1.0, tpc)
		}
	}
}

// Under disaggregation the decode workers draft; the prefill workers
// compute prompts only, and a request's first token (its decode worker's
// first step) is one token.
func TestSpecDisaggregated(t *testing.T) {
	cfg := specCfg(SpecEagle, 3, 0.7)
	cfg.Disaggregation = DefaultDisaggregation()
	cfg.Disaggregation.PrefillWorkers, cfg.Disaggregation.DecodeWorkers = 1, 2
	cfg.Workers = 3
	wl := randomWorkload(11, 80, false)
	s, recs, sum := runChecked(t, cfg, wl)
	for i, r := range recs {
		require.NotNil(t, r)
		require.Nil(t, r.Error)
		assert.Equal(t, 1, r.Chunks[0].Tokens, "request %d", i)
		n := 0
		for _, c := range r.Chunks {
			n += c.Tokens
		}
		assert.Equal(t, wl.Requests[i].OutputLength, n)
	}
	assert.Zero(t, s.workers[0].stats.spec.drafts, "the prefill worker drafts nothing")
	assert.Positive(t, s.workers[1].stats.spec.drafts+s.workers[2].stats.spec.drafts)
	require.NotNil(t, sum.Speculative)
	assert.Equal(t, s.workers[1].stats.spec.accepted+s.workers[2].stats.spec.accepted, sum.Speculative.AcceptedTokens)
}

// A pool's override of speculative_config is its own: the top level's
// stays as the document gives it.
func TestSpecPoolOverride(t *testing.T) {
	cfg, err := ParseConfig([]byte(`engine:
  speculative_config: {method: eagle, num_speculative_tokens: 2, acceptance_rate: 0.5}
disaggregation:
  prefill_workers: 1
  decode_workers: 1
  decode:
    engine:
      speculative_config: {num_speculative_tokens: 5, acceptance_rate: [0.9, 0.8, 0.7, 0.6, 0.5]}
`))
	require.NoError(t, err)
	require.NoError(t, cfg.Validate())
	assert.Equal(t, &SpeculativeConfig{Method: SpecEagle, NumSpeculativeTokens: 2, AcceptanceRate: AcceptanceRate{0.5}}, cfg.Engine.SpeculativeConfig)
	dec := cfg.PoolConfig(RoleDecode).Engine.SpeculativeConfig
	assert.Equal(t, &SpeculativeConfig{Method: SpecEagle, NumSpeculativeTokens: 5, AcceptanceRate: AcceptanceRate{0.9, 0.8, 0.7, 0.6, 0.5}}, dec)
	assert.Equal(t, cfg.Engine.SpeculativeConfig, cfg.PoolConfig(RolePrefill).Engine.SpeculativeConfig)
}

// writeRunReport writes cfg's run of wl as simbench sim does and returns
// its files, its text report and its sim_summary.json.
func writeRunReport(t *testing.T, cfg Config, wl *traces.Workload) (*RunFiles, string, []byte) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	files, err := WriteRun(t.Context(), dir, cfg, wl, nil)
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, files.WriteText(&buf, cfg))
	b, err := os.ReadFile(filepath.Join(dir, SummaryName))
	require.NoError(t, err)
	return files, buf.String(), b
}

package sim

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/servermetrics"
	"github.com/simbench/simbench/traces"
)

// llamaKVBytes is llama-3.1-8b's KV per token in bf16: 2 (K, V) × 32 layers
// × 8 KV heads × 128 head dim × 2 bytes.
const llamaKVBytes = 131072

// pdCfg is 1 prefill + decode workers of constCfg's vllm (steps of base ms
// + perToken ms per prompt token + decodeMs per decoding sequence), a
// transfer of bwGBs and latMs.
func pdCfg(decode int, base, perToken, decodeMs, bwGBs, latMs float64) Config {
	cfg := constCfg("vllm", base, perToken)
	cfg.Timing.Linear.DecodeSeqMs = decodeMs
	cfg.Engine.MaxNumBatchedTokens = 8192
	cfg.Disaggregation = DefaultDisaggregation()
	cfg.Disaggregation.PrefillWorkers, cfg.Disaggregation.DecodeWorkers = 1, decode
	cfg.Disaggregation.KVTransfer = KVTransferConfig{BandwidthGBs: bwGBs, LatencyMs: latMs}
	cfg.Workers = 1 + decode
	return cfg
}

func ttftNs(r *results.Record) int64 { return r.Chunks[0].AtNs - r.StartNs }

// One request, ISL 1000, OSL 5: TTFT = request overhead 2 ms + prefill
// step (1 + 1000·0.01 = 11 ms) + transfer (0.5 ms + 1000·131072 B at
// 10 GB/s = 13.1072 ms) + one decode step (1 + 0.5 ms).
func TestDisaggSingleRequestIsAnalytic(t *testing.T) {
	cfg := pdCfg(2, 1, 0.01, 0.5, 10, 0.5)
	cfg.Frontend.RequestOverheadMs = 2
	recs, sum := runAll(t, cfg, workload(req(0, 1000, 5)))
	r := recs[0]
	xfer := int64(500_000 + 1000*llamaKVBytes/10)
	assert.Equal(t, 2*ms+11*ms+xfer+1_500_000, ttftNs(r))
	assert.Equal(t, map[string]float64{StageFrontendRequest: 2, StageQueueWait: 0, StagePrefill: 11, StageBehindOther: 0,
		StageDecodeQueue: 0, StageKVTransfer: float64(xfer) / float64(ms), StageDecodeFirstStep: 1.5, StageFirstEmission: 0}, stages(r))
	assert.Equal(t, "prefill-0", r.Sim.PrefillWorker)
	assert.Equal(t, "decode-0", r.Sim.DecodeWorker)
	assert.Equal(t, "decode-0", r.Worker)
	assert.Equal(t, int64(1000*llamaKVBytes), r.Sim.KVTransferBytes)
	assert.Equal(t, Epoch+13*ms, r.Sim.KVTransferStartNs)
	assert.Equal(t, Epoch+13*ms+xfer, r.Sim.KVTransferEndNs)
	assert.Equal(t, []float64{28.1072, 29.6072, 31.1072, 32.6072, 34.1072}, roundMs(stampsMs(r)))
	require.NotNil(t, sum.Disaggregation)
	assert.Equal(t, int64(1), sum.Disaggregation.Transfers)
	assert.Equal(t, []string{"prefill", "decode", "decode"}, roles(sum))
	assert.Equal(t, int64(1000), sum.Workers[0].PrefillTokens)
	assert.Equal(t, int64(0), sum.Workers[1].PrefillTokens, "the decode worker computes no prompt token")
	assert.Equal(t, int64(5), sum.Workers[1].DecodeTokens)
}

func roundMs(v []float64) []float64 {
	for i := range v {
		v[i] = float64(int64(v[i]*1e6+0.5)) / 1e6
	}
	return v
}

func roles(sum *Summary) []string {
	var out []string
	for _, w := range sum.Workers {
		out = append(out, w.Role)
	}
	return out
}

// TTFT moves by exactly the added latency, and by the KV bytes over the
// bandwidth when the bandwidth changes.
func TestDisaggTransferSensitivity(t *testing.T) {
	wl := workload(req(0, 2000, 10), req(500, 2000, 10))
	ttft := func(bw, lat float64) []int64 {
		recs, _ := runAll(t, pdCfg(3, 1, 0.01, 0.5, bw, lat), wl)
		return []int64{ttftNs(recs[0]), ttftNs(recs[1])}
	}
	base := ttft(25, 0.05)
	slow := ttft(25, 50.05)
	narrow := ttft(5, 0.05)
	perReq := int64(2000 * llamaKVBytes)
	for i := range base {
		assert.Equal(t, 50*ms, slow[i]-base[i])
		// ⌈bytes/5⌉ − ⌈bytes/25⌉ ns
		assert.InDelta(t, float64(perReq)/5-float64(perReq)/25, float64(narrow[i]-base[i]), 1)
	}
}

// Two transfers at once on a shared link each take twice as long; without
// contention each has the whole bandwidth.
func TestDisaggContention(t *testing.T) {
	wl := workload(req(0, 1000, 3), req(0, 1000, 3))
	for _, tc := range []struct {
		contention bool
		factor     int64
	}{{false, 1}, {true, 2}} {
		cfg := pdCfg(2, 1, 0.01, 0.5, 10, 0.5)
		cfg.Disaggregation.KVTransfer.Contention = tc.contention
		recs, sum := runAll(t, cfg, wl)
		solo := int64(1000 * llamaKVBytes / 10)
		for _, r := range recs {
			assert.Equal(t, Epoch+21*ms, r.Sim.KVTransferStartNs, "both prefilled in one 21 ms step")
			assert.InDelta(t, float64(500_000+tc.factor*solo), float64(r.Sim.KVTransferEndNs-r.Sim.KVTransferStartNs), 2,
				"contention %v", tc.contention)
		}
		assert.NotEqual(t, recs[0].Sim.DecodeWorker, recs[1].Sim.DecodeWorker, "the decode router spreads them")
		assert.Equal(t, 2, sum.Disaggregation.PeakConcurrentTransfers)
	}
}

// A transfer joining a shared link mid-way slows the first one down only
// while both move: processor sharing.
func TestDisaggContentionStaggered(t *testing.T) {
	cfg := pdCfg(2, 1, 0, 0.5, 1, 0) // 1 GB/s = 1 byte/ns; a prefill step is 1 ms
	cfg.Disaggregation.KVTransfer.Contention = true
	// 100 tokens = 13,107,200 bytes = 13.1072 ms alone. B arrives 5 ms
	// later, so its transfer starts 5 ms after A's.
	recs, _ := runAll(t, cfg, workload(req(0, 100, 2), req(5, 100, 2)))
	a, b := recs[0].Sim, recs[1].Sim
	solo := int64(100 * llamaKVBytes)
	require.Equal(t, int64(5*ms), b.KVTransferStartNs-a.KVTransferStartNs)
	// A moves 5 ms alone, then shares: its rest (solo − 5 ms) takes twice as long.
	aDur := 5*ms + 2*(solo-5*ms)
	assert.InDelta(t, float64(aDur), float64(a.KVTransferEndNs-a.KVTransferStartNs), 2)
	// B moved solo − 5 ms·… : half rate until A ends, then full rate.
	shared := aDur - 5*ms
	assert.InDelta(t, float64(shared+(solo-shared/2)), float64(b.KVTransferEndNs-b.KVTransferStartNs), 2)
}

// max_local_prefill_tokens: a prompt with at most that many tokens
// uncached on its decode worker is prefilled there; a longer one remotely.
// A later turn whose prefix the decode worker holds has a short uncached
// part, so it stays local.
func TestDisaggConditionalThreshold(t *testing.T) {
	cfg := pdCfg(1, 1, 0.01, 0.5, 10, 0.05)
	cfg.Engine.EnablePrefixCaching = true
	cfg.Disaggregation.MaxLocalPrefillTokens = 100
	first := traces.Request{TimestampMs: 0, HasTimestamp: true, InputLength: 640, OutputLength: 2, HashIDs: hashIDs(1, 40)}
	turn2 := traces.Request{TimestampMs: 1000, HasTimestamp: true, InputLength: 704, OutputLength: 2, HashIDs: hashIDs(1, 44)}
	recs, sum := runAll(t, cfg, workload(req(0, 100, 2), req(100, 101, 2), first, turn2))
	assert.Empty(t, recs[0].Sim.PrefillWorker, "100 uncached tokens: local")
	assert.Equal(t, "decode-0", recs[0].Worker)
	assert.Equal(t, "prefill-0", recs[1].Sim.PrefillWorker, "101: remote")
	assert.Equal(t, "prefill-0", recs[2].Sim.PrefillWorker, "640 new tokens: remote")
	assert.Empty(t, recs[3].Sim.PrefillWorker, "the decode worker holds 640 of 704 tokens: local")
	assert.Equal(t, 640, recs[3].Sim.CachedTokens)
	assert.Equal(t, int64(2), sum.Disaggregation.LocalPrefills)
	assert.Equal(t, []string{StageFrontendRequest, StageQueueWait, StagePrefill, StageBehindOther, StageFirstEmission}, stageNames(recs[0]))
}

func hashIDs(from, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(from + i)
	}
	return out
}

func stageNames(r *results.Record) []string {
	var out []string
	for _, s := range r.Sim.TTFTBreakdown {
		out = append(out, s.Name)
	}
	return out
}

// The decode worker receives only the prompt blocks it does not hold: a
// second turn sharing 640 tokens with the first moves 64 tokens of KV.
func TestDisaggTransfersOnlyUncachedBlocks(t *testing.T) {
	cfg := pdCfg(1, 1, 0.01, 0.5, 10, 0.05)
	cfg.Engine.EnablePrefixCaching = true
	recs, _ := runAll(t, cfg, workload(
		traces.Request{TimestampMs: 0, HasTimestamp: true, InputLength: 640, OutputLength: 2, HashIDs: hashIDs(1, 40)},
		traces.Request{TimestampMs: 1000, HasTimestamp: true, InputLength: 704, OutputLength: 2, HashIDs: hashIDs(1, 44)}))
	assert.Equal(t, int64(640*llamaKVBytes), recs[0].Sim.KVTransferBytes)
	assert.Equal(t, int64(64*llamaKVBytes), recs[1].Sim.KVTransferBytes)
	assert.Equal(t, 640, recs[1].Sim.CachedTokens, "the prefill worker kept the first turn's blocks cached")
}

// A slice of the real conversation trace, always remote: every stage list
// adds up to TTFT, no decode worker computes a prompt token (nothing is
// preempted at this load), every block is released at the end, the bytes
// add up, and the same seed gives the same records.
func TestDisaggInvariantsOnTraceSlice(t *testing.T) {
	wl, _, err := traces.LoadMooncake("../testdata/e2e/conversation_slice.jsonl")
	require.NoError(t, err)
	cfg := DefaultConfig()
	cfg.Router.Policy, cfg.Seed = "kv", 3
	cfg.Disaggregation = DefaultDisaggregation()
	cfg.Disaggregation.PrefillWorkers, cfg.Disaggregation.DecodeWorkers, cfg.Workers = 1, 3, 4
	run := func() ([]byte, *Summary, *simulator) {
		var buf bytes.Buffer
		var sim *simulator
		s, err := newSimulator(cfg, wl, func(r *results.Record) error {
			m := results.ComputeMetrics(r)
			buf.Write(results.AppendJSONL(nil, &m))
			checkDisaggRecord(t, r)
			return nil
		}, nil)
		require.NoError(t, err)
		sim = s
		sum, err := s.run(context.Background())
		require.NoError(t, err)
		return buf.Bytes(), sum, sim
	}
	a, sum, s := run()
	b, _, _ := run()
	assert.Equal(t, a, b, "deterministic for a seed")
	assert.Equal(t, int64(len(wl.Requests)), sum.Disaggregation.Transfers)
	assert.Zero(t, sum.Preemptions)
	var moved int64
	for _, w := range s.workers {
		assert.Zero(t, w.kv.held, "%s holds KV after the run", w.name)
		assert.True(t, w.kv.check())
		if w.pool.role == RoleDecode {
			assert.Zero(t, w.stats.prefillTokens, "%s computed prompt tokens", w.name)
		}
	}
	ms, err := results.ReadJSONL(bytes.NewReader(a), "records")
	require.NoError(t, err)
	for _, m := range ms {
		moved += m.Ext.Sim.KVTransferBytes
	}
	assert.Equal(t, sum.Disaggregation.TransferBytes, moved)
}

func checkDisaggRecord(t *testing.T, r *results.Record) {
	t.Helper()
	var total int64
	for _, st := range r.Sim.TTFTBreakdown {
		assert.GreaterOrEqual(t, st.Ns, int64(0), "request %d stage %s", r.TraceRow, st.Name)
		total += st.Ns
	}
	assert.Equal(t, ttftNs(r), total, "request %d: stages add up to TTFT", r.TraceRow)
	require.NotEmpty(t, r.Sim.PrefillWorker)
	assert.True(t, strings.HasPrefix(r.Worker, "decode-"))
	assert.Zero(t, r.Sim.KVTransferBytes%llamaKVBytes)
	assert.LessOrEqual(t, r.Sim.KVTransferBytes, int64(r.InputTokens)*llamaKVBytes)
	assert.LessOrEqual(t, r.Sim.KVTransferEndNs, r.Chunks[0].AtNs)
	assert.LessOrEqual(t, r.Sim.PrefillEndNs, r.Sim.KVTransferStartNs)
}

func TestDisaggregationConfig(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, err string
	}{
		{"workers derived", "disaggregation: {prefill_workers: 1, decode_workers: 3}", ""},
		{"workers equal", "workers: 4\ndisaggregation: {prefill_workers: 1, decode_workers: 3}", ""},
		{"workers differ", "workers: 3\ndisaggregation: {prefill_workers: 1, decode_workers: 3}",
			"workers: 3, but disaggregation.prefill_workers 1 + decode_workers 3 = 4"},
		{"decode without prefill", "disaggregation: {decode_workers: 3}", "disaggregation.decode_workers: 3 decode workers need prefill_workers >= 1"},
		{"prefill without decode", "disaggregation: {prefill_workers: 2}", "disaggregation.decode_workers: must be >= 1"},
		{"bandwidth", "disaggregation: {prefill_workers: 1, decode_workers: 1, kv_transfer: {bandwidth_gbs: 0}}",
			"disaggregation.kv_transfer.bandwidth_gbs: must be in"},
		{"unknown pool key", "disaggregation:\n  prefill_workers: 1\n  decode_workers: 1\n  decode:\n    hardware: {gpus: h200}",
			`line 5: unknown key "disaggregation.decode.hardware.gpus"`},
		{"pool float", "disaggregation:\n  prefill_workers: 1\n  decode_workers: 1\n  prefill:\n    engine: {block_size: 63.9}",
			"line 5: disaggregation.prefill.engine.block_size: want an integer"},
		{"llamacpp pool", "disaggregation: {prefill_workers: 1, decode_workers: 1, decode: {engine: {type: llamacpp}}}",
			"disaggregation.decode.engine.type: llamacpp has no KV transfer"},
		{"block sizes", "disaggregation: {prefill_workers: 1, decode_workers: 1, decode: {engine: {block_size: 32}}}",
			"disaggregation.decode.engine.block_size: 32, but the prefill pool's is 64"},
		{"pool timing", "disaggregation: {prefill_workers: 1, decode_workers: 1, prefill: {timing: {model: table}}}",
			"disaggregation.prefill: timing.table.file: required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := ParseConfig([]byte(tc.yaml))
			if err == nil {
				err = cfg.Validate()
			}
			if tc.err == "" {
				require.NoError(t, err)
				assert.Equal(t, 4, cfg.Workers)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.err)
		})
	}
}

// A pool override names only what differs: the rest is the top level's,
// whatever the order of the keys; the resolved configuration survives a
// YAML round trip.
func TestDisaggregationPoolOverrides(t *testing.T) {
	cfg, err := ParseConfig([]byte(`
disaggregation:
  prefill_workers: 2
  decode_workers: 2
  prefill:
    hardware: {tensor_parallel: 2}
    timing: {model: roofline}
  decode:
    hardware: {gpu: h200}
    engine: {max_num_seqs: 512}
hardware: {model: qwen3-32b}
engine: {max_num_batched_tokens: 4096}
`))
	require.NoError(t, err)
	require.NoError(t, cfg.Validate())
	pre, dec := cfg.PoolConfig(RolePrefill), cfg.PoolConfig(RoleDecode)
	assert.Equal(t, "h100", pre.Hardware.GPU)
	assert.Equal(t, 2, pre.Hardware.TensorParallel)
	assert.Equal(t, "qwen3-32b", pre.Hardware.Model)
	assert.Equal(t, "roofline", pre.Timing.Model)
	assert.Equal(t, 4096, pre.Engine.MaxNumBatchedTokens)
	assert.Equal(t, "h200", dec.Hardware.GPU)
	assert.Equal(t, "qwen3-32b", dec.Hardware.Model)
	assert.Equal(t, "physics", dec.Timing.Model, "the default")
	assert.Equal(t, 512, dec.Engine.MaxNumSeqs)
	assert.Equal(t, 4096, dec.Engine.MaxNumBatchedTokens)
	y, err := cfg.YAML()
	require.NoError(t, err)
	back, err := ParseConfig(y)
	require.NoError(t, err)
	assert.Equal(t, cfg, back)
	// Each pool runs on its own hardware: the H200 decode workers hold more KV.
	s, err := newSimulator(cfg, workload(req(0, 10, 2)), nil, nil)
	require.NoError(t, err)
	preBlocks, err := pre.KVBlocks()
	require.NoError(t, err)
	decBlocks, err := dec.KVBlocks()
	require.NoError(t, err)
	assert.Equal(t, preBlocks, s.prefill.blocks, "prefill workers sized on 2×H100")
	assert.Equal(t, decBlocks, s.decode.blocks, "decode workers sized on one H200")
	assert.NotEqual(t, preBlocks, decBlocks)
	assert.Equal(t, []string{"prefill-0", "prefill-1", "decode-0", "decode-1"}, WorkerNames(cfg))
}

// Each pool steps on its own timing model: a linear prefill pool and a
// poly decode pool give the prefill step from the linear coefficients.
func TestDisaggPerPoolTiming(t *testing.T) {
	cfg := pdCfg(1, 1, 0.01, 0.5, 10, 0)
	lin := cfg.Timing
	cfg.Disaggregation.Prefill.Timing = &lin
	cfg.Timing = DefaultConfig().Timing // poly on the decode pool
	cfg.Timing.Model = "poly"
	recs, _ := runAll(t, cfg, workload(req(0, 1000, 3)))
	r := recs[0]
	assert.Equal(t, 11.0, stages(r)[StagePrefill], "linear: 1 + 1000·0.01 ms")
	dec := DefaultConfig().Timing.Poly
	u := 1000.0 / 16000 // the prompt's context over 1000 blocks of 16 tokens
	assert.InDelta(t, dec.Decode[0]+dec.Decode[1]*u+dec.Decode[2]*u*u, stages(r)[StageDecodeFirstStep], 1e-6,
		"poly decode step at KV utilisation 1000/16000")
}

// Disaggregated serving's Dynamo breakdown is additive, has the prefill
// and decode phases, and its stage means are the records' own; every
// engine family carries the worker's role; the prefill workers' engine
// TTFT ends when the prompt is computed.
func TestDisaggServerMetrics(t *testing.T) {
	for _, local := range []int{0, 300} {
		t.Run(fmt.Sprint("local=", local), func(t *testing.T) {
			wl := randomWorkload(2, 120, true)
			cfg := metricsCfg("vllm", 3)
			cfg.Disaggregation = DefaultDisaggregation()
			cfg.Disaggregation.PrefillWorkers, cfg.Disaggregation.DecodeWorkers = 1, 2
			cfg.Disaggregation.MaxLocalPrefillTokens = local
			recs, sum, _, e := runMetrics(t, cfg, wl)
			dyn := servermetrics.TTFTBreakdowns(e)[0]
			require.Equal(t, servermetrics.Dynamo, dyn.Server)
			assert.True(t, dyn.Additive, dyn.Reason)
			remote := func(r *results.Record) bool { return r.Sim.PrefillWorker != "" }
			want := map[string]float64{}
			want["preprocess/none"], _ = meanMs(recs, func(r *results.Record) int64 { return stageNs(r, StageFrontendRequest) })
			want["backend/prefill"], _ = meanMs(recs, func(r *results.Record) int64 {
				if !remote(r) {
					return 0
				}
				return stageNs(r, StageQueueWait, StagePrefill, StageBehindOther)
			})
			want["backend/decode"], _ = meanMs(recs, func(r *results.Record) int64 {
				return stageNs(r, StageDecodeQueue, StageKVTransfer, StageDecodeFirstStep)
			})
			want["response_postprocess/none"], _ = meanMs(recs, func(r *results.Record) int64 { return stageNs(r, StageFirstEmission) })
			for _, k := range []string{"route/prefill", "route/decode", "first_token/prefill", "first_token/decode"} {
				want[k] = 0
			}
			if local > 0 {
				require.Positive(t, sum.Disaggregation.LocalPrefills)
				require.Less(t, sum.Disaggregation.LocalPrefills, int64(len(wl.Requests)))
				want["route/aggregated"] = 0
				want["backend/aggregated"], _ = meanMs(recs, func(r *results.Record) int64 {
					if remote(r) {
						return 0
					}
					return stageNs(r, StageQueueWait, StagePrefill, StageBehindOther)
				})
			}
			got := map[string]float64{}
			for _, st := range dyn.Stages {
				got[st.Key()] = st.MeanMs
			}
			require.Len(t, got, len(want))
			for k, v := range want {
				assert.InDelta(t, v, got[k], 1e-9*max(1, v), k)
			}
			prompt := e.Metrics["vllm:prompt_tokens"]
			require.NotNil(t, prompt)
			roles := map[string]bool{}
			for _, s := range prompt.Series {
				roles[s.Labels["role"]] = true
			}
			assert.Equal(t, map[string]bool{"prefill": true, "decode": true}, roles)
			assert.Len(t, ServerMetricsEndpoints(cfg), 4)
		})
	}
}

// The first 3,000 rows of the real conversation trace (acceptance of the
// disaggregation issue): 1 prefill + 3 decode workers against 4 aggregated
// workers, both behind the kv router. The disaggregated breakdown has the
// prefill and decode phases and adds up, and the decode workers' token
// gaps have no chunked-prefill interference: their p99 is far below
// aggregated serving's.
func TestDisaggConversationTrace(t *testing.T) {
	if testing.Short() {
		t.Skip("3,000 requests twice")
	}
	full, _, err := traces.LoadMooncake(conversationTrace)
	if err != nil {
		t.Skipf("conversation trace not available: %v", err)
	}
	wl := &traces.Workload{Requests: full.Requests[:3000], BlockSize: full.BlockSize, Source: "conversation[:3000]"}
	wl.Digest = traces.ComputeDigest(wl.Requests)
	agg := DefaultConfig()
	agg.Workers, agg.Router.Policy = 4, "kv"
	pd := agg
	pd.Disaggregation = DefaultDisaggregation()
	pd.Disaggregation.PrefillWorkers, pd.Disaggregation.DecodeWorkers = 1, 3
	run := func(cfg Config) *RunFiles {
		f, err := WriteRun(context.Background(), t.TempDir(), cfg, wl, &results.InputConfig{})
		require.NoError(t, err)
		return f
	}
	a, d := run(agg), run(pd)
	b := d.TTFTBreakdown
	require.NotNil(t, b)
	assert.True(t, b.Additive, b.Reason)
	phases := map[string]float64{}
	for _, st := range b.Stages {
		phases[st.Key()] = st.MeanMs
	}
	assert.Positive(t, phases["backend/prefill"])
	assert.Positive(t, phases["backend/decode"])
	aggP99, ok := a.Profile.Value(results.TagTokenGap, "p99")
	require.True(t, ok)
	pdP99, ok := d.Profile.Value(results.TagTokenGap, "p99")
	require.True(t, ok)
	t.Logf("token_gap p99: aggregated %.2f ms, disaggregated %.2f ms", aggP99, pdP99)
	assert.Less(t, pdP99, aggP99/3)
	for _, w := range d.Summary.Workers {
		if w.Role == RoleDecode {
			assert.Zero(t, w.PrefillTokens, w.Name)
		}
	}
}

// Under KV pressure on both pools (waiting for admission, preemption on the
// decode workers, recomputation) with either engine, every request ends,
// stages still add up, and no block is left held.
func TestDisaggUnderKVPressure(t *testing.T) {
	for _, engine := range []string{"vllm", "sglang"} {
		for _, contention := range []bool{false, true} {
			t.Run(fmt.Sprint(engine, "/contention=", contention), func(t *testing.T) {
				cfg := metricsCfg(engine, 4)
				cfg.Engine.NumGPUBlocks = 160
				cfg.Disaggregation = DefaultDisaggregation()
				cfg.Disaggregation.PrefillWorkers, cfg.Disaggregation.DecodeWorkers = 2, 2
				cfg.Disaggregation.MaxLocalPrefillTokens = 64
				cfg.Disaggregation.KVTransfer.Contention = contention
				wl := randomWorkload(5, 200, false)
				s, err := newSimulator(cfg, wl, func(r *results.Record) error {
					if r.Error != nil {
						return nil
					}
					var total int64
					for _, st := range r.Sim.TTFTBreakdown {
						assert.GreaterOrEqual(t, st.Ns, int64(0), st.Name)
						total += st.Ns
					}
					assert.Equal(t, ttftNs(r), total, "request %d", r.TraceRow)
					return nil
				}, nil)
				require.NoError(t, err)
				sum, err := s.run(context.Background())
				require.NoError(t, err)
				assert.Equal(t, len(wl.Requests), sum.Completed+sum.Rejected)
				assert.Positive(t, sum.Disaggregation.Transfers)
				for _, w := range s.workers {
					assert.Zero(t, w.kv.held, w.name)
					assert.Zero(t, w.incoming, w.name)
				}
				t.Logf("preemptions %d, rejected %d, transfers %d, local %d", sum.Preemptions, sum.Rejected,
					sum.Disaggregation.Transfers, sum.Disaggregation.LocalPrefills)
			})
		}
	}
}

package sim

import (
	"cmp"
	"slices"
	"strings"

	"github.com/simbench/simbench/results"
)

// Summary is what a simulation knows beyond its records (sim_summary.json).
// It holds no wall-clock figure, so equal inputs give equal summaries.
type Summary struct {
	Requests         int           `json:"requests"`
	Completed        int           `json:"completed"`
	Rejected         int           `json:"rejected"`
	Warmup           int           `json:"warmup_requests"`
	RejectReasons    []ReasonCount `json:"reject_reasons"`
	SimulatedNs      int64         `json:"simulated_ns"`      // virtual time of the last event
	SimulatedSeconds float64       `json:"simulated_seconds"` // the same in seconds
	// ProfileStartNs is the virtual time of the first non-warmup send (the
	// start of the server-metrics window), -1 when there is none.
	ProfileStartNs    int64 `json:"profile_start_ns"`
	Steps             int64 `json:"steps"`
	Preemptions       int64 `json:"preemptions"`
	PreemptedRequests int   `json:"preempted_requests"`
	// PrefixCacheReusedRatio is Σ cached prompt tokens / Σ prompt tokens over
	// completed non-warmup requests (DynoSim's prefix_cache_reused_ratio, with
	// each request's largest hit over its admissions).
	PrefixCacheReusedRatio float64         `json:"prefix_cache_reused_ratio"`
	CachedTokens           int64           `json:"cached_tokens"`
	InputTokens            int64           `json:"input_tokens"`
	KVPeakUsage            float64         `json:"kv_peak_usage"` // largest worker peak / capacity
	Workers                []WorkerSummary `json:"workers"`
	// Disaggregation is the KV handoffs of disaggregated serving (absent
	// when aggregated).
	Disaggregation *DisaggregationSummary `json:"disaggregation,omitempty"`
	Engine         string                 `json:"engine"`
	Router         string                 `json:"router"`
	Timing         string                 `json:"timing"`
	WorkloadDigest string                 `json:"workload_digest"`

	// Speculative is speculative decoding's drafts and acceptance over
	// the run (absent when off).
	Speculative *SpeculativeSummary `json:"speculative,omitempty"`
}

// DisaggregationSummary counts the KV transfers of a disaggregated run
// (warmup requests included).
type DisaggregationSummary struct {
	Transfers               int64   `json:"kv_transfers"`
	TransferBytes           int64   `json:"kv_transfer_bytes"`
	MeanTransferMs          float64 `json:"kv_transfer_mean_ms"` // admission by the decode worker → KV there
	PeakConcurrentTransfers int     `json:"kv_transfer_peak_concurrent"`
	LocalPrefills           int64   `json:"local_prefills"` // prefilled on their decode worker (max_local_prefill_tokens)
}

// SpeculativeSummary counts a run's speculative decoding over its
// workers (warmup requests included), as vLLM's spec_decode counters do.
type SpeculativeSummary struct {
	Method               string `json:"method"`
	NumSpeculativeTokens int    `json:"num_speculative_tokens"`
	Drafts               int64  `json:"drafts"` // a sequence's drafting in one step
	DraftTokens          int64  `json:"draft_tokens"`
	AcceptedTokens       int64  `json:"accepted_tokens"`
	// AcceptanceRate is accepted / draft tokens; MeanAcceptedLength is
	// 1 + accepted / drafts, the tokens a drafting sequence emits per
	// step (vLLM's mean acceptance length); PerPosition is the accepted
	// share of the drafts at each position.
	AcceptanceRate     float64   `json:"acceptance_rate"`
	MeanAcceptedLength float64   `json:"mean_accepted_length"`
	PerPosition        []float64 `json:"per_position_acceptance_rate"`
}

// specSummary adds up the workers' speculative decoding; nil when no
// pool speculates.
func (s *simulator) specSummary() *SpeculativeSummary {
	var out *SpeculativeSummary
	var perPos []int64
	for _, w := range s.workers {
		if w.pool.spec == nil {
			continue
		}
		if out == nil {
			sc := w.eng().SpeculativeConfig
			out = &SpeculativeSummary{Method: sc.Method, NumSpeculativeTokens: sc.NumSpeculativeTokens}
			perPos = make([]int64, sc.NumSpeculativeTokens)
		}
		st := &w.stats.spec
		out.Drafts += st.drafts
		out.DraftTokens += st.draftTokens
		out.AcceptedTokens += st.accepted
		for i := range min(len(perPos), len(st.perPos)) {
			perPos[i] += st.perPos[i]
		}
	}
	if out == nil {
		return nil
	}
	out.AcceptanceRate = specRate(out.AcceptedTokens, out.DraftTokens)
	out.MeanAcceptedLength = 1 + specRate(out.AcceptedTokens, out.Drafts)
	out.PerPosition = make([]float64, len(perPos))
	for i, n := range perPos {
		out.PerPosition[i] = specRate(n, out.Drafts)
	}
	return out
}

// ReasonCount counts rejected requests by reason.
type ReasonCount struct {
	Reason string `json:"reason"`
	Count  int    `json:"count"`
}

// WorkerSummary is one worker's share of the run.
type WorkerSummary struct {
	Name             string  `json:"name"`
	Role             string  `json:"role,omitempty"` // prefill | decode under disaggregated serving
	Requests         int64   `json:"requests"`
	Steps            int64   `json:"steps"`
	BusySeconds      float64 `json:"busy_seconds"`
	BusyShare        float64 `json:"busy_share"` // busy time / simulated time
	Preemptions      int64   `json:"preemptions"`
	PrefillTokens    int64   `json:"prefill_tokens"` // prompt tokens computed (cache misses, recomputation)
	DecodeTokens     int64   `json:"decode_tokens"`  // one-token decode steps of sequences
	KVCapacityTokens int64   `json:"kv_capacity_tokens"`
	KVPeakTokens     int64   `json:"kv_peak_tokens"`
	KVCapacityBlocks int     `json:"kv_capacity_blocks,omitempty"` // block engines
	KVPeakBlocks     int     `json:"kv_peak_blocks,omitempty"`
	KVPeakUsage      float64 `json:"kv_peak_usage"`
	Evictions        int64   `json:"prefix_cache_evictions"`
	// OffloadStoredBlocks and OffloadLoadedBlocks are engine.kv_offload's
	// CPU tier: prompt blocks stored in it, and loaded back into the GPU
	// prefix cache instead of computed (absent without a tier).
	OffloadStoredBlocks int64 `json:"kv_offload_stored_blocks,omitempty"`
	OffloadLoadedBlocks int64 `json:"kv_offload_loaded_blocks,omitempty"`
}

// tally accumulates per-request figures as records are emitted.
type tally struct {
	completed, rejected, warmup, preempted int
	reasons                                map[string]int
	isl, cached                            int64
}

func (t *tally) add(rec *results.Record) {
	if rec.Warmup {
		t.warmup++
	}
	if rec.Error != nil {
		return
	}
	t.completed++
	if rec.Sim.Preemptions > 0 {
		t.preempted++
	}
	if !rec.Warmup {
		t.isl += int64(rec.InputTokens)
		t.cached += int64(rec.Sim.CachedTokens)
	}
}

func (s *simulator) summary() *Summary {
	t := &s.sum
	sum := &Summary{
		Requests: len(s.wl.Requests), Completed: t.completed, Rejected: t.rejected, Warmup: t.warmup,
		RejectReasons: reasonCounts(t.reasons), SimulatedNs: s.now, SimulatedSeconds: float64(s.now) / 1e9,
		ProfileStartNs:    s.profileStart,
		PreemptedRequests: t.preempted, CachedTokens: t.cached, InputTokens: t.isl,
		Engine: s.cfg.Engine.Type, Router: s.cfg.Router.Policy, Timing: s.cfg.Timing.Model,
		WorkloadDigest: s.wl.Digest, Workers: []WorkerSummary{},
	}
	if t.isl > 0 {
		sum.PrefixCacheReusedRatio = float64(t.cached) / float64(t.isl)
	}
	if s.decode != nil {
		x := &s.xfer
		sum.Disaggregation = &DisaggregationSummary{Transfers: x.count, TransferBytes: x.bytes,
			PeakConcurrentTransfers: x.peak, LocalPrefills: x.local}
		if x.count > 0 {
			sum.Disaggregation.MeanTransferMs = float64(x.busyNs) / float64(x.count) / 1e6
		}
	}
	sum.Speculative = s.specSummary()
	for _, w := range s.workers {
		ws := s.workerSummary(w)
		sum.Steps += ws.Steps
		sum.Preemptions += ws.Preemptions
		sum.KVPeakUsage = max(sum.KVPeakUsage, ws.KVPeakUsage)
		sum.Workers = append(sum.Workers, ws)
	}
	return sum
}

func (s *simulator) workerSummary(w *worker) WorkerSummary {
	st := &w.stats
	ws := WorkerSummary{Name: w.name, Role: w.pool.role, Requests: st.requests, Steps: st.steps,
		BusySeconds: float64(st.busyNs) / 1e9, Preemptions: st.preemptions,
		PrefillTokens: st.prefillTokens, DecodeTokens: st.decodeTokens,
		KVCapacityTokens: w.kvCap, KVPeakTokens: st.peakTokens}
	if s.now > 0 {
		ws.BusyShare = float64(st.busyNs) / float64(s.now)
	}
	if w.kv != nil {
		ws.KVCapacityBlocks, ws.KVPeakBlocks = w.kv.capacity, w.kv.peak
		ws.KVPeakTokens = int64(w.kv.peak) * int64(w.bs)
		ws.Evictions = w.kv.evictions
	}
	if w.cpu != nil {
		ws.OffloadStoredBlocks, ws.OffloadLoadedBlocks = w.cpu.stored, w.cpu.loaded
	}
	if w.kvCap > 0 {
		ws.KVPeakUsage = float64(ws.KVPeakTokens) / float64(w.kvCap)
	}
	return ws
}

func reasonCounts(m map[string]int) []ReasonCount {
	out := make([]ReasonCount, 0, len(m))
	for r, n := range m {
		out = append(out, ReasonCount{Reason: r, Count: n})
	}
	slices.SortFunc(out, func(a, b ReasonCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Reason, b.Reason))
	})
	return out
}

package traces

import (
	"math"
	"sort"

	"github.com/simbench/simbench/internal/numpy"
)

// Dist summarises a distribution of token counts. Percentiles are numpy's
// "linear" ones (index q/100·(n−1), interpolated); Std is the population
// standard deviation.
type Dist struct {
	Min float64 `json:"min"`
	Max float64 `json:"max"`
	Avg float64 `json:"avg"`
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
	Std float64 `json:"std"`
}

// Info describes a workload (simbench trace info).
type Info struct {
	Source         string `json:"source"`
	Digest         string `json:"digest"`
	Requests       int    `json:"requests"`
	WarmupRequests int    `json:"warmup_requests"`
	// Sessions counts conversations; each request without a SessionID is one.
	Sessions int `json:"sessions"`
	// TimedRequests have a timestamp (open loop).
	TimedRequests int `json:"timed_requests"`
	// FirstMs is the first timestamp: how long after time zero the
	// schedule starts (epoch milliseconds make it decades).
	FirstMs float64 `json:"first_ms"`
	// SpanMs is the last minus the first timestamp.
	SpanMs float64 `json:"span_ms"`
	// RatePerSec is the mean arrival rate from the gaps between timestamps:
	// (TimedRequests − 1) / SpanMs, per second; 0 without a span.
	RatePerSec float64 `json:"rate_per_sec"`
	// GapCV is the coefficient of variation (population std / mean) of the
	// gaps between consecutive timestamps in time order: how bursty the
	// arrivals are, 1 for a Poisson process, 0 for evenly spaced ones,
	// 1/√k for gamma gaps of shape k (vLLM's burstiness, AIPerf's
	// smoothness); 0 without two gaps or a span.
	GapCV             float64 `json:"gap_cv"`
	ISL               Dist    `json:"isl"`
	OSL               Dist    `json:"osl"`
	TotalInputTokens  int64   `json:"total_input_tokens"`
	TotalOutputTokens int64   `json:"total_output_tokens"`
	// PrefixReuseRatio is the share of input tokens an infinite prefix cache
	// would serve, replaying requests in order: a request's block i hits when
	// blocks 0..i appeared in that order (as a prefix) in an earlier request;
	// cached tokens are hit blocks × BlockSize, capped at its ISL.
	PrefixReuseRatio float64 `json:"prefix_reuse_ratio"`
	BlockSize        int     `json:"block_size"`
	Concurrency      int     `json:"concurrency"`
	// Agentic describes the multi-turn sessions (nil without any).
	Agentic *AgentInfo `json:"agentic,omitempty"`
}

// Describe computes statistics of wl.
func Describe(wl *Workload) Info {
	reqs := wl.Requests
	info := Info{
		Source:      wl.Source,
		Digest:      wl.Digest,
		Requests:    len(reqs),
		Sessions:    len(sessions(reqs)),
		BlockSize:   wl.blockSize(),
		Concurrency: wl.Concurrency,
	}
	isl := make([]float64, len(reqs))
	osl := make([]float64, len(reqs))
	for i := range reqs {
		r := &reqs[i]
		isl[i], osl[i] = float64(r.InputLength), float64(r.OutputLength)
		info.TotalInputTokens += int64(r.InputLength)
		info.TotalOutputTokens += int64(r.OutputLength)
		if r.Warmup {
			info.WarmupRequests++
		}
	}
	info.ISL, info.OSL = distOf(isl), distOf(osl)
	info.TimedRequests, info.SpanMs = timeSpan(reqs)
	info.FirstMs = minTimestamp(reqs)
	if info.SpanMs > 0 {
		info.RatePerSec = float64(info.TimedRequests-1) / (info.SpanMs / 1000)
		info.GapCV = gapCV(reqs)
	}
	if info.TotalInputTokens > 0 {
		info.PrefixReuseRatio = float64(cachedTokens(reqs, info.BlockSize)) / float64(info.TotalInputTokens)
	}
	info.Agentic = describeAgents(reqs)
	return info
}

func timeSpan(reqs []Request) (timed int, spanMs float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := range reqs {
		if reqs[i].HasTimestamp {
			timed++
			lo = math.Min(lo, reqs[i].TimestampMs)
			hi = math.Max(hi, reqs[i].TimestampMs)
		}
	}
	if timed == 0 {
		return 0, 0
	}
	return timed, hi - lo
}

// gapCV is the coefficient of variation of the gaps between the timed
// requests' timestamps in time order (Info.GapCV); 0 with fewer than two
// gaps.
func gapCV(reqs []Request) float64 {
	var ts []float64
	for i := range reqs {
		if reqs[i].HasTimestamp {
			ts = append(ts, reqs[i].TimestampMs)
		}
	}
	if len(ts) < 3 {
		return 0
	}
	sort.Float64s(ts)
	gaps := make([]float64, len(ts)-1)
	for i := range gaps {
		gaps[i] = ts[i+1] - ts[i]
	}
	d := distOf(gaps)
	if !(d.Avg > 0) {
		return 0
	}
	return d.Std / d.Avg
}

// cachedTokens replays reqs through an infinite prefix cache: a trie of hash
// id chains.
func cachedTokens(reqs []Request, blockSize int) int64 {
	type edge struct {
		parent int
		id     int64
	}
	blocks := 0
	for i := range reqs {
		blocks += len(reqs[i].HashIDs)
	}
	trie := make(map[edge]int, blocks)
	var cached int64
	for i := range reqs {
		r := &reqs[i]
		node, hits, matching := 0, 0, true
		for _, id := range r.HashIDs {
			e := edge{node, id}
			next, ok := trie[e]
			if !ok {
				next = len(trie) + 1
				trie[e] = next
				matching = false
			} else if matching {
				hits++
			}
			node = next
		}
		cached += int64(min(hits*blockSize, r.InputLength))
	}
	return cached
}

// distOf summarises xs (it sorts a copy).
func distOf(xs []float64) Dist {
	if len(xs) == 0 {
		return Dist{}
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	var sum float64
	for _, x := range s {
		sum += x
	}
	avg := sum / float64(len(s))
	var sq float64
	for _, x := range s {
		sq += (x - avg) * (x - avg)
	}
	return Dist{
		Min: s[0], Max: s[len(s)-1], Avg: avg,
		P50: Percentile(s, 50), P90: Percentile(s, 90), P99: Percentile(s, 99),
		Std: math.Sqrt(sq / float64(len(s))),
	}
}

// Percentile returns numpy's linear percentile q (0..100) of sorted, bit for
// bit (numpy.PercentileSorted): the value at index q/100·(n−1),
// interpolated between neighbours. It returns 0 for an empty slice.
func Percentile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	return numpy.PercentileSorted(sorted, min(max(q, 0), 100))
}

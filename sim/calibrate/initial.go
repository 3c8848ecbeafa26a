package calibrate

import (
	"slices"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/traces"
)

// Shares of the measured step and TTFT that the derived start assigns to
// each term before fitting. They encode what is typical of GPU serving at
// small batch: decode is bound by reading weights (a per-step cost), each
// extra sequence and each context token read add a few percent, and the
// time to first token is part prefill compute, part frontend overhead.
const (
	decodeSeqShare = 0.02 // of the decode step, per running sequence
	contextShare   = 0.05 // of the decode step, for the average context read
	// prefillPerStep is how many prompt tokens cost one more step's base:
	// at small batch a GPU decode step is bound by fixed costs (launches,
	// reading the weights), so a prompt of this size roughly doubles it.
	prefillPerStep = 1024
	minShare       = 0.1 // a start never puts a term below this share of what it splits
)

// Initial derives starting parameters from a real run: the decode step from
// ITL, split into a base, a per-sequence and a per-context-token part; the
// prefill cost per prompt token from the base (prefillPerStep); and the
// rest of TTFT beyond that first step as frontend overhead.
func Initial(p *results.Profile, wl *traces.Workload) Params {
	itl := valueOr(p, results.TagITL, 20)
	ttft := valueOr(p, results.TagTTFT, 2*itl)
	isl := max(valueOr(p, results.TagISL, meanISL(wl)), 1)
	osl := max(valueOr(p, results.TagOSL, 100), 1)
	batch := float64(max(wl.Concurrency, 1))
	ctx := isl + osl/2

	seq := decodeSeqShare * itl
	perCtx := contextShare * itl / (ctx * batch)
	base := max(itl-batch*seq-batch*ctx*perCtx, minShare*itl)
	prefill := base / prefillPerStep
	overhead := max(ttft-base-seq-isl*(prefill+perCtx), minShare*ttft)
	return Params{BaseMs: base, PrefillTokenMs: prefill, DecodeSeqMs: seq, ContextTokenMs: perCtx, OverheadMs: overhead}
}

// ClientGap estimates the load generator's time between a response's end
// and its slot's next send, in ms, for a closed-loop run from its aggregate:
// each of the C slots ran N/C requests back to back, so
// duration = (N/C)·latency + (N/C − 1)·gap. It assumes equal requests; use
// EstimateClientGap when the run's records are at hand. It is 0 for
// open-loop runs and when the figures are missing.
func ClientGap(p *results.Profile, wl *traces.Workload) float64 {
	if wl.Concurrency <= 0 || hasTimestamps(wl) {
		return 0
	}
	n, ok1 := p.Value(results.TagRequestCount, "avg")
	dur, ok2 := p.Value(results.TagBenchmarkDuration, "avg")
	lat, ok3 := p.Value(results.TagRequestLatency, "avg")
	perSlot := n / float64(wl.Concurrency)
	if !ok1 || !ok2 || !ok3 || perSlot <= 1 {
		return 0
	}
	return max(0, (dur*1e3-perSlot*lat)/(perSlot-1))
}

// ClientGapFromRecords measures the same gap from a closed-loop run's
// records: in a closed loop the k-th send after the first C follows the
// k-th completion, so the gap is the mean of start[C+k] − end[k] (sorted
// starts and ends, wall ns), in ms. ok is false when there are too few.
func ClientGapFromRecords(recs []results.RecordMetrics, concurrency int) (float64, bool) {
	if concurrency <= 0 || len(recs) <= concurrency {
		return 0, false
	}
	starts := make([]int64, 0, len(recs))
	ends := make([]int64, 0, len(recs))
	for i := range recs {
		m := &recs[i]
		starts = append(starts, m.Meta.RequestStartNs)
		ends = append(ends, m.Meta.RequestEndNs)
	}
	slices.Sort(starts)
	slices.Sort(ends)
	sum := 0.0
	n := len(recs) - concurrency
	for k := range n {
		sum += float64(starts[concurrency+k] - ends[k])
	}
	return max(0, sum/float64(n)/1e6), true
}

// maxJitter caps the derived step jitter: gaps that vary more than this are
// stalls or load changes, not step-to-step noise.
const maxJitter = 0.5

// StepJitter is the coefficient of variation of a run's chunk gaps
// (inter_chunk_latency std / avg), the spread of its step times as the
// client saw them, capped at maxJitter; 0 when unknown.
func StepJitter(p *results.Profile) float64 {
	avg, ok1 := p.Value(results.TagICL, "avg")
	std, ok2 := p.Value(results.TagICL, "std")
	if !ok1 || !ok2 || avg <= 0 {
		return 0
	}
	return min(std/avg, maxJitter)
}

func hasTimestamps(wl *traces.Workload) bool {
	for i := range wl.Requests {
		if wl.Requests[i].HasTimestamp {
			return true
		}
	}
	return false
}

func valueOr(p *results.Profile, tag string, def float64) float64 {
	if v, ok := p.Value(tag, "avg"); ok && v > 0 {
		return v
	}
	return def
}

func meanISL(wl *traces.Workload) float64 {
	if len(wl.Requests) == 0 {
		return 1
	}
	s := 0
	for _, r := range wl.Requests {
		s += r.InputLength
	}
	return float64(s) / float64(len(wl.Requests))
}

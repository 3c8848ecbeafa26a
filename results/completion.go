package results

import "slices"

// CompletionRate is the steady rate at which requests finished, in
// requests/s: (n − 1) over the time from the first completion to the last
// (request_end_ns, wall ns). Unlike request_throughput (AIPerf's count over
// the whole window, first send to last response), it does not depend on how
// long the window is against one request's latency: a server that keeps up
// with a constant-rate load completes at that rate however few requests are
// measured, and a saturated one at its capacity. ok is false with fewer
// than two completions or none apart.
func CompletionRate(endsNs []int64) (rate float64, ok bool) {
	if len(endsNs) < 2 {
		return 0, false
	}
	lo, hi := slices.Min(endsNs), slices.Max(endsNs)
	if hi <= lo {
		return 0, false
	}
	return float64(len(endsNs)-1) / (float64(hi-lo) / 1e9), true
}

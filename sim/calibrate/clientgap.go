package calibrate

import (
	"slices"

	"gonum.org/v1/gonum/stat"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/sim"
	"github.com/simbench/simbench/traces"
)

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
	gaps := sendGaps(recs, concurrency)
	if len(gaps) == 0 {
		return 0, false
	}
	sum := 0.0
	for _, g := range gaps {
		sum += g
	}
	return max(0, sum/float64(len(gaps))), true
}

// sendGaps are start[C+k] − end[k] (ms) over the sorted starts and ends
// of a closed-loop run: the gap before each send that a completion freed.
func sendGaps(recs []results.RecordMetrics, concurrency int) []float64 {
	if concurrency <= 0 || len(recs) <= concurrency {
		return nil
	}
	starts := make([]int64, 0, len(recs))
	ends := make([]int64, 0, len(recs))
	for i := range recs {
		starts = append(starts, recs[i].Meta.RequestStartNs)
		ends = append(ends, recs[i].Meta.RequestEndNs)
	}
	slices.Sort(starts)
	slices.Sort(ends)
	gaps := make([]float64, 0, len(recs)-concurrency)
	for k := range len(recs) - concurrency {
		gaps = append(gaps, float64(starts[concurrency+k]-ends[k])/1e6)
	}
	return gaps
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

// clientStalls splits a closed-loop run's client gaps (ms) into the
// client's ordinary gaps and its stalls, the gaps beyond outlierZ robust
// sds above the median (AIPerf's: 3 s among gaps of 2.5–4 ms), and gives
// the stalls' mean length and how often they come. The run's stall time
// is what its mean gap (gapMs: from the aggregate when the records are an
// excerpt) shows beyond the ordinary gaps; each stall holds one slot for
// its whole length (sim's clientStalls), so the run had stall time / slots
// / length of them, one every duration / count ms. No stall is seen in too
// few gaps (minGaps).
func clientStalls(gaps []float64, gapMs float64, p *results.Profile, concurrency int) (ordinary []float64, lenMs, everyMs float64) {
	if len(gaps) < minGaps {
		return gaps, 0, 0
	}
	ordinary, out := inliers(gaps)
	var stalls []float64
	med := median(gaps)
	for _, g := range out {
		if g > med {
			stalls = append(stalls, g)
		} else {
			ordinary = append(ordinary, g)
		}
	}
	n, ok1 := p.Value(results.TagRequestCount, "avg")
	dur, ok2 := p.Value(results.TagBenchmarkDuration, "avg")
	if len(stalls) == 0 || !ok1 || !ok2 {
		return gaps, 0, 0
	}
	lenMs = stat.Mean(stalls, nil)
	perSlot := (gapMs - stat.Mean(ordinary, nil)) * (n - float64(concurrency)) / float64(concurrency)
	count := perSlot / lenMs
	if count <= 0 || dur*1e3 <= perSlot {
		return gaps, 0, 0
	}
	return ordinary, lenMs, dur * 1e3 / count
}

// ClientGaps are a closed-loop run's individual client gaps (ms, at
// least 0; see sendGaps).
func ClientGaps(recs []results.RecordMetrics, concurrency int) []float64 {
	gaps := sendGaps(recs, concurrency)
	for i, g := range gaps {
		gaps[i] = max(0, g)
	}
	return gaps
}

// minGaps is how many gaps a distribution needs; with fewer the mean
// gap alone is simulated.
const minGaps = 8

// gapSamples keeps gaps for the simulator to draw from: all of them up to
// 101, else their 101 percentiles p0…p100 (numpy's linear rule), which
// keep the shape and, within the percentile spacing, the mean; nil when
// there are too few.
func gapSamples(gaps []float64) []float64 {
	if len(gaps) < minGaps {
		return nil
	}
	s := slices.Clone(gaps)
	slices.Sort(s)
	if len(s) <= 101 {
		return s
	}
	q := make([]float64, 101)
	for i := range q {
		q[i] = results.PercentileSorted(s, float64(i))
	}
	return q
}

func pooledGaps(targets []Target) []float64 {
	var all []float64
	for _, t := range targets {
		all = append(all, t.ClientGapsMs...)
	}
	return all
}

// pooledStalls are the client's stalls over the closed-loop targets:
// their mean length, and the targets' whole duration over the stalls they
// had (a run without one counts its time too).
func pooledStalls(targets []Target) (lenMs, everyMs float64) {
	var count, sumLen, durMs float64
	for _, t := range targets {
		if t.Workload.Concurrency <= 0 || hasTimestamps(t.Workload) {
			continue
		}
		dur, _ := t.Profile.Value(results.TagBenchmarkDuration, "avg")
		durMs += dur * 1e3
		if t.ClientStallMs > 0 {
			c := dur * 1e3 / t.ClientStallEveryMs
			count += c
			sumLen += c * t.ClientStallMs
		}
	}
	if count == 0 {
		return 0, 0
	}
	return sumLen / count, durMs / count
}

// client sets c to t's client: its gaps and its stalls.
func (t Target) client(c *sim.ClientConfig) {
	c.GapMs = t.ClientGapMs
	c.GapSamplesMs = gapSamples(t.ClientGapsMs)
	c.StallMs, c.StallEveryMs = t.ClientStallMs, t.ClientStallEveryMs
}

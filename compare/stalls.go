package compare

import (
	"cmp"
	"slices"

	"github.com/simbench/simbench/results"
)

// StallOptions sets the token-gap stall detector.
type StallOptions struct {
	// K: a stall is a token gap larger than K × the run's median token gap…
	K float64
	// FloorMs: …and larger than this absolute floor, in ms, so that a run
	// with very short gaps does not call every hiccup a stall.
	FloorMs float64
}

// DefaultStallOptions are k = 5 and a 50 ms floor.
var DefaultStallOptions = StallOptions{K: 5, FloorMs: 50}

// Interference thresholds; see Stalls.InterferenceSuspected.
const (
	interferenceMinStalls = 3
	interferenceMinShare  = 0.5
	interferenceMinLift   = 1.5
)

// Stalls are the token-gap stalls of one run: gaps in the pooled token-gap
// distribution (seed 000's token_gap; AIPerf's inter_chunk_latency when every
// chunk is one token) that request-level averages hide.
type Stalls struct {
	Gaps        int     // pooled token gaps
	MedianGapMs float64 // median token gap
	ThresholdMs float64 // max(K × median, floor): a stall is a gap above it
	Count       int
	Per1000Gaps float64
	// BlockedS is the stream time the stalls blocked: Σ (gap − median gap)
	// over the stalls, in seconds.
	BlockedS float64
	P99Ms    float64 // token-gap percentiles (numpy-linear, results.PercentileSorted)
	P999Ms   float64
	MaxMs    float64
	// FirstS and LastS are when the first and last stall ended, in seconds
	// from the run's start; ByDecile counts stalls per tenth of the run.
	FirstS, LastS float64
	ByDecile      [10]int
	// PrefillOverlap counts stalls that overlap another request's prefill
	// window (send → first token), on the same worker when Scope is "worker".
	PrefillOverlap int
	OverlapShare   float64 // PrefillOverlap / Count
	// PrefillCoverage is the share of stalls expected to overlap a prefill
	// window by chance: the fraction of the run (per worker) covered by the
	// prefill windows stretched by the median stall length.
	PrefillCoverage float64
	Scope           string // "worker" when every request names its serving worker, else "run"
	// InterferenceSuspected flags chunked-prefill interference: decode
	// stalls while another request's prefill shares the engine. It is set
	// when at least 3 stalls were seen and the share overlapping prefill
	// exceeds both 50 % and 1.5 × PrefillCoverage.
	//
	// Why: if stalls had nothing to do with prefill, a stall would overlap
	// a prefill window with probability PrefillCoverage, so that is the
	// share to beat. A 1.5× lift asks for prefill to be clearly
	// over-represented around stalls, and the 50 % floor asks for prefill
	// to explain most stalls, not a few. When prefill windows cover
	// almost the whole run (a saturated engine) no share can beat 1.5×
	// coverage: overlap is then no evidence, and nothing is flagged. Three
	// stalls is the least that is not an anecdote.
	InterferenceSuspected bool
	Events                []StallEvent // every stall, in time order
}

// StallEvent is one stall.
type StallEvent struct {
	AtS            float64 // when the gap ended, seconds from the run's start
	GapMs          float64
	PrefillOverlap bool
}

// Stalls detects the run's token-gap stalls; nil when the run has no token
// gaps (no per-request records, non-streaming, or a DynoSim per-request
// file, which has no token times).
func (d *Digest) Stalls() *Stalls {
	if d == nil || len(d.TokenGaps) == 0 {
		return nil
	}
	g := d.TokenGaps
	s := &Stalls{Gaps: len(g), MedianGapMs: results.PercentileSorted(g, 50),
		P99Ms: results.PercentileSorted(g, 99), P999Ms: results.PercentileSorted(g, 99.9), MaxMs: g[len(g)-1]}
	s.ThresholdMs = max(d.opts.K*s.MedianGapMs, d.opts.FloorMs)
	pw := newPrefillWindows(d)
	s.Scope = pw.scope
	for _, e := range d.events {
		if e.GapMs > s.ThresholdMs {
			s.add(d, e, pw.overlaps(e))
		}
	}
	slices.SortStableFunc(s.Events, func(a, b StallEvent) int { return cmp.Compare(a.AtS, b.AtS) })
	s.summarize(d, pw)
	return s
}

func (s *Stalls) add(d *Digest, e gapEvent, overlap bool) {
	at := float64(e.EndNs-d.OriginNs) / 1e9
	s.Count++
	s.BlockedS += (e.GapMs - s.MedianGapMs) / 1e3
	if overlap {
		s.PrefillOverlap++
	}
	s.Events = append(s.Events, StallEvent{AtS: at, GapMs: e.GapMs, PrefillOverlap: overlap})
	if dur := float64(d.EndNs-d.OriginNs) / 1e9; dur > 0 {
		s.ByDecile[min(max(int(at/dur*10), 0), 9)]++
	}
}

func (s *Stalls) summarize(d *Digest, pw *prefillWindows) {
	s.Per1000Gaps = float64(s.Count) / float64(s.Gaps) * 1000
	stallLens := make([]float64, len(s.Events))
	for i, e := range s.Events {
		stallLens[i] = e.GapMs
	}
	slices.Sort(stallLens)
	dilate := int64(0)
	if len(stallLens) > 0 {
		dilate = msToNs(results.PercentileSorted(stallLens, 50))
		s.FirstS, s.LastS = s.Events[0].AtS, s.Events[len(s.Events)-1].AtS
		s.OverlapShare = float64(s.PrefillOverlap) / float64(s.Count)
	}
	s.PrefillCoverage = pw.expectedShare(d, dilate)
	s.InterferenceSuspected = s.Count >= interferenceMinStalls && s.OverlapShare > interferenceMinShare &&
		s.OverlapShare > interferenceMinLift*s.PrefillCoverage
}

// prefillWindows indexes every request's send → first-token window by
// worker (or for the whole run), sorted by start, with the running maximum
// of the ends, so "does any window overlap [a, b]?" is one binary search.
type prefillWindows struct {
	scope   string
	groups  map[int32][]window
	counts  map[int32]int  // stalls per group, for the expected share
	serving map[int32]bool // groups that stream tokens (a prefill worker streams none)
}

type window struct{ start, end, maxEnd int64 }

func newPrefillWindows(d *Digest) *prefillWindows {
	pw := &prefillWindows{scope: "worker", groups: map[int32][]window{}, counts: map[int32]int{}, serving: map[int32]bool{}}
	for i := range d.Requests {
		if d.Requests[i].Worker < 0 {
			pw.scope = "run"
			break
		}
	}
	for i := range d.Requests {
		r := &d.Requests[i]
		pw.serving[pw.group(r.Worker)] = true
		if r.FirstNs > 0 && r.FirstNs >= r.StartNs {
			g := pw.group(r.Prefill) // a disaggregated request's prompt ran on its prefill worker
			pw.groups[g] = append(pw.groups[g], window{start: r.StartNs, end: r.FirstNs})
		}
	}
	for g, ws := range pw.groups {
		slices.SortFunc(ws, func(a, b window) int { return cmp.Compare(a.start, b.start) })
		run := int64(-1 << 63)
		for i := range ws {
			run = max(run, ws[i].end)
			ws[i].maxEnd = run
		}
		pw.groups[g] = ws
	}
	return pw
}

func (pw *prefillWindows) group(worker int32) int32 {
	if pw.scope == "run" {
		return 0
	}
	return worker
}

// overlaps reports whether the stall overlaps some prefill window: a window
// that opened before the stall ended and closed after it began. A request's
// own prefill ends at its first token, before any of its gaps, so it never
// counts.
func (pw *prefillWindows) overlaps(e gapEvent) bool {
	g := pw.group(e.Worker)
	pw.counts[g]++
	ws := pw.groups[g]
	begin := e.EndNs - msToNs(e.GapMs)
	n, _ := slices.BinarySearchFunc(ws, e.EndNs, func(w window, end int64) int { return cmp.Compare(w.start, end) })
	return n > 0 && ws[n-1].maxEnd > begin
}

// expectedShare is the share of stalls that would overlap a prefill window
// if stalls ignored prefill: a stall of length L overlaps window [s, f] when
// it ends inside (s, f + L), so each group's windows are stretched by the
// median stall length and their union measured against the run. Groups are
// weighted by their stalls (when there are none, the groups that stream
// tokens equally).
func (pw *prefillWindows) expectedShare(d *Digest, dilate int64) float64 {
	dur := d.EndNs - d.OriginNs
	if dur <= 0 || len(pw.groups) == 0 {
		return 0
	}
	weights := pw.counts
	if len(weights) == 0 {
		weights = map[int32]int{}
		for g := range pw.serving {
			weights[g] = 1
		}
	}
	keys := make([]int32, 0, len(weights))
	for g := range weights {
		keys = append(keys, g)
	}
	slices.Sort(keys) // a fixed order keeps the float sum reproducible
	var sum, weight float64
	for _, g := range keys {
		w := float64(weights[g])
		sum += w * coverage(pw.groups[g], dilate, d.OriginNs, d.EndNs)
		weight += w
	}
	return sum / weight
}

// coverage is the fraction of [lo, hi] covered by the union of the windows
// (sorted by start), each extended by dilate at its end.
func coverage(ws []window, dilate, lo, hi int64) float64 {
	var covered int64
	curS, curE := int64(0), int64(-1<<63)
	flush := func() {
		if curE > curS {
			covered += max(0, min(curE, hi)-max(curS, lo))
		}
	}
	for _, w := range ws {
		e := w.end + dilate
		if w.start > curE {
			flush()
			curS, curE = w.start, e
		} else {
			curE = max(curE, e)
		}
	}
	flush()
	return float64(covered) / float64(hi-lo)
}

package compare

import (
	"fmt"
	"math"

	"github.com/montanaflynn/stats"
	"github.com/simbench/simbench/results"
)

// Join keys, in the order they are tried.
const (
	JoinByTraceRow    = "trace_row"
	JoinByCorrelation = "x_correlation_id+turn_index"
	JoinBySession     = "session_num"
)

// joinedTags are the per-request metrics compared request by request.
var joinedTags = []string{results.TagTTFT, results.TagTTST, results.TagITL, results.TagRequestLatency, results.TagOTPU}

// Join is the request-by-request comparison of two runs.
type Join struct {
	Key                string // how requests were paired
	Matched            int
	UnmatchedReference int
	UnmatchedCandidate int
	// OSLMismatches and ISLMismatches count pairs whose output (input)
	// token counts differ: their latencies are not like for like.
	OSLMismatches int
	ISLMismatches int
	Metrics       []JoinMetric
	Warnings      []Warning
	pairs         [][2]int32
}

// JoinMetric is the per-request accuracy of one metric.
type JoinMetric struct {
	Metric string
	Unit   string
	N      int // pairs where both requests have the metric
	// MAPEPct is the mean absolute percentage error, over the pairs whose
	// reference is not zero; nil when there is none.
	MAPEPct *float64
	// MeanError is the mean of candidate − reference (in Unit) and
	// MeanErrorPct the mean signed percentage error.
	MeanError    float64
	MeanErrorPct *float64
	// PearsonR is nil when undefined: fewer than 3 pairs, or a side constant.
	PearsonR *float64
	Bias     string // "over-predict", "under-predict" or "neutral" (BLIS's words)
	Grade    string // see Grade
	// Reference and Candidate are the paired values, for plots.
	Reference, Candidate []float64
}

// Grade is BLIS's request-level quality grade (inference-sim
// sim/workload/calibrate.go). The two criteria combine conjunctively: a tier
// is awarded only when MAPE is below AND Pearson r above its bounds —
// excellent: MAPE < 10 % and r > 0.95; good: < 20 % and > 0.85; fair: < 35 %
// and > 0.70; otherwise poor — so the grade is the worse of the grades the
// two criteria would give alone. When r is undefined (fewer than 3 pairs, or
// a constant side) the grade rests on MAPE alone; when MAPE is undefined
// (every reference is zero) it is "n/a".
func Grade(mapePct *float64, r *float64) string {
	if mapePct == nil {
		return "n/a"
	}
	tiers := []struct {
		name       string
		mape, minR float64
	}{{"excellent", 10, 0.95}, {"good", 20, 0.85}, {"fair", 35, 0.70}}
	for _, t := range tiers {
		if *mapePct < t.mape && (r == nil || *r > t.minR) {
			return t.name
		}
	}
	return "poor"
}

// JoinRequests pairs the requests of two runs and compares each metric
// request by request. The key is the first of trace_row (simbench's
// extension), x_correlation_id + turn_index, and session_num that both runs
// carry on every request and that pairs at least half of the smaller run;
// failing that, the key that pairs the most.
func JoinRequests(ref, cand *Digest) *Join {
	j := &Join{}
	best := -1
	for _, k := range joinKeys {
		if !k.usable(ref) || !k.usable(cand) {
			continue
		}
		pairs, dups := k.pair(ref, cand)
		if len(pairs) > best {
			best, j.Key, j.pairs = len(pairs), k.name, pairs
			j.Warnings = dupWarnings(k.name, dups)
		}
		if 2*len(pairs) >= min(len(ref.Requests), len(cand.Requests)) {
			break
		}
	}
	j.Matched = len(j.pairs)
	j.UnmatchedReference = len(ref.Requests) - j.Matched
	j.UnmatchedCandidate = len(cand.Requests) - j.Matched
	j.countMismatches(ref, cand)
	for _, tag := range joinedTags {
		if jm, ok := j.compareMetric(ref, cand, tag); ok {
			j.Metrics = append(j.Metrics, jm)
		}
	}
	j.addWarnings()
	return j
}

func dupWarnings(key string, dups int) []Warning {
	if dups == 0 {
		return nil
	}
	return []Warning{warnf("per-request join by %s: %d duplicate keys; only the first request of each key was paired", key, dups)}
}

func (j *Join) addWarnings() {
	if j.UnmatchedReference > 0 || j.UnmatchedCandidate > 0 {
		j.Warnings = append(j.Warnings, warnf("per-request join by %s: %d reference and %d candidate requests have no partner",
			j.Key, j.UnmatchedReference, j.UnmatchedCandidate))
	}
	if j.OSLMismatches > 0 || j.ISLMismatches > 0 {
		j.Warnings = append(j.Warnings, warnf("per-request join: %d pairs differ in output tokens and %d in input tokens; their latencies are not like for like",
			j.OSLMismatches, j.ISLMismatches))
	}
}

func (j *Join) countMismatches(ref, cand *Digest) {
	for _, p := range j.pairs {
		r, c := &ref.Requests[p[0]], &cand.Requests[p[1]]
		if differ(r, c, results.TagOSL) {
			j.OSLMismatches++
		}
		if differ(r, c, results.TagISL) {
			j.ISLMismatches++
		}
	}
}

func differ(r, c *Request, tag string) bool {
	a, okA := r.Value(tag)
	b, okB := c.Value(tag)
	return okA && okB && a != b
}

func (j *Join) compareMetric(ref, cand *Digest, tag string) (JoinMetric, bool) {
	d, _ := results.Lookup(tag)
	jm := JoinMetric{Metric: tag, Unit: d.Unit}
	for _, p := range j.pairs {
		a, okA := ref.Requests[p[0]].Value(tag)
		b, okB := cand.Requests[p[1]].Value(tag)
		if okA && okB {
			jm.Reference = append(jm.Reference, a)
			jm.Candidate = append(jm.Candidate, b)
		}
	}
	jm.N = len(jm.Reference)
	if jm.N == 0 {
		return jm, false
	}
	jm.errors()
	jm.PearsonR = pearson(jm.Reference, jm.Candidate)
	jm.Grade = Grade(jm.MAPEPct, jm.PearsonR)
	if jm.PearsonR == nil {
		why := "one side is constant"
		if jm.N < 3 {
			why = fmt.Sprintf("only %d pairs", jm.N)
		}
		j.Warnings = append(j.Warnings, warnf("per-request %s: Pearson r undefined (%s); graded on MAPE alone", tag, why))
	}
	return jm, true
}

// errors computes MAPE, the mean signed errors and the bias direction.
func (jm *JoinMetric) errors() {
	var sumAbsPct, sumPct, sumDiff float64
	nPct := 0
	for i, a := range jm.Reference {
		diff := jm.Candidate[i] - a
		sumDiff += diff
		if a != 0 {
			sumAbsPct += math.Abs(diff / a)
			sumPct += diff / a
			nPct++
		}
	}
	jm.MeanError = sumDiff / float64(jm.N)
	if nPct > 0 {
		mape, mpe := sumAbsPct/float64(nPct)*100, sumPct/float64(nPct)*100
		jm.MAPEPct, jm.MeanErrorPct = &mape, &mpe
	}
	switch {
	case sumDiff > 0:
		jm.Bias = "over-predict"
	case sumDiff < 0:
		jm.Bias = "under-predict"
	default:
		jm.Bias = "neutral"
	}
}

// pearson is Pearson's r from montanaflynn/stats; nil when undefined.
func pearson(a, b []float64) *float64 {
	if len(a) < 3 {
		return nil
	}
	r, err := stats.Pearson(a, b)
	if err != nil || math.IsNaN(r) || math.IsInf(r, 0) {
		return nil
	}
	r = min(max(r, -1), 1) // rounding can step just outside [-1, 1]
	return &r
}

// joinKey is one way to pair requests.
type joinKey struct {
	name   string
	usable func(d *Digest) bool
	pair   func(ref, cand *Digest) (pairs [][2]int32, dups int)
}

var joinKeys = []joinKey{
	{JoinByTraceRow, func(d *Digest) bool { return all(d, func(r *Request) bool { return r.TraceRow >= 0 }) },
		func(ref, cand *Digest) ([][2]int32, int) {
			return pairBy(ref, cand, func(r *Request) int32 { return r.TraceRow })
		}},
	{JoinByCorrelation, func(d *Digest) bool { return all(d, func(r *Request) bool { return r.Correlation != "" }) },
		func(ref, cand *Digest) ([][2]int32, int) {
			return pairBy(ref, cand, func(r *Request) corrKey { return corrKey{r.Correlation, r.Turn} })
		}},
	{JoinBySession, func(*Digest) bool { return true },
		func(ref, cand *Digest) ([][2]int32, int) {
			return pairBy(ref, cand, func(r *Request) int32 { return r.SessionNum })
		}},
}

type corrKey struct {
	id   string
	turn int32
}

func all(d *Digest, ok func(*Request) bool) bool {
	for i := range d.Requests {
		if !ok(&d.Requests[i]) {
			return false
		}
	}
	return len(d.Requests) > 0
}

// pairBy pairs each candidate request with the reference request of the
// same key, in candidate order; the reference keeps the first request of a
// duplicated key.
func pairBy[K comparable](ref, cand *Digest, key func(*Request) K) ([][2]int32, int) {
	idx := make(map[K]int32, len(ref.Requests))
	dups := 0
	for i := range ref.Requests {
		k := key(&ref.Requests[i])
		if _, seen := idx[k]; seen {
			dups++
			continue
		}
		idx[k] = int32(i)
	}
	used := make([]bool, len(ref.Requests))
	var pairs [][2]int32
	for i := range cand.Requests {
		if r, ok := idx[key(&cand.Requests[i])]; ok && !used[r] {
			used[r] = true
			pairs = append(pairs, [2]int32{r, int32(i)})
		}
	}
	return pairs, dups
}

// String is a one-line summary of the join.
func (j *Join) String() string {
	return fmt.Sprintf("%d pairs by %s; unpaired: %d reference, %d candidate; token mismatches: %d output, %d input",
		j.Matched, j.Key, j.UnmatchedReference, j.UnmatchedCandidate, j.OSLMismatches, j.ISLMismatches)
}

package compare

import (
	"fmt"
	"slices"
	"sync"

	"github.com/simbench/simbench/results"
)

// Options configures a comparison.
type Options struct {
	Stall      StallOptions
	Thresholds []Threshold
}

// RunInfo names one side of a comparison.
type RunInfo struct {
	Name     string
	Path     string
	Format   string
	Requests int // valid requests read from per-request records; 0 without records
	Errors   int // failed requests read from per-request records
}

// Report is a complete comparison: what every renderer prints.
type Report struct {
	Reference, Candidate  RunInfo
	Options               Options
	Rows                  []Row
	OnlyInReference       []string
	OnlyInCandidate       []string
	PerRequest            *Join   // nil unless both runs have per-request records
	RefStalls, CandStalls *Stalls // nil for a run without token gaps
	// TTFTBreakdown compares the server-side TTFT stage means; nil unless
	// both runs have server metrics with a breakdown (see LoadServerSide).
	TTFTBreakdown *BreakdownComparison
	// ServerMetrics compares the server metrics both runs have, by their
	// common names; nil unless both runs have server metrics.
	ServerMetrics []ServerMetricRow
	Verdicts      []Verdict
	Warnings      []Warning
	// RefDigest and CandDigest are the scanned records (nil without
	// records), for plots.
	RefDigest, CandDigest *Digest
}

// Compare scans both inputs (concurrently: the work is CPU-bound parsing
// and there are exactly two), aligns their profiles, joins their requests,
// detects stalls, lines up their server-side TTFT breakdowns and judges the
// thresholds.
func Compare(ref, cand *Input, opts Options) (*Report, error) {
	var digests [2]*Digest
	var errs [2]error
	var wg sync.WaitGroup
	if ref == cand { // one input compared with itself: scan it once
		d, err := Scan(ref, opts.Stall)
		if err != nil {
			return nil, err
		}
		return build(ref, cand, d, d, opts), nil
	}
	for i, in := range []*Input{ref, cand} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			digests[i], errs[i] = Scan(in, opts.Stall)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return build(ref, cand, digests[0], digests[1], opts), nil
}

func build(ref, cand *Input, rd, cd *Digest, opts Options) *Report {
	r := &Report{Reference: info(ref, rd), Candidate: info(cand, cd), Options: opts, RefDigest: rd, CandDigest: cd}
	r.Warnings = append(append(r.Warnings, ref.Warnings...), cand.Warnings...)
	refP, w1 := withTokenGap(ref, rd)
	candP, w2 := withTokenGap(cand, cd)
	r.Warnings = append(r.Warnings, append(w1, w2...)...)
	a := Align(refP, candP)
	r.Rows, r.OnlyInReference, r.OnlyInCandidate = a.Rows, a.OnlyInReference, a.OnlyInCandidate
	r.Warnings = append(r.Warnings, a.Warnings...)
	r.RefStalls, r.CandStalls = rd.Stalls(), cd.Stalls()
	r.addStallRows()
	if rd != nil && cd != nil && len(rd.Requests) > 0 && len(cd.Requests) > 0 {
		r.PerRequest = JoinRequests(rd, cd)
		r.Warnings = append(r.Warnings, r.PerRequest.Warnings...)
	} else {
		r.Warnings = append(r.Warnings, warnf("no per-request comparison: %s", missingRecords(r, rd, cd)))
	}
	r.addServerSide(ref, cand)
	r.Verdicts = Evaluate(r.Rows, a, opts.Thresholds)
	return r
}

func info(in *Input, d *Digest) RunInfo {
	ri := RunInfo{Name: in.Name, Path: in.Path, Format: in.Format}
	if d != nil {
		ri.Requests, ri.Errors = len(d.Requests), d.Errors
	}
	return ri
}

func missingRecords(r *Report, rd, cd *Digest) string {
	switch {
	case (rd == nil || len(rd.Requests) == 0) && (cd == nil || len(cd.Requests) == 0):
		return "neither run has per-request records"
	case rd == nil || len(rd.Requests) == 0:
		return fmt.Sprintf("the reference (%s) has no per-request records", r.Reference.Name)
	}
	return fmt.Sprintf("the candidate (%s) has no per-request records", r.Candidate.Name)
}

// addStallRows compares the stall figures of both runs like metric
// statistics: token_gap p99.9 (which no profile has) and the stalls rows.
func (r *Report) addStallRows() {
	a, b := r.RefStalls, r.CandStalls
	if a == nil || b == nil {
		if a != nil || b != nil {
			r.Warnings = append(r.Warnings, warnf("token-gap stalls not compared: only one run has token gaps"))
		}
		return
	}
	p999 := NewRow(results.TagTokenGap, "p99.9", "ms", a.P999Ms, b.P999Ms)
	if i := slices.IndexFunc(r.Rows, func(x Row) bool { return x.Metric == results.TagTokenGap && x.Stat == "p99" }); i >= 0 {
		r.Rows = slices.Insert(r.Rows, i+1, p999)
	} else {
		r.Rows = append(r.Rows, p999)
	}
	r.Rows = append(r.Rows,
		NewRow(StallMetric, "stall_count", "stalls", float64(a.Count), float64(b.Count)),
		NewRow(StallMetric, "stalls_per_1000_gaps", "stalls/1000 gaps", a.Per1000Gaps, b.Per1000Gaps),
		NewRow(StallMetric, "blocked_stream_time_s", "s", a.BlockedS, b.BlockedS))
}

// Breaches returns the verdicts that breached their bound.
func (r *Report) Breaches() []Verdict { return r.withStatus(Breach) }

// MissingVerdicts returns the verdicts that could not be judged.
func (r *Report) MissingVerdicts() []Verdict { return r.withStatus(Missing) }

func (r *Report) withStatus(s string) []Verdict {
	var out []Verdict
	for _, v := range r.Verdicts {
		if v.Status == s {
			out = append(out, v)
		}
	}
	return out
}

// withTokenGap returns the input's profile, with token_gap statistics
// computed (results.Summarize) from its per-request records when the
// profile has none: AIPerf does not export token_gap, DynoSim reports and
// simbench runs do, and it is the one distribution where stalls show.
func withTokenGap(in *Input, d *Digest) (*results.Profile, []Warning) {
	p := in.Profile
	if _, ok := p.Metric(results.TagTokenGap); ok || d == nil || len(d.TokenGaps) == 0 {
		return p, nil
	}
	s, ok := results.Summarize(d.TokenGaps) // already sorted: Summarize's sort leaves it as is
	if !ok {
		return p, nil
	}
	cp := *p
	cp.Metrics = append(append([]results.MetricResult(nil), p.Metrics...),
		results.MetricResult{Tag: results.TagTokenGap, Unit: "ms", Stats: s.Stats()})
	return &cp, []Warning{warnf("%s: token_gap computed from its per-request records (its profile has none)", in.Name)}
}

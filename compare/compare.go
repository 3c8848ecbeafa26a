package compare

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/simbench/simbench/results"
)

// DefaultAlpha is the significance level of a comparison of several runs
// per side.
const DefaultAlpha = 0.05

// Options configures a comparison.
type Options struct {
	Stall      StallOptions
	Thresholds []Threshold
	// Alpha is the Mann–Whitney significance level of a comparison of
	// several runs per side (0 means DefaultAlpha): a difference with
	// p > Alpha is within run-to-run noise.
	Alpha float64
	// SameWorkload (--gate) makes different workloads on the two sides a
	// failure (see Report.WorkloadError), not only a warning.
	SameWorkload bool
}

// RunInfo names one run of a comparison.
type RunInfo struct {
	Name     string
	Path     string
	Format   string
	Requests int // valid requests read from per-request records; 0 without records
	Errors   int // failed requests read from per-request records
}

// Report is a complete comparison: what every renderer prints. Each side
// is one run or several; with one run per side (Paired) the report also
// joins the runs request by request and compares their stalls and server
// metrics, which need both runs' records.
type Report struct {
	References, Candidates []RunInfo
	Options                Options
	Rows                   []Row
	OnlyInReference        []string // metrics only the reference has; one run per side only
	OnlyInCandidate        []string // metrics only the candidate has; one run per side only
	PerRequest             *Join    // nil unless both runs have per-request records
	RefStalls, CandStalls  *Stalls  // nil for a run without token gaps, and with several runs per side
	// TTFTBreakdown compares the server-side TTFT stage means; nil unless
	// both runs have server metrics with a breakdown (see LoadServerSide).
	TTFTBreakdown *BreakdownComparison
	// ServerMetrics compares the server metrics both runs have, by their
	// common names; nil unless both runs have server metrics.
	ServerMetrics []ServerMetricRow
	Verdicts      []Verdict
	Warnings      []Warning
	// Workload says whether both sides replayed the same workload.
	Workload WorkloadCheck
	// RefDigest and CandDigest are the scanned records (nil without
	// records, and with several runs per side), for plots.
	RefDigest, CandDigest *Digest
}

// Paired reports whether each side is one run: a plain two-run comparison,
// whose rows have no significance test.
func (r *Report) Paired() bool { return len(r.References) == 1 && len(r.Candidates) == 1 }

// Reference is the (first) reference run.
func (r *Report) Reference() RunInfo { return r.References[0] }

// Candidate is the (first) candidate run.
func (r *Report) Candidate() RunInfo { return r.Candidates[0] }

// Compare compares the reference runs with the candidate runs.
//
// With one run per side it scans both (concurrently: the work is CPU-bound
// parsing and there are exactly two), aligns their profiles, joins their
// requests, detects stalls, lines up their server-side TTFT breakdowns and
// judges the thresholds on the error %.
//
// With several runs on a side every run is scanned once and only its
// statistics are kept (token-gap and stall figures included); each row
// holds the runs' values, median, min and max per side and a Mann–Whitney
// U test, and a bound is breached only by a difference that is larger than
// the bound and significant at Options.Alpha (benchstat's rule). A
// statistic missing from any run is left out with a warning.
func Compare(refs, cands []*Input, opts Options) (*Report, error) {
	if len(refs) == 0 || len(cands) == 0 {
		return nil, errors.New("compare: a comparison needs at least one run per side")
	}
	if opts.Alpha == 0 {
		opts.Alpha = DefaultAlpha
	}
	if !(opts.Alpha > 0 && opts.Alpha < 1) {
		return nil, fmt.Errorf("compare: alpha must be in (0, 1), got %g", opts.Alpha)
	}
	var r *Report
	var err error
	if len(refs) == 1 && len(cands) == 1 {
		r, err = comparePair(refs[0], cands[0], opts)
	} else {
		r, err = compareRuns(refs, cands, opts)
	}
	if err != nil {
		return nil, err
	}
	var warns []Warning
	r.Workload, warns = checkWorkloads(refs, cands)
	r.Warnings = append(warns, r.Warnings...)
	return r, nil
}

func comparePair(ref, cand *Input, opts Options) (*Report, error) {
	if ref == cand { // one input compared with itself: scan it once
		d, err := Scan(ref, opts.Stall)
		if err != nil {
			return nil, err
		}
		return build(ref, cand, d, d, opts), nil
	}
	var digests [2]*Digest
	var errs [2]error
	var wg sync.WaitGroup
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

// build is the comparison of one run per side: the rows of two samples of
// one run, then the per-request join, the stalls and the server side,
// which need both runs' records.
func build(ref, cand *Input, rd, cd *Digest, opts Options) *Report {
	r := &Report{References: []RunInfo{info(ref, rd)}, Candidates: []RunInfo{info(cand, cd)}, Options: opts,
		RefDigest: rd, CandDigest: cd}
	r.Warnings = append(append(r.Warnings, ref.Warnings...), cand.Warnings...)
	refP, w1 := withTokenGap(ref, rd)
	candP, w2 := withTokenGap(cand, cd)
	r.Warnings = append(r.Warnings, append(w1, w2...)...)
	r.RefStalls, r.CandStalls = rd.Stalls(), cd.Stalls()
	refS, _ := sampleOf(r.Reference(), refP, refP, r.RefStalls)
	candS, a := sampleOf(r.Candidate(), refP, candP, r.CandStalls)
	r.OnlyInReference, r.OnlyInCandidate = a.OnlyInReference, a.OnlyInCandidate
	r.Warnings = append(r.Warnings, a.Warnings...)
	r.Rows, _ = r.rowsOf([]runSample{refS}, []runSample{candS}) // what only one run has, a and its warnings say
	if (r.RefStalls == nil) != (r.CandStalls == nil) {
		r.Warnings = append(r.Warnings, warnf("token-gap stalls not compared: only one run has token gaps"))
	}
	if rd != nil && cd != nil && len(rd.Requests) > 0 && len(cd.Requests) > 0 {
		r.PerRequest = JoinRequests(rd, cd)
		r.Warnings = append(r.Warnings, r.PerRequest.Warnings...)
	} else {
		r.Warnings = append(r.Warnings, warnf("no per-request comparison: %s", missingRecords(r, rd, cd)))
	}
	r.addServerSide(ref, cand)
	r.Verdicts = r.evaluate()
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
		return fmt.Sprintf("the reference (%s) has no per-request records", r.Reference().Name)
	}
	return fmt.Sprintf("the candidate (%s) has no per-request records", r.Candidate().Name)
}

// withStallRows adds a run's stall figures, compared like metric
// statistics: token_gap p99.9 (which no profile has) after token_gap p99,
// and the stalls rows; nothing for a run without token gaps.
func withStallRows(rows []Row, st *Stalls) []Row {
	if st == nil {
		return rows
	}
	p999 := NewRow(results.TagTokenGap, "p99.9", "ms", st.P999Ms, st.P999Ms)
	if i := slices.IndexFunc(rows, func(x Row) bool { return x.Metric == results.TagTokenGap && x.Stat == "p99" }); i >= 0 {
		rows = slices.Insert(rows, i+1, p999)
	} else {
		rows = append(rows, p999)
	}
	return append(rows,
		NewRow(StallMetric, "stall_count", "stalls", float64(st.Count), float64(st.Count)),
		NewRow(StallMetric, "stalls_per_1000_gaps", "stalls/1000 gaps", st.Per1000Gaps, st.Per1000Gaps),
		NewRow(StallMetric, "blocked_stream_time_s", "s", st.BlockedS, st.BlockedS))
}

// Breaches returns the verdicts that breached their bound (beyond noise,
// with several runs per side).
func (r *Report) Breaches() []Verdict { return VerdictsWith(r.Verdicts, Breach) }

// MissingVerdicts returns the verdicts that could not be judged.
func (r *Report) MissingVerdicts() []Verdict { return VerdictsWith(r.Verdicts, Missing) }

// VerdictsWith returns the verdicts of status s, in order.
func VerdictsWith(vs []Verdict, s string) []Verdict {
	var out []Verdict
	for _, v := range vs {
		if v.Status == s {
			out = append(out, v)
		}
	}
	return out
}

// Row returns the row of metric.stat.
func (r *Report) Row(metric, stat string) (Row, bool) {
	i := slices.IndexFunc(r.Rows, func(m Row) bool { return m.Metric == metric && m.Stat == stat })
	if i < 0 {
		return Row{}, false
	}
	return r.Rows[i], true
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

package compare

import (
	"fmt"
	"slices"
	"strings"

	"github.com/simbench/simbench/results"
)

// Workload check statuses.
const (
	WorkloadSame      = "same"
	WorkloadDifferent = "different"
	WorkloadUnknown   = "unknown" // a run records no workload digest (an AIPerf export, another tool's run)
)

// WorkloadCheck says whether both sides replayed the same workload: the
// same input_config.workload.digest in every run.
type WorkloadCheck struct {
	Status string
	// Reference and Candidate are each side's distinct digests, in run
	// order; empty for a side with a run without one.
	Reference, Candidate []string
	Msg                  string // one line: what was found
}

// headlineMetrics and headlineStats select the rows the headline ranks:
// the latency and throughput figures a reader looks at first, not the
// spread statistics (std, min, max) whose errors are noise on short runs.
var (
	headlineMetrics = []string{results.TagTTFT, results.TagITL, results.TagRequestLatency,
		results.TagOutputThroughput, results.TagRequestThroughput}
	headlineStats = []string{"avg", "p50", "p90", "p99"}
)

// headlineOffenders is how many rows the headline ranks.
const headlineOffenders = 3

// Headline verdicts.
const (
	VerdictPass       = "pass"
	VerdictFail       = "fail"
	VerdictIncomplete = "incomplete" // a gated field is missing from a side
	VerdictUngated    = "ungated"    // no bound and no workload check asked for
)

// Headline is what every format says first: the verdict, the workload
// check and the worst offenders among the headline statistics.
type Headline struct {
	Verdict string
	// Detail counts the verdicts ("1 breach, 0 missing, 5 pass") and says
	// when the workloads failed the gate.
	Detail   string
	Workload WorkloadCheck
	Worst    []Row
}

// Headline is the report's headline. With Options.SameWorkload (--gate)
// different workloads fail the comparison; otherwise they are a warning.
func (r *Report) Headline() Headline {
	h := Headline{Workload: r.Workload, Worst: HeadlineOffenders(r.Rows, headlineOffenders)}
	var detail []string
	if len(r.Verdicts) > 0 {
		detail = append(detail, verdictSummary(r))
	}
	workloadFails := r.WorkloadError() != nil
	if workloadFails {
		detail = append(detail, "different workloads")
	}
	switch {
	case len(r.MissingVerdicts()) > 0:
		h.Verdict = VerdictIncomplete
	case len(r.Breaches()) > 0 || workloadFails:
		h.Verdict = VerdictFail
	case len(r.Verdicts) > 0 || r.Options.SameWorkload:
		h.Verdict = VerdictPass
	default:
		h.Verdict, detail = VerdictUngated, []string{"no bound: --gate or --fail-above sets some"}
	}
	h.Detail = strings.Join(detail, "; ")
	return h
}

// WorkloadError is the gate's failure when it asks for the same workload on
// both sides (Options.SameWorkload) and the digests differ; nil otherwise.
func (r *Report) WorkloadError() error {
	if r.Options.SameWorkload && r.Workload.Status == WorkloadDifferent {
		return fmt.Errorf("--gate: %s", r.Workload.Msg)
	}
	return nil
}

// HeadlineOffenders returns up to n rows of the headline statistics (avg,
// p50, p90 and p99 of TTFT, ITL, request latency and the throughputs) with
// the largest |error %| (see WorstOffenders), one per metric: its worst.
func HeadlineOffenders(rows []Row, n int) []Row {
	var head []Row
	for _, row := range rows {
		if slices.Contains(headlineMetrics, row.Metric) && slices.Contains(headlineStats, row.Stat) {
			head = append(head, row)
		}
	}
	var out []Row
	for _, row := range WorstOffenders(head, len(head)) {
		if len(out) < n && !slices.ContainsFunc(out, func(o Row) bool { return o.Metric == row.Metric }) {
			out = append(out, row)
		}
	}
	return out
}

// checkWorkloads compares the workload digests of every run of both sides.
func checkWorkloads(refs, cands []*Input) (WorkloadCheck, []Warning) {
	ref, refMissing := sideWorkloads(refs)
	cand, candMissing := sideWorkloads(cands)
	wc := WorkloadCheck{Status: WorkloadUnknown, Reference: digests(ref), Candidate: digests(cand)}
	switch {
	case refMissing != "" && candMissing != "":
		wc.Msg = "not checked: neither side records a workload digest (simbench's runs do, AIPerf's exports do not)"
		return wc, nil
	case refMissing != "":
		wc.Msg = "not checked: the reference " + refMissing
		return wc, nil
	case candMissing != "":
		wc.Msg = "not checked: the candidate " + candMissing
		return wc, nil
	case len(ref) == 1 && len(cand) == 1 && ref[0].Digest == cand[0].Digest:
		wc.Status, wc.Msg = WorkloadSame, fmt.Sprintf("same workload on both sides (digest %s, %s)", short(ref[0].Digest), describeWorkload(ref[0]))
		return wc, nil
	}
	wc.Status = WorkloadDifferent
	wc.Msg = "different workloads: " + workloadDifference(ref, cand)
	return wc, []Warning{warnf("%s: the runs did not replay the same requests, so their differences are not the serving stack's alone", wc.Msg)}
}

// workloadDifference says what differs: within a side, or between sides.
func workloadDifference(ref, cand []results.WorkloadInfo) string {
	for _, side := range []struct {
		name string
		ws   []results.WorkloadInfo
	}{{"reference", ref}, {"candidate", cand}} {
		if len(side.ws) > 1 {
			return fmt.Sprintf("the %s runs' workload digests differ (%s)", side.name, strings.Join(shortAll(digests(side.ws)), ", "))
		}
	}
	return fmt.Sprintf("the workload digests differ (reference %s, %s; candidate %s, %s)",
		short(ref[0].Digest), describeWorkload(ref[0]), short(cand[0].Digest), describeWorkload(cand[0]))
}

// sideWorkloads returns the distinct workloads of a side's runs, or why a
// run has none.
func sideWorkloads(ins []*Input) ([]results.WorkloadInfo, string) {
	var out []results.WorkloadInfo
	for _, in := range ins {
		w, why := runWorkload(in)
		if why != "" {
			return nil, why
		}
		if !slices.ContainsFunc(out, func(o results.WorkloadInfo) bool { return o.Digest == w.Digest }) {
			out = append(out, w)
		}
	}
	return out, ""
}

// runWorkload is a run's input_config.workload, or why it has none.
func runWorkload(in *Input) (results.WorkloadInfo, string) {
	if in.Profile == nil {
		return results.WorkloadInfo{}, in.Path + " has no aggregate profile"
	}
	ic, err := results.ParseInputConfig(in.Profile.InputConfig)
	if err != nil {
		return results.WorkloadInfo{}, fmt.Sprintf("%s has an unreadable %v", in.Path, err)
	}
	if ic.Workload == nil || ic.Workload.Digest == "" {
		return results.WorkloadInfo{}, in.Path + " records no workload digest"
	}
	return *ic.Workload, ""
}

func describeWorkload(w results.WorkloadInfo) string {
	s := fmt.Sprintf("%d requests", w.Requests)
	if w.Source != "" {
		s += " from " + w.Source
	}
	return s
}

func digests(ws []results.WorkloadInfo) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.Digest
	}
	return out
}

// short is a digest's first 12 hex digits, as git abbreviates.
func short(d string) string { return d[:min(len(d), 12)] }

func shortAll(ds []string) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = short(d)
	}
	return out
}

// offenderList is the headline's worst offenders on one line:
// "inter_token_latency.p99 +48.72%, …", "~" before an error within
// run-to-run noise; code formats each field name.
func (r *Report) offenderList(worst []Row, code func(string) string) string {
	if len(worst) == 0 {
		return "none (no headline statistic differs)"
	}
	parts := make([]string, len(worst))
	for i, m := range worst {
		e := fmtPct(m.ErrorPct)
		if !r.Paired() {
			e = noiseError(m)
		}
		parts[i] = code(m.Metric+"."+m.Stat) + " " + e
	}
	return strings.Join(parts, ", ")
}

// headlineScope says which statistics the worst offenders are taken from.
const headlineScope = "avg, p50, p90, p99 of TTFT, ITL, request latency and throughput"

// writeHeadlineText writes the headline under the text report's header.
func writeHeadlineText(ew *errWriter, r *Report) {
	h := r.Headline()
	ew.printf("  verdict:   %s (%s)\n", strings.ToUpper(h.Verdict), h.Detail)
	ew.printf("  workload:  %s%s\n", workloadLevel(r, "warning: ", "failure: "), h.Workload.Msg)
	ew.printf("  worst:     %s (%s)\n\n", r.offenderList(h.Worst, func(s string) string { return s }), headlineScope)
}

// writeHeadlineMarkdown writes the headline under the markdown title.
func writeHeadlineMarkdown(ew *errWriter, r *Report) {
	h := r.Headline()
	icon := map[string]string{VerdictPass: "✅", VerdictFail: "❌", VerdictIncomplete: "⚠️", VerdictUngated: "➖"}[h.Verdict]
	ew.printf("- **Verdict:** %s %s (%s)\n", icon, h.Verdict, mdEscape(h.Detail))
	wicon := map[string]string{WorkloadSame: "✅", WorkloadDifferent: workloadLevel(r, "⚠️", "❌"), WorkloadUnknown: "❔"}[h.Workload.Status]
	ew.printf("- **Workload:** %s %s\n", wicon, mdEscape(h.Workload.Msg))
	ew.printf("- **Worst offenders** (%s): %s\n\n", headlineScope, r.offenderList(h.Worst, func(s string) string { return "`" + s + "`" }))
}

// workloadLevel is warn for different workloads, fail when the gate fails
// on them, "" when the workloads are not different.
func workloadLevel(r *Report, warn, fail string) string {
	switch {
	case r.Workload.Status != WorkloadDifferent:
		return ""
	case r.WorkloadError() != nil:
		return fail
	}
	return warn
}

type jsonHeadline struct {
	Verdict  string         `json:"verdict"`
	Detail   string         `json:"detail"`
	Workload jsonWorkload   `json:"workload"`
	Worst    []jsonOffender `json:"worst_offenders"`
}

type jsonWorkload struct {
	Status           string   `json:"status"`
	ReferenceDigests []string `json:"reference_digests"`
	CandidateDigests []string `json:"candidate_digests"`
	Message          string   `json:"message"`
}

type jsonOffender struct {
	Metric    string   `json:"metric"`
	Stat      string   `json:"stat"`
	Reference float64  `json:"reference"`
	Candidate float64  `json:"candidate"`
	ErrorPct  *float64 `json:"error_pct"`
}

// headlineJSON is the headline's JSON object.
func headlineJSON(r *Report) jsonHeadline {
	h := r.Headline()
	out := jsonHeadline{Verdict: h.Verdict, Detail: h.Detail, Worst: []jsonOffender{},
		Workload: jsonWorkload{Status: h.Workload.Status, ReferenceDigests: orEmpty(h.Workload.Reference),
			CandidateDigests: orEmpty(h.Workload.Candidate), Message: h.Workload.Msg}}
	for _, m := range h.Worst {
		out.Worst = append(out.Worst, jsonOffender{Metric: m.Metric, Stat: m.Stat, Reference: m.Reference, Candidate: m.Candidate, ErrorPct: m.ErrorPct})
	}
	return out
}

package compare

import (
	"encoding/json"
	"io"

	"github.com/simbench/simbench/servermetrics"
)

// maxJSONEvents bounds the stall list in the JSON; the counts are exact.
const maxJSONEvents = 100

type jsonReport struct {
	Headline        jsonHeadline       `json:"headline"`
	Reference       jsonRun            `json:"reference"`
	Candidate       jsonRun            `json:"candidate"`
	Metrics         []jsonRow          `json:"metrics"`
	OnlyInReference []string           `json:"only_in_reference"`
	OnlyInCandidate []string           `json:"only_in_candidate"`
	PerRequest      *jsonJoin          `json:"per_request"`
	Stalls          jsonStallPair      `json:"stalls"`
	TTFTBreakdown   *jsonBreakdown     `json:"ttft_breakdown"`
	ServerMetrics   []jsonServerMetric `json:"server_metrics"`
	Verdicts        []jsonVerdict      `json:"verdicts"`
	Warnings        []string           `json:"warnings"`
}

// jsonRunsReport is the JSON of several runs per side ("mode":
// "multi-run").
type jsonRunsReport struct {
	Mode       string        `json:"mode"`
	Headline   jsonHeadline  `json:"headline"`
	Alpha      float64       `json:"alpha"`
	References []jsonRun     `json:"references"`
	Candidates []jsonRun     `json:"candidates"`
	Metrics    []jsonRunsRow `json:"metrics"`
	Verdicts   []jsonVerdict `json:"verdicts"`
	Warnings   []string      `json:"warnings"`
}

type jsonSpread struct {
	Median float64   `json:"median"`
	Min    float64   `json:"min"`
	Max    float64   `json:"max"`
	Values []float64 `json:"values"`
}

type jsonRunsRow struct {
	Metric      string     `json:"metric"`
	Stat        string     `json:"stat"`
	Unit        string     `json:"unit"`
	Reference   jsonSpread `json:"reference"`
	Candidate   jsonSpread `json:"candidate"`
	ErrorPct    *float64   `json:"error_pct"`
	U           float64    `json:"mann_whitney_u"`
	P           float64    `json:"p_value"`
	Exact       bool       `json:"exact_p"`
	Significant bool       `json:"significant"`
}

type jsonRun struct {
	Name     string `json:"name"`
	Path     string `json:"path"`
	Format   string `json:"format"`
	Requests int    `json:"requests"`
	Errors   int    `json:"failed_requests"`
}

type jsonRow struct {
	Metric    string   `json:"metric"`
	Stat      string   `json:"stat"`
	Reference float64  `json:"reference"`
	Candidate float64  `json:"candidate"`
	Diff      float64  `json:"diff"`
	ErrorPct  *float64 `json:"error_pct"`
}

type jsonJoin struct {
	Key                string           `json:"key"`
	Matched            int              `json:"matched"`
	UnmatchedReference int              `json:"unmatched_reference"`
	UnmatchedCandidate int              `json:"unmatched_candidate"`
	OSLMismatches      int              `json:"output_token_mismatches"`
	ISLMismatches      int              `json:"input_token_mismatches"`
	Metrics            []jsonJoinMetric `json:"metrics"`
}

type jsonJoinMetric struct {
	Metric       string   `json:"metric"`
	Unit         string   `json:"unit"`
	N            int      `json:"n"`
	MAPEPct      *float64 `json:"mape_pct"`
	MeanError    float64  `json:"mean_error"`
	MeanErrorPct *float64 `json:"mean_error_pct"`
	PearsonR     *float64 `json:"pearson_r"`
	Bias         string   `json:"bias"`
	Grade        string   `json:"grade"`
}

type jsonStallPair struct {
	Reference *jsonStalls `json:"reference"`
	Candidate *jsonStalls `json:"candidate"`
}

type jsonStalls struct {
	Count                 int              `json:"count"`
	Gaps                  int              `json:"gaps"`
	K                     float64          `json:"k"`
	FloorMs               float64          `json:"floor_ms"`
	MedianGapMs           float64          `json:"median_gap_ms"`
	ThresholdMs           float64          `json:"threshold_ms"`
	Per1000Gaps           float64          `json:"stalls_per_1000_gaps"`
	BlockedS              float64          `json:"blocked_stream_time_s"`
	P99Ms                 float64          `json:"token_gap_p99_ms"`
	P999Ms                float64          `json:"token_gap_p99_9_ms"`
	MaxMs                 float64          `json:"token_gap_max_ms"`
	FirstS                *float64         `json:"first_stall_s"`
	LastS                 *float64         `json:"last_stall_s"`
	ByDecile              [10]int          `json:"stalls_by_run_decile"`
	PrefillOverlap        int              `json:"prefill_overlap"`
	OverlapShare          float64          `json:"prefill_overlap_share"`
	PrefillCoverage       float64          `json:"prefill_coverage"`
	Scope                 string           `json:"attribution_scope"`
	InterferenceSuspected bool             `json:"chunked_prefill_interference_suspected"`
	Events                []jsonStallEvent `json:"events"`
	EventsTruncated       bool             `json:"events_truncated"`
}

type jsonStallEvent struct {
	AtS            float64 `json:"at_s"`
	GapMs          float64 `json:"gap_ms"`
	PrefillOverlap bool    `json:"prefill_overlap"`
}

type jsonBreakdown struct {
	Reference   jsonBreakdownRun   `json:"reference"`
	Candidate   jsonBreakdownRun   `json:"candidate"`
	SameSource  bool               `json:"same_source"`
	Stages      []jsonBreakdownRow `json:"stages"`
	StagesTotal jsonBreakdownRow   `json:"stages_total"`
	TTFT        jsonBreakdownRow   `json:"ttft"`
}

type jsonServerMetric struct {
	Metric          string   `json:"metric"`
	Stat            string   `json:"stat"`
	Unit            string   `json:"unit"`
	ReferenceServer string   `json:"reference_server"`
	CandidateServer string   `json:"candidate_server"`
	ReferenceFamily string   `json:"reference_family"`
	CandidateFamily string   `json:"candidate_family"`
	Reference       float64  `json:"reference"`
	Candidate       float64  `json:"candidate"`
	Diff            float64  `json:"diff"`
	ErrorPct        *float64 `json:"error_pct"`
}

type jsonBreakdownRun struct {
	Server     string  `json:"server"`
	TTFTFamily string  `json:"ttft_family"`
	TTFTMeanMs float64 `json:"ttft_mean_ms"`
	TTFTCount  float64 `json:"ttft_count"`
	StageSumMs float64 `json:"stage_sum_ms"`
	Additive   bool    `json:"additive"`
	Reason     string  `json:"reason"`
}

type jsonBreakdownRow struct {
	Stage       string   `json:"stage"`
	Phase       string   `json:"phase"`
	ReferenceMs *float64 `json:"reference_ms"`
	CandidateMs *float64 `json:"candidate_ms"`
	DiffMs      float64  `json:"diff_ms"`
	ErrorPct    *float64 `json:"error_pct"`
	GapSharePct *float64 `json:"gap_share_pct"`
}

type jsonVerdict struct {
	Scope    string   `json:"scope,omitempty"`
	Field    string   `json:"field"`
	Metric   string   `json:"metric"`
	Stat     string   `json:"stat"`
	BoundPct float64  `json:"bound_pct"`
	ErrorPct *float64 `json:"error_pct"`
	Status   string   `json:"status"`
	Reason   string   `json:"reason"`
}

// WriteJSON writes the report as one indented JSON object. Undefined
// percentages and correlations are null; the encoder refuses NaN and Inf,
// so none can reach the file. With several runs per side the object has
// "mode": "multi-run", the runs of each side, and per statistic each
// side's values, median, min and max and the Mann–Whitney test.
func WriteJSON(w io.Writer, r *Report) error {
	if !r.Paired() {
		return encodeJSON(w, runsJSON(r))
	}
	return encodeJSON(w, pairJSON(r))
}

// pairJSON is the JSON object of a comparison of one run per side.
func pairJSON(r *Report) jsonReport {
	out := jsonReport{Headline: headlineJSON(r), Reference: runJSON(r.Reference()), Candidate: runJSON(r.Candidate()),
		Metrics: []jsonRow{}, OnlyInReference: orEmpty(r.OnlyInReference), OnlyInCandidate: orEmpty(r.OnlyInCandidate),
		PerRequest: joinJSON(r.PerRequest), Verdicts: []jsonVerdict{}, Warnings: []string{},
		Stalls: jsonStallPair{stallsJSON(r.RefStalls, r.Options.Stall), stallsJSON(r.CandStalls, r.Options.Stall)}}
	for _, row := range r.Rows {
		out.Metrics = append(out.Metrics, jsonRow{row.Metric, row.Stat, row.Reference, row.Candidate, row.Diff, row.ErrorPct})
	}
	out.TTFTBreakdown = breakdownJSON(r.TTFTBreakdown)
	for _, m := range r.ServerMetrics {
		out.ServerMetrics = append(out.ServerMetrics, jsonServerMetric{m.Metric, m.Stat, m.Unit, m.RefServer, m.CandServer,
			m.RefFamily, m.CandFamily, m.Reference, m.Candidate, m.Diff, m.ErrorPct})
	}
	out.Verdicts, out.Warnings = verdictsJSON(r.Verdicts), warningsJSON(r.Warnings)
	return out
}

func runsJSON(r *Report) jsonRunsReport {
	out := jsonRunsReport{Mode: "multi-run", Headline: headlineJSON(r), Alpha: r.Options.Alpha, References: []jsonRun{}, Candidates: []jsonRun{},
		Metrics: []jsonRunsRow{}, Verdicts: verdictsJSON(r.Verdicts), Warnings: warningsJSON(r.Warnings)}
	for _, ri := range r.References {
		out.References = append(out.References, runJSON(ri))
	}
	for _, ri := range r.Candidates {
		out.Candidates = append(out.Candidates, runJSON(ri))
	}
	for _, m := range r.Rows {
		out.Metrics = append(out.Metrics, jsonRunsRow{m.Metric, m.Stat, m.Unit, spreadJSON(m.Reference, m.RefRuns),
			spreadJSON(m.Candidate, m.CandRuns), m.ErrorPct, m.Test.U, m.Test.P, m.Test.Exact, m.Significant})
	}
	return out
}

func spreadJSON(median float64, s Spread) jsonSpread {
	return jsonSpread{Median: median, Min: s.Min, Max: s.Max, Values: s.Values}
}

// breakdownJSON is the TTFT breakdown section; null without one. A stage
// a run lacks has a null mean there.
func breakdownJSON(b *BreakdownComparison) *jsonBreakdown {
	if b == nil {
		return nil
	}
	out := &jsonBreakdown{Reference: breakdownRunJSON(b.Reference), Candidate: breakdownRunJSON(b.Candidate),
		SameSource: b.SameSource, Stages: []jsonBreakdownRow{}, StagesTotal: breakdownRowJSON(b.Total),
		TTFT: breakdownRowJSON(b.TTFT)}
	for _, row := range b.Stages {
		out.Stages = append(out.Stages, breakdownRowJSON(row))
	}
	return out
}

func breakdownRowJSON(r BreakdownRow) jsonBreakdownRow {
	return jsonBreakdownRow{Stage: r.Stage, Phase: r.Phase, ReferenceMs: r.Reference, CandidateMs: r.Candidate,
		DiffMs: r.DiffMs, ErrorPct: r.ErrorPct, GapSharePct: r.GapSharePct}
}

func breakdownRunJSON(b *servermetrics.TTFTBreakdown) jsonBreakdownRun {
	return jsonBreakdownRun{Server: b.Server, TTFTFamily: b.TTFTFamily, TTFTMeanMs: b.TTFTMeanMs,
		TTFTCount: b.TTFTCount, StageSumMs: b.StageSumMs, Additive: b.Additive, Reason: b.Reason}
}

func verdictsJSON(vs []Verdict) []jsonVerdict {
	out := []jsonVerdict{}
	for _, v := range vs {
		out = append(out, jsonVerdict{v.Scope, v.Field(), v.Metric, v.Stat, v.MaxPct, v.ErrorPct, v.Status, v.Reason})
	}
	return out
}

func warningsJSON(ws []Warning) []string {
	out := []string{}
	for _, wn := range ws {
		out = append(out, wn.Msg)
	}
	return out
}

// encodeJSON writes v indented, without HTML escaping.
func encodeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func runJSON(ri RunInfo) jsonRun {
	return jsonRun{Name: ri.Name, Path: ri.Path, Format: ri.Format, Requests: ri.Requests, Errors: ri.Errors}
}

func joinJSON(j *Join) *jsonJoin {
	if j == nil {
		return nil
	}
	out := &jsonJoin{Key: j.Key, Matched: j.Matched, UnmatchedReference: j.UnmatchedReference,
		UnmatchedCandidate: j.UnmatchedCandidate, OSLMismatches: j.OSLMismatches, ISLMismatches: j.ISLMismatches,
		Metrics: []jsonJoinMetric{}}
	for _, m := range j.Metrics {
		out.Metrics = append(out.Metrics, jsonJoinMetric{m.Metric, m.Unit, m.N, m.MAPEPct, m.MeanError,
			m.MeanErrorPct, m.PearsonR, m.Bias, m.Grade})
	}
	return out
}

func stallsJSON(s *Stalls, o StallOptions) *jsonStalls {
	if s == nil {
		return nil
	}
	out := &jsonStalls{Count: s.Count, Gaps: s.Gaps, K: o.K, FloorMs: o.FloorMs, MedianGapMs: s.MedianGapMs,
		ThresholdMs: s.ThresholdMs, Per1000Gaps: s.Per1000Gaps, BlockedS: s.BlockedS, P99Ms: s.P99Ms,
		P999Ms: s.P999Ms, MaxMs: s.MaxMs, ByDecile: s.ByDecile, PrefillOverlap: s.PrefillOverlap,
		OverlapShare: s.OverlapShare, PrefillCoverage: s.PrefillCoverage, Scope: s.Scope,
		InterferenceSuspected: s.InterferenceSuspected, Events: []jsonStallEvent{}}
	if s.Count > 0 {
		out.FirstS, out.LastS = &s.FirstS, &s.LastS
	}
	for _, e := range s.Events[:min(len(s.Events), maxJSONEvents)] {
		out.Events = append(out.Events, jsonStallEvent(e))
	}
	out.EventsTruncated = len(s.Events) > maxJSONEvents
	return out
}

package compare

import (
	"fmt"
	"io"
)

type jsonMultiReport struct {
	Mode       string         `json:"mode"`
	Alpha      float64        `json:"alpha"`
	References []jsonRun      `json:"references"`
	Candidates []jsonRun      `json:"candidates"`
	Metrics    []jsonMultiRow `json:"metrics"`
	Verdicts   []jsonVerdict  `json:"verdicts"`
	Warnings   []string       `json:"warnings"`
}

type jsonSpread struct {
	Median float64   `json:"median"`
	Min    float64   `json:"min"`
	Max    float64   `json:"max"`
	Values []float64 `json:"values"`
}

type jsonMultiRow struct {
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

// WriteMultiJSON writes a multi-run comparison as one indented JSON object
// ("mode": "multi-run"); undefined percentages are null.
func WriteMultiJSON(w io.Writer, r *MultiReport) error {
	out := jsonMultiReport{Mode: "multi-run", Alpha: r.Options.Alpha, References: []jsonRun{}, Candidates: []jsonRun{},
		Metrics: []jsonMultiRow{}, Verdicts: []jsonVerdict{}, Warnings: []string{}}
	for _, ri := range r.References {
		out.References = append(out.References, runJSON(ri))
	}
	for _, ri := range r.Candidates {
		out.Candidates = append(out.Candidates, runJSON(ri))
	}
	for _, m := range r.Rows {
		out.Metrics = append(out.Metrics, jsonMultiRow{m.Metric, m.Stat, m.Unit, spreadJSON(m.Reference),
			spreadJSON(m.Candidate), m.ErrorPct, m.Test.U, m.Test.P, m.Test.Exact, m.Significant})
	}
	out.Verdicts, out.Warnings = verdictsJSON(r.Verdicts), warningsJSON(r.Warnings)
	return encodeJSON(w, out)
}

func spreadJSON(s Spread) jsonSpread {
	return jsonSpread{Median: s.Median, Min: s.Min, Max: s.Max, Values: s.Values}
}

// WriteMultiJUnit writes one testcase per gated field: a breach beyond
// noise is a <failure>, a missing field an <error>; a "~" verdict passes
// with its reason in <system-out>.
func WriteMultiJUnit(w io.Writer, r *MultiReport) error {
	name := fmt.Sprintf("simbench compare %d candidate vs %d reference runs", len(r.Candidates), len(r.References))
	return writeJUnitSuite(w, name, r.Verdicts, func(v Verdict) junitCase { return multiJUnitCase(r, v) })
}

func multiJUnitCase(r *MultiReport, v Verdict) junitCase {
	detail := v.Reason
	if m, ok := r.Row(v.Metric, v.Stat); ok {
		detail = fmt.Sprintf("reference median %s %s %s, candidate median %s %s %s, error %s, p = %s, bound ±%g%%: %s",
			fmtValue(m.Stat, m.Reference.Median), spreadRange(m.Stat, m.Reference), m.Unit,
			fmtValue(m.Stat, m.Candidate.Median), spreadRange(m.Stat, m.Candidate), m.Unit,
			fmtPct(m.ErrorPct), fmtP(m.Test.P), v.MaxPct, v.Reason)
	}
	return junitCaseFor(v, detail)
}

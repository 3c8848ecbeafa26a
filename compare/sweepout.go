package compare

import (
	"encoding/xml"
	"fmt"
	"io"

	"github.com/simbench/simbench/capacity"
)

// WriteSweepMarkdown writes the load-sweep comparison for a pull request:
// a summary line with both capacities, the capacity table, the points
// table, the verdicts, every point's statistics folded in a <details>
// block, the plots and the warnings.
func WriteSweepMarkdown(w io.Writer, r *SweepReport, plots []string) error {
	ew := &errWriter{w: w}
	ew.printf("### simbench compare: load sweep `%s` vs `%s` by %s\n\n%s\n\n", r.Candidate.Name, r.Reference.Name, r.Load, sweepSummaryLine(r))
	ew.printf("#### SLO capacity\n\nThe highest %s meeting the SLO before the first that fails (%s).\n\n", r.Load, mdEscape(slosText(r)))
	mdTable(ew, r.capacityTable(), "l")
	if m := methodLines(r, "- "); m != "" {
		ew.printf("%s\n", m)
	}
	ew.printf("#### Points\n\nError %% of the headline statistics at every %s; attainment and SLO met: reference / candidate.\n\n", r.Load)
	mdTable(ew, r.pointsTable(), "r")
	if s := stoppedLines(r, "- "); s != "" {
		ew.printf("%s\n", s)
	}
	if len(r.Verdicts) > 0 {
		mdVerdicts(ew, r.Verdicts, "Error", sweepVerdictNote)
	}
	for _, p := range r.Points {
		shown := shownRows(p.Report.Rows)
		ew.printf("<details><summary>%s: all %d statistics (reference: %s, candidate: %s)</summary>\n\n", capitalize(r.LoadText(p.Load)),
			len(shown), mdCode(pointPath(r.Reference, p.Ref)), mdCode(pointPath(r.Candidate, p.Cand)))
		mdTable(ew, rowsMarkdown(p.Report, shown, true), "ll")
		ew.printf("%s</details>\n\n", mdOnly(p.Report))
	}
	writePlotsMarkdown(ew, plots)
	writeWarningsMarkdown(ew, r.Warnings)
	return ew.err
}

func sweepSummaryLine(r *SweepReport) string {
	c := r.Capacity
	s := fmt.Sprintf("**Capacity** (%s): reference %s, candidate %s", r.Load, capEstimate(c.Reference), capEstimate(c.Candidate))
	if c.ErrorPct != nil {
		s += fmt.Sprintf(" (%s)", fmtPct(c.ErrorPct))
	}
	s += fmt.Sprintf("; %d loads compared", len(r.Points))
	if n := len(r.OnlyInReference) + len(r.OnlyInCandidate); n > 0 {
		s += fmt.Sprintf(", %d on one side only", n)
	}
	if len(r.Verdicts) > 0 {
		s += "; gate: " + sweepGateBadge(r)
	}
	return s + "."
}

func sweepGateBadge(r *SweepReport) string {
	switch {
	case len(r.MissingVerdicts()) > 0:
		return "⚠️ incomplete (" + sweepVerdictSummary(r) + ")"
	case len(r.Breaches()) > 0:
		return "❌ fail (" + sweepVerdictSummary(r) + ")"
	}
	return "✅ pass (" + sweepVerdictSummary(r) + ")"
}

type jsonSweepReport struct {
	Mode            string           `json:"mode"`
	Load            capacity.Load    `json:"load"`
	Reference       jsonSweepSide    `json:"reference"`
	Candidate       jsonSweepSide    `json:"candidate"`
	Capacity        jsonCapacity     `json:"capacity"`
	Points          []jsonSweepPoint `json:"points"`
	OnlyInReference []float64        `json:"only_in_reference"`
	OnlyInCandidate []float64        `json:"only_in_candidate"`
	Verdicts        []jsonVerdict    `json:"verdicts"`
	Warnings        []string         `json:"warnings"`
}

type jsonSweepSide struct {
	Name             string         `json:"name"`
	Path             string         `json:"path"`
	Goodput          string         `json:"goodput"`
	AttainmentTarget float64        `json:"attainment_target"`
	Loads            []float64      `json:"loads"`
	Stopped          *capacity.Stop `json:"stopped"`
}

type jsonCapacity struct {
	Reference  *capacity.Capacity `json:"reference"`
	Candidate  *capacity.Capacity `json:"candidate"`
	Diff       *float64           `json:"diff"`
	ErrorPct   *float64           `json:"error_pct"`
	LowerBound bool               `json:"lower_bound"`
}

type jsonSweepPoint struct {
	Load       float64        `json:"load"`
	Reference  capacity.Point `json:"reference"`
	Candidate  capacity.Point `json:"candidate"`
	Comparison jsonReport     `json:"comparison"`
}

// WriteSweepJSON writes the load-sweep comparison as one indented JSON
// object ("mode": "load-sweep"): both sweeps, "capacity" with both sides'
// capacities (as their summaries have them) and the estimate's error,
// every load both ran with both summary points and the full comparison of
// its runs (the object `simbench compare` writes for two runs), the loads
// only one side ran, the verdicts and the warnings.
func WriteSweepJSON(w io.Writer, r *SweepReport) error {
	c := r.Capacity
	out := jsonSweepReport{Mode: "load-sweep", Load: r.Load, Reference: sweepSideJSON(r.Reference), Candidate: sweepSideJSON(r.Candidate),
		Capacity: jsonCapacity{c.Reference, c.Candidate, c.Diff, c.ErrorPct, c.LowerBound}, Points: []jsonSweepPoint{},
		OnlyInReference: orEmptyFloats(r.OnlyInReference), OnlyInCandidate: orEmptyFloats(r.OnlyInCandidate),
		Verdicts: verdictsJSON(r.Verdicts), Warnings: warningsJSON(r.Warnings)}
	for _, p := range r.Points {
		out.Points = append(out.Points, jsonSweepPoint{p.Load, p.Ref, p.Cand, pairJSON(p.Report)})
	}
	return encodeJSON(w, out)
}

func sweepSideJSON(s SweepSide) jsonSweepSide {
	loads := make([]float64, len(s.Summary.Points))
	for i, p := range s.Summary.Points {
		loads[i] = p.Value()
	}
	return jsonSweepSide{Name: s.Name, Path: s.Path, Goodput: s.Summary.Goodput, AttainmentTarget: s.Summary.AttainmentTarget,
		Loads: loads, Stopped: s.Summary.Stopped}
}

func orEmptyFloats(v []float64) []float64 {
	if v == nil {
		return []float64{}
	}
	return v
}

// WriteSweepJUnit writes one testcase per verdict, the capacity bound's
// named "capacity" and each point's by its load ("concurrency 4:
// time_to_first_token.avg"), as WriteJUnit does for two runs.
func WriteSweepJUnit(w io.Writer, r *SweepReport) error {
	name := fmt.Sprintf("simbench compare load sweep %s vs %s", r.Candidate.Name, r.Reference.Name)
	return writeJUnitSuites(w, verdictSuites(name, r.Verdicts, r.junitDetail))
}

// junitDetail is a verdict's values: both capacity estimates, or the
// point's two values.
func (r *SweepReport) junitDetail(v Verdict) string {
	if v.Metric == CapacityField {
		return fmt.Sprintf("reference capacity %s, candidate %s (%s), error %s, bound ±%g%%: %s", capEstimate(r.Capacity.Reference),
			capEstimate(r.Capacity.Candidate), r.Load, fmtPct(v.ErrorPct), v.MaxPct, v.Reason)
	}
	for _, p := range r.Points {
		if r.LoadText(p.Load) == v.Scope {
			return junitDetail(p.Report, v)
		}
	}
	return v.Reason
}

// writeJUnitSuites writes the XML header and the suites.
func writeJUnitSuites(w io.Writer, out junitSuites) error {
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

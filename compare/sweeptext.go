package compare

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/simbench/simbench/capacity"
	"github.com/simbench/simbench/results"
)

// sweepHeadline are the statistics of the points table: the error % of
// each at every load.
var sweepHeadline = []struct{ metric, stat, label string }{
	{results.TagTTFT, "avg", "TTFT avg"}, {results.TagTTFT, "p99", "TTFT p99"},
	{results.TagITL, "avg", "ITL avg"}, {results.TagITL, "p99", "ITL p99"},
	{results.TagRequestLatency, "avg", "latency avg"},
	{results.TagOutputThroughput, "avg", "output tok/s"}, {results.TagRequestThroughput, "avg", "req/s"},
}

// WriteSweep writes the report in format: text, markdown, json or junit;
// plots are the markdown's image links.
func WriteSweep(w io.Writer, format string, r *SweepReport, plots []string) error {
	switch format {
	case "text":
		return WriteSweepText(w, r)
	case "markdown":
		return WriteSweepMarkdown(w, r, plots)
	case "json":
		return WriteSweepJSON(w, r)
	case "junit":
		return WriteSweepJUnit(w, r)
	}
	return fmt.Errorf("compare: unknown format %q (want text, markdown, json or junit)", format)
}

// WriteSweepText writes the load-sweep comparison as text: both sweeps,
// the SLO capacities, a table of the headline errors at every load
// (attainment and SLO verdict of both sides beside them), every point's
// full table of AIPerf fields, the verdicts and the warnings.
func WriteSweepText(w io.Writer, r *SweepReport) error {
	ew := &errWriter{w: w}
	ew.printf("simbench compare   load sweeps by %s   error %% = (candidate − reference) / reference × 100\n", r.Load)
	ew.printf("  reference: %s\n  candidate: %s\n", sweepDescribe(r.Reference), sweepDescribe(r.Candidate))
	ew.printf("%s", stoppedLines(r, "  "))
	ew.printf("\nSLO capacity: the highest %s meeting the SLO before the first that fails (%s)\n", r.Load, slosText(r))
	ew.do(func(w io.Writer) error { return plain(w, r.capacityTable(), "l") })
	ew.printf("%s", methodLines(r, "  "))
	ew.printf("\nPoints by %s: error %% of the headline statistics (attainment and SLO met: reference / candidate)\n", r.Load)
	ew.do(func(w io.Writer) error { return plain(w, r.pointsTable(), "r") })
	for _, p := range r.Points {
		ew.printf("\n%s: reference %s, candidate %s\n", capitalize(r.LoadText(p.Load)), pointPath(r.Reference, p.Ref), pointPath(r.Candidate, p.Cand))
		ew.do(metricsBox(p.Report).write)
		ew.printf("%s", onlyLines(p.Report))
	}
	if len(r.Verdicts) > 0 {
		ew.printf("\nVerdicts: %s\n", sweepVerdictSummary(r))
		ew.do(func(w io.Writer) error { return plain(w, verdictTable(r.Verdicts, sweepVerdictNote), "llrrl") })
	}
	writeWarningsText(ew, r.Warnings)
	return ew.err
}

// slosText is both sweeps' SLOs, once when they agree.
func slosText(r *SweepReport) string {
	a, b := sloText(r.Reference.Summary), sloText(r.Candidate.Summary)
	if a == b {
		return a + ", both sweeps"
	}
	return "reference " + a + "; candidate " + b
}

func sweepDescribe(s SweepSide) string {
	return fmt.Sprintf("%s (%s, %d points: %s %s)", s.Name, s.Path, len(s.Summary.Points), s.Summary.Load, loadValues(s.Summary.Points))
}

func loadValues(pts []capacity.Point) string {
	s := make([]string, len(pts))
	for i, p := range pts {
		s[i] = fmtLoad(p.Value())
	}
	return strings.Join(s, ", ")
}

func fmtLoad(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func pointPath(s SweepSide, p capacity.Point) string { return s.Path + "/" + p.Dir }

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// stoppedLines say where a sweep stopped early, and why, each line after
// prefix.
func stoppedLines(r *SweepReport, prefix string) string {
	var sb strings.Builder
	for _, side := range []struct {
		name string
		s    SweepSide
	}{{"reference", r.Reference}, {"candidate", r.Candidate}} {
		if st := side.s.Summary.Stopped; st != nil {
			fmt.Fprintf(&sb, "%s%s stopped after %s %s (%s): %s\n", prefix, side.name, r.Load, fmtLoad(st.After), st.Reason, st.Detail)
		}
	}
	return sb.String()
}

// capacityTable is both capacities side by side with the estimate's error.
func (r *SweepReport) capacityTable() [][]string {
	c := r.Capacity
	rows := [][]string{{"", "Reference", "Candidate", "Diff", "Error"}}
	rows = append(rows, []string{"status", capStatus(c.Reference), capStatus(c.Candidate), "", ""})
	rows = append(rows, []string{"highest load meeting the SLO", capLoad(c.Reference, capacity.Capacity.Passing),
		capLoad(c.Candidate, capacity.Capacity.Passing), "", ""})
	rows = append(rows, []string{"first load failing it", capLoad(c.Reference, capacity.Capacity.Failing),
		capLoad(c.Candidate, capacity.Capacity.Failing), "", ""})
	diff := "n/a"
	if c.Diff != nil {
		diff = fmtSigned(*c.Diff)
	}
	return append(rows, []string{"capacity estimate", capEstimate(c.Reference), capEstimate(c.Candidate), diff, fmtPct(c.ErrorPct)})
}

func capStatus(c *capacity.Capacity) string {
	if c == nil {
		return "no SLO"
	}
	return strings.ReplaceAll(c.Status, "_", " ")
}

func capLoad(c *capacity.Capacity, f func(capacity.Capacity) float64) string {
	if c == nil || f(*c) == 0 {
		return "–"
	}
	return fmtLoad(f(*c))
}

func capEstimate(c *capacity.Capacity) string {
	switch {
	case c == nil || c.Estimate == nil:
		return "–"
	case c.Status == capacity.StatusAboveTested:
		return "≥ " + fmtNum(*c.Estimate)
	}
	return fmtNum(*c.Estimate)
}

// methodLines say how each estimate was obtained, each line after
// prefix.
func methodLines(r *SweepReport, prefix string) string {
	var sb strings.Builder
	for _, side := range []struct {
		name string
		c    *capacity.Capacity
	}{{"reference", r.Capacity.Reference}, {"candidate", r.Capacity.Candidate}} {
		if side.c != nil {
			note := ""
			if side.c.NonMonotone {
				note = " (a higher load meets the SLO again)"
			}
			fmt.Fprintf(&sb, "%s%s: %s%s\n", prefix, side.name, side.c.Method, note)
		}
	}
	return sb.String()
}

// pointsTable has one line per load of either sweep: attainment and SLO
// verdict of both, and the headline errors where both ran it.
func (r *SweepReport) pointsTable() [][]string {
	head := []string{string(r.Load), "attainment", "SLO met"}
	for _, h := range sweepHeadline {
		head = append(head, h.label)
	}
	rows := [][]string{head}
	for _, line := range r.pointLines() {
		row := []string{fmtLoad(line.load), attainmentPair(line.ref, line.cand), metPair(line.ref, line.cand)}
		rows = append(rows, append(row, headlineErrors(line)...))
	}
	return rows
}

// headlineErrors are a load's cells of the headline statistics: their
// error %, or which sweep alone ran it.
func headlineErrors(line pointLine) []string {
	cells := make([]string, len(sweepHeadline))
	for i, h := range sweepHeadline {
		switch {
		case line.rep == nil && i > 0:
		case line.rep == nil && line.ref != nil:
			cells[i] = "only in reference"
		case line.rep == nil:
			cells[i] = "only in candidate"
		default:
			cells[i] = "–"
			if m, ok := line.rep.Row(h.metric, h.stat); ok {
				cells[i] = fmtPct(m.ErrorPct)
			}
		}
	}
	return cells
}

// pointLine is one load of either sweep.
type pointLine struct {
	load      float64
	ref, cand *capacity.Point
	rep       *Report // nil unless both ran it
}

// pointLines merges the two sweeps' loads, ascending.
func (r *SweepReport) pointLines() []pointLine {
	var out []pointLine
	for i := range r.Points {
		p := &r.Points[i]
		out = append(out, pointLine{p.Load, &p.Ref, &p.Cand, p.Report})
	}
	for _, side := range []struct {
		s     SweepSide
		loads []float64
		ref   bool
	}{{r.Reference, r.OnlyInReference, true}, {r.Candidate, r.OnlyInCandidate, false}} {
		for _, pt := range side.s.Summary.Points {
			if !containsLoad(side.loads, pt.Value()) {
				continue
			}
			l := pointLine{load: pt.Value()}
			if side.ref {
				l.ref = &pt
			} else {
				l.cand = &pt
			}
			out = append(out, l)
		}
	}
	sortLines(out)
	return out
}

func containsLoad(vs []float64, v float64) bool {
	for _, x := range vs {
		if sameLoad(x, v) {
			return true
		}
	}
	return false
}

func sortLines(ls []pointLine) {
	for i := 1; i < len(ls); i++ { // insertion sort: a handful of loads, stable
		for j := i; j > 0 && ls[j].load < ls[j-1].load; j-- {
			ls[j], ls[j-1] = ls[j-1], ls[j]
		}
	}
}

func attainmentPair(a, b *capacity.Point) string {
	f := func(p *capacity.Point) string {
		if p == nil || p.Attainment == nil {
			return "–"
		}
		return strconv.FormatFloat(*p.Attainment, 'f', 3, 64)
	}
	return f(a) + " / " + f(b)
}

func metPair(a, b *capacity.Point) string {
	f := func(p *capacity.Point) string {
		switch {
		case p == nil || p.MeetsSLO == nil:
			return "–"
		case *p.MeetsSLO:
			return "yes"
		}
		return "no"
	}
	return f(a) + " / " + f(b)
}

// sweepVerdictNote explains the capacity verdict and those that are not
// a plain comparison.
func sweepVerdictNote(v Verdict) string {
	if v.Status == Missing || v.ErrorPct == nil || v.Metric == CapacityField {
		return v.Reason
	}
	return ""
}

func sweepVerdictSummary(r *SweepReport) string {
	n := map[string]int{}
	for _, v := range r.Verdicts {
		n[v.Status]++
	}
	return fmt.Sprintf("%d breach, %d missing, %d pass", n[Breach], n[Missing], n[Pass])
}

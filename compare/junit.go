package compare

import (
	"encoding/xml"
	"fmt"
	"io"
)

type junitSuites struct {
	XMLName  xml.Name   `xml:"testsuites"`
	Name     string     `xml:"name,attr"`
	Tests    int        `xml:"tests,attr"`
	Failures int        `xml:"failures,attr"`
	Errors   int        `xml:"errors,attr"`
	Suite    junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Classname string        `xml:"classname,attr"`
	Name      string        `xml:"name,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes one testcase per gated field: a breach (beyond noise,
// with several runs per side) is a <failure>, a field missing from a side
// an <error>; a pass or "~" verdict passes with its detail in
// <system-out>. With Options.SameWorkload (--gate) a "workload" testcase
// fails when the two sides replayed different workloads. Without
// thresholds the suite is empty.
func WriteJUnit(w io.Writer, r *Report) error {
	name := fmt.Sprintf("simbench compare %d candidate vs %d reference runs", len(r.Candidates), len(r.References))
	if r.Paired() {
		name = fmt.Sprintf("simbench compare %s vs %s", r.Candidate().Name, r.Reference().Name)
	}
	suites := verdictSuites(name, r.Verdicts, func(v Verdict) string { return junitDetail(r, v) })
	if r.Options.SameWorkload {
		suites.add(workloadCase(r))
	}
	return writeJUnitSuites(w, suites)
}

// workloadCase is the testcase of the workload check: a failure when the
// workloads differ.
func workloadCase(r *Report) junitCase {
	c := junitCase{Classname: "simbench.compare", Name: "workload", SystemOut: r.Workload.Msg}
	if err := r.WorkloadError(); err != nil {
		c.SystemOut, c.Failure = "", &junitProblem{Message: r.Workload.Msg, Type: "different_workloads", Text: err.Error()}
	}
	return c
}

// add appends c to the suite, counting it.
func (s *junitSuites) add(c junitCase) {
	s.Suite.Cases = append(s.Suite.Cases, c)
	s.Tests++
	s.Suite.Tests++
	if c.Failure != nil {
		s.Failures++
		s.Suite.Failures++
	}
}

// verdictSuites is the suite of one testcase per verdict, each named by
// Verdict.Name, with its detail.
func verdictSuites(name string, vs []Verdict, detail func(Verdict) string) junitSuites {
	s := junitSuite{Name: name, Cases: []junitCase{}}
	for _, v := range vs {
		s.Cases = append(s.Cases, junitCaseFor(v, detail(v)))
		switch v.Status {
		case Breach:
			s.Failures++
		case Missing:
			s.Errors++
		}
	}
	s.Tests = len(s.Cases)
	return junitSuites{Name: "simbench compare", Tests: s.Tests, Failures: s.Failures, Errors: s.Errors, Suite: s}
}

// junitDetail is a verdict's values: the two runs', or each side's median
// and [min … max] with the p-value.
func junitDetail(r *Report, v Verdict) string {
	m, ok := r.Row(v.Metric, v.Stat)
	switch {
	case !ok:
		return v.Reason
	case r.Paired():
		return fmt.Sprintf("reference %s %s, candidate %s %s, error %s, bound ±%g%%", fmtValue(m.Stat, m.Reference),
			m.Unit, fmtValue(m.Stat, m.Candidate), m.Unit, fmtPct(m.ErrorPct), v.MaxPct)
	}
	return fmt.Sprintf("reference median %s %s %s, candidate median %s %s %s, error %s, p = %s, bound ±%g%%: %s",
		fmtValue(m.Stat, m.Reference), spreadRange(m.Stat, m.RefRuns), m.Unit,
		fmtValue(m.Stat, m.Candidate), spreadRange(m.Stat, m.CandRuns), m.Unit,
		fmtPct(m.ErrorPct), fmtP(m.Test), v.MaxPct, v.Reason)
}

// junitCaseFor is the testcase of one verdict: a breach is a <failure>, a
// missing field an <error>, anything else passes with detail in
// <system-out>.
func junitCaseFor(v Verdict, detail string) junitCase {
	c := junitCase{Classname: "simbench.compare", Name: v.Name()}
	switch v.Status {
	case Breach:
		c.Failure = &junitProblem{Message: v.Reason, Type: "breach", Text: detail}
	case Missing:
		c.Error = &junitProblem{Message: v.Reason, Type: "missing", Text: detail}
	default:
		c.SystemOut = detail
	}
	return c
}

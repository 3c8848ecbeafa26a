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

// WriteJUnit writes one testcase per gated field: a breach is a <failure>,
// a field missing from a side an <error>. Without thresholds the suite is
// empty.
func WriteJUnit(w io.Writer, r *Report) error {
	name := fmt.Sprintf("simbench compare %s vs %s", r.Candidate.Name, r.Reference.Name)
	return writeJUnitSuite(w, name, r.Verdicts, func(v Verdict) junitCase { return junitCaseOf(r, v) })
}

// writeJUnitSuite writes one suite with a testcase per verdict: a breach is
// a <failure>, a field missing from a side an <error>.
func writeJUnitSuite(w io.Writer, name string, verdicts []Verdict, caseOf func(Verdict) junitCase) error {
	s := junitSuite{Name: name, Cases: []junitCase{}}
	for _, v := range verdicts {
		s.Cases = append(s.Cases, caseOf(v))
		switch v.Status {
		case Breach:
			s.Failures++
		case Missing:
			s.Errors++
		}
	}
	s.Tests = len(s.Cases)
	out := junitSuites{Name: "simbench compare", Tests: s.Tests, Failures: s.Failures, Errors: s.Errors, Suite: s}
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

func junitCaseOf(r *Report, v Verdict) junitCase {
	detail := v.Reason
	for _, row := range r.Rows {
		if row.Metric == v.Metric && row.Stat == v.Stat {
			detail = fmt.Sprintf("reference %s %s, candidate %s %s, error %s, bound ±%g%%", fmtValue(row.Stat, row.Reference),
				row.Unit, fmtValue(row.Stat, row.Candidate), row.Unit, fmtPct(row.ErrorPct), v.MaxPct)
		}
	}
	return junitCaseFor(v, detail)
}

// junitCaseFor is the testcase of one verdict: a breach is a <failure>, a
// missing field an <error>, anything else passes with detail in
// <system-out>.
func junitCaseFor(v Verdict, detail string) junitCase {
	c := junitCase{Classname: "simbench.compare", Name: v.Field()}
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

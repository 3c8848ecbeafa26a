package capacity

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// WriteText prints the sweep: a table of the points, the capacity and
// why the sweep stopped early.
func (s *Summary) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, row := range s.Table() {
		fmt.Fprintf(tw, "%s\t\n", strings.Join(row, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := io.WriteString(w, s.Notes())
	return err
}

// Table is the points' table, the head first: per load the request and
// output token throughputs, TTFT and ITL p50 and p99, the error rate,
// goodput, attainment and whether it meets the SLO.
func (s *Summary) Table() [][]string {
	rows := [][]string{{string(s.Load), "req/s", "output tok/s", "TTFT p50", "TTFT p99", "ITL p50", "ITL p99", "error rate", "goodput", "attainment", "SLO"}}
	for _, p := range s.Points {
		verdict := "-"
		if p.MeetsSLO != nil {
			verdict = map[bool]string{true: "meets", false: "fails"}[*p.MeetsSLO]
		}
		rows = append(rows, []string{num(p.Value()), fmt.Sprintf("%.4g", p.RequestThroughput), fmt.Sprintf("%.4g", p.OutputTokenThroughput),
			opt(p.TTFTP50), opt(p.TTFTP99), opt(p.ITLP50), opt(p.ITLP99), fmt.Sprintf("%.3g", p.ErrorRate),
			opt(p.Goodput), opt(p.Attainment), verdict})
	}
	return rows
}

// Notes are the lines under the table: the capacity, and why the sweep
// stopped early.
func (s *Summary) Notes() string {
	var b strings.Builder
	if c := s.Capacity; c != nil {
		fmt.Fprintf(&b, "\nSLO %s at attainment >= %g: %s\n", s.Goodput, s.AttainmentTarget, c.Text(s.Load))
	}
	if st := s.Stopped; st != nil {
		skipped := make([]string, len(st.Skipped))
		for i, v := range st.Skipped {
			skipped[i] = num(v)
		}
		fmt.Fprintf(&b, "stopped after %s %s (%s): %s; not run: %s\n", s.Load, num(st.After), st.Reason, st.Detail,
			strings.Join(skipped, ", "))
	}
	return b.String()
}

// Text is the capacity in one line.
func (c *Capacity) Text(load Load) string {
	switch c.Status {
	case StatusBelowTested:
		return fmt.Sprintf("capacity below %s %s (the lowest load fails)", load, num(c.Failing()))
	case StatusAboveTested:
		return fmt.Sprintf("capacity at least %s %s (every load met it)", load, num(c.Passing()))
	}
	line := fmt.Sprintf("capacity %s %s (%s fails); estimate %.3g", load, num(c.Passing()), num(c.Failing()), *c.Estimate)
	if c.Interpolated {
		line += ", interpolated"
	}
	line += ": " + c.Method
	if c.NonMonotone {
		line += "; a higher load meets the SLO again"
	}
	return line
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func opt(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.4g", *v)
}

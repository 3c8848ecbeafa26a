package compare

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/simbench/simbench/results"
)

// fmtNum formats a value as AIPerf's tables do ({:,.2f}); values too small
// for two decimals keep three significant digits.
func fmtNum(v float64) string {
	if v != 0 && math.Abs(v) < 0.01 {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	return commas(strconv.FormatFloat(v, 'f', 2, 64))
}

// fmtSigned is fmtNum with an explicit sign ("+1.50", "-0.25", "0.00").
func fmtSigned(v float64) string {
	if v > 0 {
		return "+" + fmtNum(v)
	}
	return fmtNum(v)
}

// countStats are whole numbers.
var countStats = map[string]bool{"count": true, "stall_count": true}

// fmtValue formats a statistic: counts as integers, the rest as fmtNum.
func fmtValue(stat string, v float64) string {
	if countStats[stat] && v == math.Trunc(v) && math.Abs(v) < 1<<53 {
		return commas(strconv.FormatInt(int64(v), 10))
	}
	return fmtNum(v)
}

func fmtSignedValue(stat string, v float64) string {
	if v > 0 {
		return "+" + fmtValue(stat, v)
	}
	return fmtValue(stat, v)
}

// fmtPct formats a signed error %: "n/a" when undefined, "0.00%" when the
// values are equal (benchstat's rule), else "+12.34%".
func fmtPct(p *float64) string {
	switch {
	case p == nil:
		return "n/a"
	case *p == 0:
		return "0.00%"
	}
	return fmt.Sprintf("%+.2f%%", *p)
}

func fmtOptPct(p *float64) string {
	if p == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.2f%%", *p)
}

func fmtOptR(p *float64) string {
	if p == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.4f", *p)
}

// commas puts thousands separators into a formatted decimal number.
func commas(s string) string {
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	intPart, frac, hasFrac := strings.Cut(s, ".")
	var b strings.Builder
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if hasFrac {
		b.WriteString("." + frac)
	}
	return sign + b.String()
}

// metricTitle is AIPerf's "Header (unit)" for a metric row group.
func metricTitle(tag, unit string) string {
	if tag == StallMetric {
		return "Token-Gap Stalls"
	}
	d, _ := results.Lookup(tag)
	if unit == "" {
		return d.Header
	}
	return d.Header + " (" + unit + ")"
}

// statLabel shortens the stall statistics for tables.
func statLabel(stat string) string {
	switch stat {
	case "stall_count":
		return "count"
	case "stalls_per_1000_gaps":
		return "per 1k gaps"
	case "blocked_stream_time_s":
		return "blocked (s)"
	}
	return stat
}

// shownRows are the rows of the text and markdown tables: every row but
// "sum", which only the JSON carries.
func shownRows(rows []Row) []Row {
	out := make([]Row, 0, len(rows))
	for _, r := range rows {
		if r.Stat != "sum" {
			out = append(out, r)
		}
	}
	return out
}

// WorstOffenders returns up to n non-informational rows with the largest
// non-zero |error %|, then, if there is room, rows without a percentage (a
// zero reference), in row order.
func WorstOffenders(rows []Row, n int) []Row {
	var out, undefined []Row
	for _, r := range rows {
		switch {
		case r.Informational:
		case r.ErrorPct == nil:
			undefined = append(undefined, r)
		case *r.ErrorPct != 0:
			out = append(out, r)
		}
	}
	slices.SortStableFunc(out, func(a, b Row) int { return cmp.Compare(math.Abs(*b.ErrorPct), math.Abs(*a.ErrorPct)) })
	out = append(out, undefined...)
	return out[:min(n, len(out))]
}

// wrapWords splits s into lines of at most width runes, at spaces.
func wrapWords(s string, width int) []string {
	var lines []string
	cur := ""
	for _, w := range strings.Fields(s) {
		switch {
		case cur == "":
			cur = w
		case runeLen(cur)+1+runeLen(w) <= width:
			cur += " " + w
		default:
			lines = append(lines, cur)
			cur = w
		}
	}
	return append(lines, cur)
}

func runeLen(s string) int { return len([]rune(s)) }

// groups splits rows into runs of the same metric, keeping order.
func groups(rows []Row) [][]Row {
	var out [][]Row
	for i, r := range rows {
		if i == 0 || r.Metric != rows[i-1].Metric {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], r)
	}
	return out
}

// SignificantOffenders returns up to n non-informational rows that differ
// beyond noise, largest |error %| first, one per metric (its worst).
func SignificantOffenders(rows []Row, n int) []Row {
	var out []Row
	for _, r := range rows {
		if r.Significant && !r.Informational && r.ErrorPct != nil && *r.ErrorPct != 0 {
			out = append(out, r)
		}
	}
	slices.SortStableFunc(out, func(a, b Row) int { return cmp.Compare(math.Abs(*b.ErrorPct), math.Abs(*a.ErrorPct)) })
	seen := map[string]bool{}
	worst := out[:0]
	for _, r := range out {
		if !seen[r.Metric] {
			seen[r.Metric] = true
			worst = append(worst, r)
		}
	}
	return worst[:min(n, len(worst))]
}

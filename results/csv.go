package results

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

var csvRecordHeader = []string{"Metric", "avg", "min", "max", "sum", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "std"}

// WriteProfileCSV writes p as profile_export_aiperf.csv: a section of
// distribution metrics and a "Metric,Value" section of scalars, each sorted
// by tag, separated by an empty row, CRLF line endings, values as %.2f and
// missing values as empty cells.
func WriteProfileCSV(w io.Writer, p *Profile) error {
	var dist, scalars []MetricResult
	for _, m := range p.Metrics {
		if m.Scalar() {
			scalars = append(scalars, m)
		} else {
			dist = append(dist, m)
		}
	}
	byTag := func(ms []MetricResult) {
		slices.SortFunc(ms, func(a, b MetricResult) int { return strings.Compare(a.Tag, b.Tag) })
	}
	byTag(dist)
	byTag(scalars)
	var b strings.Builder
	writeCSVRow(&b, csvRecordHeader)
	for _, m := range dist {
		row := []string{csvName(m)}
		for _, st := range csvRecordHeader[1:] {
			row = append(row, csvNumber(m, st))
		}
		writeCSVRow(&b, row)
	}
	b.WriteString("\r\n")
	writeCSVRow(&b, []string{"Metric", "Value"})
	for _, m := range scalars {
		writeCSVRow(&b, []string{csvName(m), csvNumber(m, "avg")})
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// csvName is AIPerf's "Header (unit)", without the unit for counts.
func csvName(m MetricResult) string {
	u := strings.ToLower(m.Unit)
	if u == "" || u == "count" || u == "requests" {
		return m.Header()
	}
	return fmt.Sprintf("%s (%s)", m.Header(), m.Unit)
}

func csvNumber(m MetricResult, stat string) string {
	v, ok := m.Stats[stat]
	if !ok || !finite(v) {
		return ""
	}
	return fmt.Sprintf("%.2f", v)
}

// writeCSVRow writes one row with Python csv's minimal quoting and CRLF.
func writeCSVRow(b *strings.Builder, cells []string) {
	for i, c := range cells {
		if i > 0 {
			b.WriteByte(',')
		}
		if strings.ContainsAny(c, ",\"\r\n") {
			c = `"` + strings.ReplaceAll(c, `"`, `""`) + `"`
		}
		b.WriteString(c)
	}
	b.WriteString("\r\n")
}

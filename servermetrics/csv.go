package servermetrics

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// CSVName is AIPerf's tabular server metrics export, written
// beside server_metrics_export.json from the same Export.
const CSVName = "server_metrics_export.csv"

// csvStatKeys are the stat columns of each CSV section, in AIPerf's
// order; unknown (untyped) families use the gauge columns.
var csvStatKeys = map[Kind][]string{
	KindGauge:   {"avg", "min", "max", "std", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99"},
	KindCounter: {"total", "rate", "rate_avg", "rate_min", "rate_max", "rate_std"},
	KindHistogram: {"count", "count_rate", "sum", "sum_rate", "avg", "p1_estimate", "p5_estimate",
		"p10_estimate", "p25_estimate", "p50_estimate", "p75_estimate", "p90_estimate", "p95_estimate", "p99_estimate"},
	KindUnknown: {"avg", "min", "max", "std", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99"},
}

// csvSections is AIPerf's section order; the info section comes last.
var csvSections = []Kind{KindGauge, KindCounter, KindHistogram, KindUnknown}

// csvRow is one series of the CSV: one row of its type's section.
type csvRow struct {
	endpoint, name, unit, desc string
	series                     *SeriesStats
}

func (r *csvRow) isInfo() bool { return strings.HasSuffix(r.name, "_info") }

// writeCSV writes e as AIPerf's server_metrics_export.csv: a
// "#" comment preamble (\n line ends), then one section per metric type
// (gauge, counter, histogram, unknown) and a transposed section for gauges
// named *_info, separated by blank lines, as CSV rows ending in \r\n
// (Python's csv module). Each section's header is Endpoint, Type, Metric,
// Unit, the type's stat columns, one column per label key of the section,
// Description and, for histograms, buckets ("le=count;..."). Counts are
// integers, other numbers have four decimals, and absent or non-finite
// statistics are empty cells. The endpoint is shown as host[:port][/path]
// without the /metrics suffix.
func writeCSV(w io.Writer, e *Export) error {
	var b bytes.Buffer
	writeCSVPreamble(&b, e.BenchmarkID)
	sections, info := groupCSVRows(e)
	first := true
	for _, kind := range csvSections {
		if len(sections[kind]) == 0 {
			continue
		}
		if !first {
			b.WriteString("\r\n")
		}
		first = false
		writeCSVSection(&b, kind, sections[kind])
	}
	if len(info) > 0 {
		if !first {
			b.WriteString("\r\n")
		}
		writeCSVInfo(&b, info)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// writeCSVPreamble writes AIPerf's comment lines. simbench is not
// AIPerf, so aiperf_version is "unknown", as AIPerf writes when it cannot
// tell its own version; a missing benchmark id is Python's "None".
func writeCSVPreamble(b *bytes.Buffer, benchmarkID string) {
	if benchmarkID == "" {
		benchmarkID = "None"
	}
	b.WriteString("# AIPerf Server Metrics Export (CSV)\n# aiperf_version: unknown\n")
	fmt.Fprintf(b, "# schema_version: %s\n# benchmark_id: %s\n", SchemaVersion, benchmarkID)
	b.WriteString("# Note: Same benchmark_id and version appear in JSON and Parquet exports\n#\n")
}

// groupCSVRows sorts the series into sections by metric type, metrics
// by name and series in their order; gauges named *_info go to info.
// Families of any other type are left out.
func groupCSVRows(e *Export) (map[Kind][]*csvRow, []*csvRow) {
	names := make([]string, 0, len(e.Metrics))
	for name := range e.Metrics {
		names = append(names, name)
	}
	slices.Sort(names)
	sections := map[Kind][]*csvRow{}
	var info []*csvRow
	for _, name := range names {
		m := e.Metrics[name]
		if m == nil || csvStatKeys[m.Type] == nil {
			continue
		}
		for i := range m.Series {
			r := &csvRow{endpoint: csvEndpoint(m.Series[i].EndpointURL), name: name, unit: m.Unit,
				desc: m.Description, series: &m.Series[i]}
			if m.Type == KindGauge && r.isInfo() {
				info = append(info, r)
				continue
			}
			sections[m.Type] = append(sections[m.Type], r)
		}
	}
	return sections, info
}

// csvEndpoint is AIPerf's display form of an endpoint URL: the URL's
// authority and path, without the scheme and a trailing "/metrics".
func csvEndpoint(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	host := u.Host
	if u.User != nil {
		host = u.User.String() + "@" + host
	}
	return host + strings.TrimSuffix(u.EscapedPath(), "/metrics")
}

func writeCSVSection(b *bytes.Buffer, kind Kind, rows []*csvRow) {
	keys := csvStatKeys[kind]
	labels := csvLabelOrder(rows)
	header := append([]string{"Endpoint", "Type", "Metric", "Unit"}, keys...)
	header = append(append(header, labels...), "Description")
	if kind == KindHistogram {
		header = append(header, "buckets")
	}
	writeCSVRecord(b, header)
	sortCSVRows(rows, labels)
	for _, r := range rows {
		writeCSVRecord(b, csvSeriesRecord(r, kind, keys, labels))
	}
}

func csvSeriesRecord(r *csvRow, kind Kind, keys, labels []string) []string {
	rec := []string{r.endpoint, string(kind), r.name, r.unit}
	for _, k := range keys {
		rec = append(rec, csvStat(r.series.Stats, k))
	}
	for _, l := range labels {
		if r.isInfo() {
			rec = append(rec, "")
		} else {
			rec = append(rec, r.series.Labels[l])
		}
	}
	rec = append(rec, r.desc)
	if kind == KindHistogram {
		rec = append(rec, csvBuckets(r.series.Buckets))
	}
	return rec
}

// csvStat formats statistic name of stats as AIPerf does: empty when
// absent or not finite, an integer for counts, else four decimals.
func csvStat(stats StatValues, name string) string {
	v, ok := stats.Get(name)
	if !ok || !finite(v) {
		return ""
	}
	if isCountName(name) && v == math.Trunc(v) && math.Abs(v) < 1<<53 {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'f', 4, 64)
}

// csvBuckets is the histogram's buckets cell: "le=count" joined by ";", in
// bucket order, non-finite counts left out.
func csvBuckets(buckets StatValues) string {
	parts := make([]string, 0, len(buckets))
	for _, bk := range buckets {
		if s := csvStat(StatValues{bk}, bk.Name); s != "" {
			parts = append(parts, bk.Name+"="+s)
		}
	}
	return strings.Join(parts, ";")
}

// csvLabelOrder is AIPerf's label column order for a section: label keys
// that occur together (in some series) form a family; families are ordered
// by their smallest key, and within one the keys seen in a single series
// come first, then those seen in several, each group sorted. Series of
// *_info metrics do not contribute.
func csvLabelOrder(rows []*csvRow) []string {
	uf := labelUnion{}
	uses := map[string]int{}
	for _, r := range rows {
		if r.isInfo() || len(r.series.Labels) == 0 {
			continue
		}
		keys := sortedKeys(r.series.Labels)
		for i, k := range keys {
			uses[k]++
			if i > 0 {
				uf.union(keys[i-1], k)
			}
		}
	}
	families := map[string][]string{}
	for k := range uses {
		root := uf.find(k)
		families[root] = append(families[root], k)
	}
	fams := make([][]string, 0, len(families))
	for _, f := range families {
		slices.Sort(f)
		fams = append(fams, f)
	}
	slices.SortFunc(fams, func(a, b []string) int { return strings.Compare(a[0], b[0]) })
	var out []string
	for _, f := range fams {
		out = append(out, slices.DeleteFunc(slices.Clone(f), func(k string) bool { return uses[k] > 1 })...)
		out = append(out, slices.DeleteFunc(slices.Clone(f), func(k string) bool { return uses[k] == 1 })...)
	}
	return out
}

// labelUnion is a union-find over label keys.
type labelUnion map[string]string

func (u labelUnion) find(k string) string {
	for {
		p, ok := u[k]
		if !ok || p == k {
			return k
		}
		k = p
	}
}

func (u labelUnion) union(a, b string) { u[u.find(b)] = u.find(a) }

// sortCSVRows orders a section as AIPerf does: by which label columns are
// filled, then metric name, endpoint and labels (stable).
func sortCSVRows(rows []*csvRow, labels []string) {
	keys := make(map[*csvRow][]string, len(rows))
	for _, r := range rows {
		var pattern strings.Builder
		for _, l := range labels {
			_, ok := r.series.Labels[l]
			pattern.WriteByte("01"[b2i(ok)])
		}
		keys[r] = []string{pattern.String(), r.name, r.endpoint, pyLabelsRepr(r.series.Labels)}
	}
	slices.SortStableFunc(rows, func(a, b *csvRow) int { return slices.Compare(keys[a], keys[b]) })
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// pyLabelsRepr is Python's str() of a labels dict (keys sorted: a Go map
// keeps no exposition order); "" when there are none.
func pyLabelsRepr(labels map[string]string) string {
	if len(labels) == 0 {
		return ""
	}
	parts := make([]string, 0, len(labels))
	for _, k := range sortedKeys(labels) {
		parts = append(parts, pyStrRepr(k)+": "+pyStrRepr(labels[k]))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// pyStrRepr is Python's repr of a str for the common characters: single
// quotes unless the text holds a single quote and no double quote.
func pyStrRepr(s string) string {
	q := byte('\'')
	if strings.ContainsRune(s, '\'') && !strings.ContainsRune(s, '"') {
		q = '"'
	}
	var b strings.Builder
	b.WriteByte(q)
	for _, c := range s {
		switch {
		case c == '\\' || c == rune(q):
			b.WriteByte('\\')
			b.WriteRune(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, c)
		default:
			b.WriteRune(c)
		}
	}
	b.WriteByte(q)
	return b.String()
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// writeCSVInfo writes the info section: one row per label of each
// *_info series, by metric name and endpoint, labels sorted by key.
func writeCSVInfo(b *bytes.Buffer, rows []*csvRow) {
	writeCSVRecord(b, []string{"Endpoint", "Metric", "Key", "Value", "Description"})
	slices.SortStableFunc(rows, func(a, b *csvRow) int {
		return cmp.Or(strings.Compare(a.name, b.name), strings.Compare(a.endpoint, b.endpoint))
	})
	for _, r := range rows {
		for _, k := range sortedKeys(r.series.Labels) {
			writeCSVRecord(b, []string{r.endpoint, r.name, k, r.series.Labels[k], r.desc})
		}
	}
}

// writeCSVRecord writes one row as Python's csv.writer does by default:
// fields holding a comma, a double quote, CR or LF are quoted (quotes
// doubled, line breaks kept as they are), and the row ends in \r\n.
func writeCSVRecord(b *bytes.Buffer, fields []string) {
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		if !strings.ContainsAny(f, ",\"\r\n") {
			b.WriteString(f)
			continue
		}
		b.WriteByte('"')
		b.WriteString(strings.ReplaceAll(f, `"`, `""`))
		b.WriteByte('"')
	}
	b.WriteString("\r\n")
}

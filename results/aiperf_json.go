package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// File names AIPerf uses in a run directory.
const (
	ProfileJSONName = "profile_export_aiperf.json"
	ProfileCSVName  = "profile_export_aiperf.csv"
	RecordsName     = "profile_export.jsonl"
)

// jsonStatOrder is the order of statistics inside a metric object.
var jsonStatOrder = StatNames

// WriteProfileJSON writes p as profile_export_aiperf.json: indent 2, AIPerf's
// key order, absent and non-finite values omitted, counts as floats except
// the per-metric "count".
func WriteProfileJSON(w io.Writer, p *Profile) error {
	b := []byte("{")
	first := true
	key := func(k string) {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, "\n  "...)
		b = appendString(b, k)
		b = append(b, ": "...)
	}
	key("schema_version")
	b = appendString(b, orDefault(p.SchemaVersion, SchemaVersion))
	if p.AIPerfVersion != "" {
		key("aiperf_version")
		b = appendString(b, p.AIPerfVersion)
	}
	if p.BenchmarkID != "" {
		key("benchmark_id")
		b = appendString(b, p.BenchmarkID)
	}
	split := order(TagTotalErrorISL)
	for _, m := range p.Metrics {
		if order(m.Tag) <= split {
			key(m.Tag)
			b = appendMetricObject(b, m)
		}
	}
	if len(p.InputConfig) > 0 {
		key("input_config")
		var buf bytes.Buffer
		if err := json.Indent(&buf, p.InputConfig, "  ", "  "); err != nil {
			return fmt.Errorf("input_config: %w", err)
		}
		b = append(b, buf.Bytes()...)
	}
	key("was_cancelled")
	b = strconv.AppendBool(b, p.WasCancelled)
	key("error_summary")
	b = appendErrorSummary(b, p.ErrorSummary)
	if p.StartTime != "" {
		key("start_time")
		b = appendString(b, p.StartTime)
	}
	if p.EndTime != "" {
		key("end_time")
		b = appendString(b, p.EndTime)
	}
	for _, m := range p.Metrics {
		if order(m.Tag) > split {
			key(m.Tag)
			b = appendMetricObject(b, m)
		}
	}
	b = append(b, "\n}\n"...)
	_, err := w.Write(b)
	return err
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func appendMetricObject(b []byte, m MetricResult) []byte {
	b = append(b, "{\n    \"unit\": "...)
	b = appendString(b, m.Unit)
	for _, st := range jsonStatOrder {
		v, ok := m.Stats[st]
		if !ok || !finite(v) {
			continue
		}
		b = append(b, ",\n    "...)
		b = appendString(b, st)
		b = append(b, ": "...)
		b = appendValue(b, v, st == "count")
	}
	return append(b, "\n  }"...)
}

func appendErrorSummary(b []byte, errs []ErrorCount) []byte {
	if len(errs) == 0 {
		return append(b, "[]"...)
	}
	b = append(b, '[')
	for i, e := range errs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n    {\n      \"error_details\": {"...)
		if e.Details.Code != 0 {
			b = append(b, "\n        \"code\": "...)
			b = strconv.AppendInt(b, int64(e.Details.Code), 10)
			b = append(b, ',')
		}
		b = append(b, "\n        \"type\": "...)
		b = appendString(b, e.Details.Type)
		b = append(b, ",\n        \"message\": "...)
		b = appendString(b, e.Details.Message)
		b = append(b, "\n      },\n      \"count\": "...)
		b = strconv.AppendInt(b, int64(e.Count), 10)
		b = append(b, "\n    }"...)
	}
	return append(b, "\n  ]"...)
}

// nonMetricKeys are the top-level keys of profile_export_aiperf.json that are
// not metrics.
var nonMetricKeys = map[string]bool{
	"schema_version": true, "aiperf_version": true, "benchmark_id": true, "telemetry_data": true,
	"input_config": true, "was_cancelled": true, "error_summary": true, "start_time": true,
	"end_time": true, "run_info": true, "warmup_metrics": true, "runtime_submission_invalid_reasons": true,
}

// ReadProfileJSON reads profile_export_aiperf.json of AIPerf schema 1.0–1.5
// (and simbench's): explicit nulls and missing fields are tolerated, unknown
// keys ignored, and every object with a "unit" is taken as a metric.
func ReadProfileJSON(r io.Reader) (*Profile, error) {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	if err := expectDelim(dec, '{'); err != nil {
		return nil, err
	}
	p := &Profile{}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("reading key: %w", err)
		}
		k, _ := tok.(string)
		if seen[k] {
			return nil, fmt.Errorf("field %q: given twice", k)
		}
		seen[k] = true
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("field %q: %w", k, err)
		}
		if err := p.setTopLevel(k, raw); err != nil {
			return nil, fmt.Errorf("field %q: %w", k, err)
		}
	}
	return p, checkSchemaVersion(p.SchemaVersion)
}

// checkSchemaVersion accepts AIPerf's schema 1.x (minor versions only add
// fields) and a file without one (AIPerf's earliest exports).
func checkSchemaVersion(v string) error {
	if v == "" {
		return nil
	}
	major, minor, ok := strings.Cut(v, ".")
	if _, err := strconv.ParseUint(minor, 10, 16); major != "1" || !ok || err != nil {
		return fmt.Errorf("field \"schema_version\": %q is not an AIPerf 1.x schema (simbench reads 1.0 to 1.5, and later 1.x)", v)
	}
	return nil
}

// LoadProfileJSON reads a profile_export_aiperf.json file.
func LoadProfileJSON(path string) (*Profile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := ReadProfileJSON(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("want %q, got %v", want, tok)
	}
	return nil
}

func (p *Profile) setTopLevel(k string, raw json.RawMessage) error {
	if string(raw) == "null" {
		return nil
	}
	switch k {
	case "schema_version":
		return json.Unmarshal(raw, &p.SchemaVersion)
	case "aiperf_version":
		return json.Unmarshal(raw, &p.AIPerfVersion)
	case "benchmark_id":
		return json.Unmarshal(raw, &p.BenchmarkID)
	case "input_config":
		p.InputConfig = append(json.RawMessage(nil), raw...)
	case "was_cancelled":
		return json.Unmarshal(raw, &p.WasCancelled)
	case "error_summary":
		return json.Unmarshal(raw, &p.ErrorSummary)
	case "start_time":
		return json.Unmarshal(raw, &p.StartTime)
	case "end_time":
		return json.Unmarshal(raw, &p.EndTime)
	default:
		if nonMetricKeys[k] {
			return nil
		}
		return p.addRawMetric(k, raw)
	}
	return nil
}

// addRawMetric parses one metric object; objects without "unit" are
// skipped, and so are statistics simbench does not know (e.g. one 2026
// version's adj_p50 inside the object). A known statistic that is not a
// finite number (a string, an object, 1e999) is an error: dropping it would
// compare a run without it silently.
func (p *Profile) addRawMetric(tag string, raw json.RawMessage) error {
	if len(raw) == 0 || raw[0] != '{' {
		return nil
	}
	obj, err := uniqueObject(raw)
	if err != nil {
		return err
	}
	unitRaw, ok := obj["unit"]
	if !ok {
		return nil
	}
	m := MetricResult{Tag: tag, Stats: map[string]float64{}}
	_ = json.Unmarshal(unitRaw, &m.Unit)
	for _, st := range StatNames {
		v, ok := obj[st]
		if !ok || string(v) == "null" {
			continue
		}
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil || !finite(f) {
			return fmt.Errorf("%s: want a finite number, got %s", st, clipRaw(v))
		}
		m.Stats[st] = f
	}
	if len(m.Stats) == 0 {
		return nil
	}
	if err := checkStats(m); err != nil {
		return err
	}
	p.Metrics = append(p.Metrics, m)
	return nil
}

// uniqueObject decodes a JSON object, refusing a key given twice (a map
// would keep the last one silently).
func uniqueObject(raw json.RawMessage) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := expectDelim(dec, '{'); err != nil {
		return nil, err
	}
	obj := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := tok.(string)
		if _, dup := obj[k]; dup {
			return nil, fmt.Errorf("%s given twice", k)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		obj[k] = v
	}
	return obj, nil
}

// percentileOrder is the order a distribution's percentiles keep.
var percentileOrder = []string{"p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99"}

// checkStats refuses statistics no distribution has: a negative value of a
// metric that is never negative, a negative std or count, percentiles out
// of order (a relative 1e-9 allows the rounding of interpolation), min
// above max.
func checkStats(m MetricResult) error {
	def, known := Lookup(m.Tag)
	for _, st := range StatNames {
		v, ok := m.Stats[st]
		if ok && v < 0 && (st == "std" || st == "count" || known && !def.Signed) {
			return fmt.Errorf("%s: %g is negative, and a %s %s never is", st, v, m.Tag, st)
		}
	}
	prev, prevName := math.Inf(-1), ""
	for _, st := range percentileOrder {
		v, ok := m.Stats[st]
		if !ok {
			continue
		}
		if v < prev-1e-9*math.Abs(prev) {
			return fmt.Errorf("%s %g is below %s %g: not a distribution's statistics", st, v, prevName, prev)
		}
		prev, prevName = v, st
	}
	lo, okLo := m.Stats["min"]
	if hi, ok := m.Stats["max"]; ok && okLo && hi < lo {
		return fmt.Errorf("max %g is below min %g: not a distribution's statistics", hi, lo)
	}
	return nil
}

// clipRaw is raw JSON for an error message, at most 40 bytes.
func clipRaw(raw json.RawMessage) string {
	if len(raw) > 40 {
		return string(raw[:40]) + "…"
	}
	return string(raw)
}

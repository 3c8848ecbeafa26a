package results

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"sync"
)

// JSONLWriter writes profile_export.jsonl one request per line, each line
// with a single Write on the underlying writer, so a request is on disk (or in
// the caller's buffer) as soon as it completes. It is safe for concurrent use.
// Warmup records are not written, as in AIPerf.
type JSONLWriter struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
	n   int
	off int64 // bytes of whole lines written
}

// truncater is a file the writer can cut back to its last whole line after
// a failed write (*os.File is one).
type truncater interface {
	Truncate(size int64) error
	Seek(offset int64, whence int) (int64, error)
}

// NewJSONLWriter returns a writer on w.
func NewJSONLWriter(w io.Writer) *JSONLWriter { return &JSONLWriter{w: w} }

// Write appends one record.
func (jw *JSONLWriter) Write(m *RecordMetrics) error {
	if m.Meta.BenchmarkPhase == "warmup" {
		return nil
	}
	jw.mu.Lock()
	defer jw.mu.Unlock()
	jw.buf = AppendJSONL(jw.buf[:0], m)
	n, err := jw.w.Write(jw.buf)
	if err != nil {
		err = fmt.Errorf("writing record %d: %w", m.Meta.SessionNum, err)
		if n > 0 {
			err = jw.cutTorn(err)
		}
		return err
	}
	jw.n++
	jw.off += int64(n)
	return nil
}

// cutTorn truncates a partly written line away, so the file ends with a
// whole line; err is the write's error, annotated when the cut failed too.
func (jw *JSONLWriter) cutTorn(err error) error {
	t, ok := jw.w.(truncater)
	if !ok {
		return err
	}
	if terr := t.Truncate(jw.off); terr != nil {
		return fmt.Errorf("%w (and its partial line stays: %v)", err, terr)
	}
	if _, serr := t.Seek(jw.off, io.SeekStart); serr != nil {
		return fmt.Errorf("%w (and seeking back failed: %v)", err, serr)
	}
	return err
}

// Count is the number of records written.
func (jw *JSONLWriter) Count() int {
	jw.mu.Lock()
	defer jw.mu.Unlock()
	return jw.n
}

// jsonlOrder is the order of metrics in a JSONL line.
var jsonlOrder = []recordID{idOSL, idISL, idTTFT, idOutputTokenCount, idReasoningTokens, idTTST,
	idRequestLatency, idPrefillPerUser, idITL, idOTPU, idUsagePrompt, idUsageCompletion,
	idUsageTotal, idOSLMismatch, idSendLag, idTTFTFromIntended, idLatencyIntended, idTokensPerChunk}

// AppendJSONL appends m as one compact JSON line (with the newline).
func AppendJSONL(b []byte, m *RecordMetrics) []byte {
	b = append(b, `{"metadata":`...)
	b = appendMetadata(b, &m.Meta)
	b = append(b, `,"metrics":{`...)
	b = appendRecordMetrics(b, m)
	b = append(b, '}')
	if m.Error != nil {
		b = append(b, `,"error":`...)
		e, _ := json.Marshal(m.Error)
		b = append(b, e...)
	}
	if m.Ext != nil {
		b = append(b, `,"simbench":`...)
		b = appendExtension(b, m.Ext)
	}
	return append(b, "}\n"...)
}

func appendMetadata(b []byte, md *Metadata) []byte {
	b = append(b, `{"session_num":`...)
	b = strconv.AppendInt(b, int64(md.SessionNum), 10)
	b = appendOptString(b, "x_request_id", md.XRequestID)
	b = appendOptString(b, "x_correlation_id", md.XCorrelationID)
	b = appendOptString(b, "conversation_id", md.ConversationID)
	b = append(b, `,"turn_index":`...)
	b = strconv.AppendInt(b, int64(md.TurnIndex), 10)
	b = append(b, `,"request_start_ns":`...)
	b = strconv.AppendInt(b, md.RequestStartNs, 10)
	if md.RequestAckNs != 0 {
		b = append(b, `,"request_ack_ns":`...)
		b = strconv.AppendInt(b, md.RequestAckNs, 10)
	}
	b = append(b, `,"request_end_ns":`...)
	b = strconv.AppendInt(b, md.RequestEndNs, 10)
	b = appendOptString(b, "worker_id", orDefault(md.WorkerID, "simbench"))
	b = appendOptString(b, "record_processor_id", orDefault(md.RecordProcessorID, "simbench"))
	b = appendOptString(b, "benchmark_phase", orDefault(md.BenchmarkPhase, "profiling"))
	b = append(b, `,"was_cancelled":`...)
	b = strconv.AppendBool(b, md.WasCancelled)
	if md.CancellationTimeNs != 0 {
		b = append(b, `,"cancellation_time_ns":`...)
		b = strconv.AppendInt(b, md.CancellationTimeNs, 10)
	}
	return append(b, '}')
}

func appendOptString(b []byte, k, v string) []byte {
	if v == "" {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, k...)
	b = append(b, `":`...)
	return appendString(b, v)
}

func appendRecordMetrics(b []byte, m *RecordMetrics) []byte {
	first := true
	open := func(tag, unit string) {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendString(b, tag)
		b = append(b, `:{"value":`...)
		_ = unit
	}
	closeWith := func(unit string) {
		b = append(b, `,"unit":`...)
		b = appendString(b, unit)
		b = append(b, '}')
	}
	for _, id := range jsonlOrder {
		v, ok := m.get(id)
		if !ok {
			continue
		}
		d, _ := Lookup(recordTags[id])
		open(d.Tag, d.Unit)
		b = appendValue(b, v, d.Unit == "tokens")
		closeWith(d.Unit)
	}
	if m.ICL != nil {
		open(TagICL, "ms")
		b = appendList(b, m.ICL)
		closeWith("ms")
	}
	if m.TokenGap != nil {
		open(TagTokenGap, "ms")
		b = appendList(b, m.TokenGap)
		closeWith("ms")
	}
	if m.Error != nil && m.ErrorISL > 0 {
		open(TagErrorISL, "tokens")
		b = strconv.AppendInt(b, int64(m.ErrorISL), 10)
		closeWith("tokens")
	}
	for _, o := range m.Other {
		open(o.Tag, o.Unit)
		if o.IsList {
			b = appendList(b, o.List)
		} else {
			b = appendValue(b, o.Value, o.Unit == "tokens")
		}
		closeWith(o.Unit)
	}
	return b
}

func appendList(b []byte, vs []float64) []byte {
	b = append(b, '[')
	n := 0
	for _, v := range vs {
		if !finite(v) {
			continue
		}
		if n > 0 {
			b = append(b, ',')
		}
		b = appendFloat(b, v)
		n++
	}
	return append(b, ']')
}

// LineError names the file, line and field of a bad JSONL line.
type LineError struct {
	File  string
	Line  int
	Field string
	Err   error
}

func (e *LineError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
	}
	return fmt.Sprintf("%s:%d: field %q: %v", e.File, e.Line, e.Field, e.Err)
}

func (e *LineError) Unwrap() error { return e.Err }

// JSONLReader streams records from profile_export.jsonl (AIPerf's or
// simbench's). Blank lines are skipped; unknown keys are ignored. The number
// lists of the records it returns are carved from shared arrays of a few
// thousand values (never overlapping), so one list kept keeps its 64 KiB
// array alive.
type JSONLReader struct {
	sc   *bufio.Scanner
	name string
	line int
	rec  RecordMetrics
	err  error
	slab slab // backs the records' number lists
	n    int  // records returned

	// AllowTorn drops a last line that has no newline and does not parse
	// (a write cut short: a full disk, a killed writer) instead of failing;
	// Torn then reports it.
	AllowTorn    bool
	torn         *LineError
	unterminated bool // the line being scanned ended at EOF without a newline
}

// NewJSONLReader reads from r; name is used in error messages.
func NewJSONLReader(r io.Reader, name string) *JSONLReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<30)
	jr := &JSONLReader{sc: sc, name: name}
	sc.Split(jr.splitLines)
	return jr
}

// splitLines is bufio.ScanLines noting a last line without its newline.
func (jr *JSONLReader) splitLines(data []byte, atEOF bool) (int, []byte, error) {
	adv, tok, err := bufio.ScanLines(data, atEOF)
	jr.unterminated = atEOF && tok != nil && adv == len(data) && (len(data) == 0 || data[len(data)-1] != '\n')
	return adv, tok, err
}

// Next reads the next record; it returns false at the end or on an error
// (see Err).
func (jr *JSONLReader) Next() bool {
	for jr.sc.Scan() {
		jr.line++
		b := jr.sc.Bytes()
		if len(trimSpace(b)) == 0 {
			continue
		}
		rec, err := parseJSONLLine(b, &jr.slab)
		if err == nil {
			err = checkRecord(&rec)
		}
		if err != nil {
			var fe *fieldError
			field := ""
			if errors.As(err, &fe) {
				field, err = fe.field, fe.err
			}
			le := &LineError{File: jr.name, Line: jr.line, Field: field, Err: err}
			if jr.AllowTorn && jr.unterminated {
				jr.torn = le
			} else {
				jr.err = le
			}
			return false
		}
		jr.rec = rec
		jr.n++
		return true
	}
	if err := jr.sc.Err(); err != nil {
		jr.err = &LineError{File: jr.name, Line: jr.line + 1, Err: err}
	}
	return false
}

// Record returns the record read by the last successful Next.
func (jr *JSONLReader) Record() *RecordMetrics { return &jr.rec }

// Err returns the first error met, if any.
func (jr *JSONLReader) Err() error { return jr.err }

// Count is the number of records read so far.
func (jr *JSONLReader) Count() int { return jr.n }

// Torn is the last line dropped under AllowTorn, nil when there was none.
func (jr *JSONLReader) Torn() *LineError { return jr.torn }

// ReadJSONL reads every record of a JSONL stream.
func ReadJSONL(r io.Reader, name string) ([]RecordMetrics, error) {
	jr := NewJSONLReader(r, name)
	var out []RecordMetrics
	for jr.Next() {
		out = append(out, *jr.Record())
	}
	return out, jr.Err()
}

// LoadJSONL reads a profile_export.jsonl file.
func LoadJSONL(path string) ([]RecordMetrics, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadJSONL(f, path)
}

type fieldError struct {
	field string
	err   error
}

func (e *fieldError) Error() string { return e.field + ": " + e.err.Error() }

type jsonlLine struct {
	Metadata *Metadata                  `json:"metadata"`
	Metrics  map[string]jsonMetricValue `json:"metrics"`
	Error    *ErrorDetails              `json:"error"`
	Simbench *Extension                 `json:"simbench"`
}

type jsonMetricValue struct {
	Value json.RawMessage `json:"value"`
	Unit  string          `json:"unit"`
}

// parseJSONLLine decodes a line, its number lists carved from s when the
// fast path takes it (s may be nil).
func parseJSONLLine(b []byte, s *slab) (RecordMetrics, error) {
	if m, ok := parseFastIn(b, s); ok {
		return m, nil
	}
	return parseJSONLSlow(b)
}

// parseJSONLSlow decodes a line with encoding/json: the reference parseFast
// must match, and the path that reports errors.
func parseJSONLSlow(b []byte) (RecordMetrics, error) {
	var l jsonlLine
	if err := json.Unmarshal(b, &l); err != nil {
		return RecordMetrics{}, fmt.Errorf("malformed JSON: %w", err)
	}
	if l.Metadata == nil {
		return RecordMetrics{}, &fieldError{"metadata", errors.New("missing")}
	}
	if l.Metrics == nil { // AIPerf writes it on every line, {} at least
		return RecordMetrics{}, &fieldError{"metrics", errors.New("missing")}
	}
	m := RecordMetrics{Meta: *l.Metadata, Error: l.Error, Ext: l.Simbench}
	tags := make([]string, 0, len(l.Metrics))
	for tag := range l.Metrics {
		tags = append(tags, tag)
	}
	sort.Strings(tags) // Other keeps a deterministic order
	for _, tag := range tags {
		if err := m.setRaw(tag, l.Metrics[tag]); err != nil {
			return RecordMetrics{}, &fieldError{"metrics." + tag, err}
		}
	}
	return m, nil
}

func (m *RecordMetrics) setRaw(tag string, mv jsonMetricValue) error {
	raw := trimSpace(mv.Value)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if raw[0] == '[' {
		var list []float64
		if err := json.Unmarshal(raw, &list); err != nil {
			return fmt.Errorf("value: %w", err)
		}
		return m.setList(tag, mv.Unit, list)
	}
	v, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || !finite(v) {
		return fmt.Errorf("value %s is not a finite number", raw)
	}
	switch id, ok := recordIndex[tag]; {
	case ok:
		if err := checkUnit(id, mv.Unit); err != nil {
			return err
		}
		m.set(id, v)
	case tag == TagErrorISL:
		m.ErrorISL = int(v)
	default:
		m.Other = append(m.Other, NamedValue{Tag: tag, Unit: mv.Unit, Value: v})
	}
	return nil
}

func (m *RecordMetrics) setList(tag, unit string, list []float64) error {
	for _, v := range list {
		if v < 0 && (tag == TagICL || tag == TagTokenGap) {
			return fmt.Errorf("negative gap %v", v)
		}
	}
	switch tag {
	case TagICL:
		m.ICL = list
	case TagTokenGap:
		m.TokenGap = list
	default:
		m.Other = append(m.Other, NamedValue{Tag: tag, Unit: unit, List: list, IsList: true})
	}
	return nil
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r' || b[0] == '\n') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r' || b[len(b)-1] == '\n') {
		b = b[:len(b)-1]
	}
	return b
}

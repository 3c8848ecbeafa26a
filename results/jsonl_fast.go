package results

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/simbench/simbench/internal/jsonlex"
)

// parseFast decodes one profile_export.jsonl line without reflection: it is
// what makes reading a million-record file fast. It handles the lines
// simbench and AIPerf write (compact or with ", " and ": " separators, keys
// in any order, unknown members of any shape skipped) and returns false for
// anything it does not decode exactly as parseJSONLSlow would: escaped or
// non-ASCII names of struct members, names matching a field only
// case-insensitively, repeated fields or metric tags (encoding/json keeps
// the last, merging objects), values of another type than the field's,
// numbers that do not fit, negative gaps, a missing or null "metadata" or
// "metrics", invalid JSON. The caller then falls back to parseJSONLSlow, which also
// produces the error messages. FuzzFastJSONL and FuzzFastJSONLGen check that
// both agree whenever parseFast succeeds.
func parseFast(b []byte) (RecordMetrics, bool) { return parseFastIn(b, nil) }

// parseFastIn is parseFast with the number lists carved from s (a nil s
// allocates each list on its own).
func parseFastIn(b []byte, s *slab) (RecordMetrics, bool) {
	d := jdec{Lexer: jsonlex.New(b), slab: s}
	var m RecordMetrics
	var seen jsonlex.Seen
	ok := d.Object(func(k []byte) bool { return d.topField(k, &m, &seen) })
	if !ok || !d.End() || !seen.Has(topMetadata) || !seen.Has(topMetrics) {
		return RecordMetrics{}, false
	}
	return m, true
}

// jdec reads one line: the shared lexer plus the schema below.
type jdec struct {
	jsonlex.Lexer
	slab *slab
}

// slab hands out the number lists of the records one reader decodes from
// shared backing arrays: one allocation per few thousand values instead of
// one per list, the bulk of a line's allocations. Lists never overlap and
// the reader never reuses one; a list kept alive keeps its slab alive.
type slab struct {
	f []float64
	i []int64
}

// slabLen is the length of one slab (64 KiB); longer lists get their own.
const slabLen = 8192

// carve returns an empty slice of capacity n from the free part of *free,
// which it renews when too short.
func carve[T any](free *[]T, n int) []T {
	if n == 0 || n > slabLen/8 {
		return make([]T, 0, n) // an empty list is not nil, as with encoding/json
	}
	if cap(*free)-len(*free) < n {
		*free = make([]T, 0, slabLen)
	}
	f := *free
	*free = f[:len(f)+n]
	return f[len(f) : len(f) : len(f)+n]
}

func (s *slab) floats(n int) []float64 {
	if s == nil {
		return make([]float64, 0, n)
	}
	return carve(&s.f, n)
}

func (s *slab) ints(n int) []int64 {
	if s == nil {
		return make([]int64, 0, n)
	}
	return carve(&s.i, n)
}

// Members of jsonlLine, Metadata, ErrorDetails, jsonMetricValue, Extension,
// Usage, SimDetail and Stage in field order (TestFastKeyTables checks them
// against the json tags); the constants index the tables.
const (
	topMetadata = iota
	topMetrics
	topError
	topSimbench
)

var topKeys = jsonlex.Names{"metadata", "metrics", "error", "simbench"}

const (
	mdSessionNum = iota
	mdXRequestID
	mdXCorrelationID
	mdConversationID
	mdTurnIndex
	mdRequestStartNs
	mdRequestAckNs
	mdRequestEndNs
	mdWorkerID
	mdRecordProcessorID
	mdBenchmarkPhase
	mdWasCancelled
	mdCancellationTimeNs
)

var metadataKeys = jsonlex.Names{"session_num", "x_request_id", "x_correlation_id",
	"conversation_id", "turn_index", "request_start_ns", "request_ack_ns", "request_end_ns",
	"worker_id", "record_processor_id", "benchmark_phase", "was_cancelled", "cancellation_time_ns"}

const (
	errCode = iota
	errType
	errMessage
)

var errorKeys = jsonlex.Names{"code", "type", "message"}

const (
	mvValue = iota
	mvUnit
)

var metricKeys = jsonlex.Names{"value", "unit"}

const (
	extTraceRow = iota
	extIntendedSendNs
	extWorker
	extRequestedOutputTokens
	extUsage
	extSim
	extChunkNs
)

var extKeys = jsonlex.Names{"trace_row", "intended_send_ns", "worker",
	"requested_output_tokens", "usage", "sim", "chunk_ns"}

const (
	usPrompt = iota
	usCompletion
	usReasoning
	usTotal
)

var usageKeys = jsonlex.Names{"prompt_tokens", "completion_tokens", "reasoning_tokens", "total_tokens"}

const (
	simQueueWait = iota
	simPrefillStart
	simPrefillEnd
	simCached
	simPreemptions
	simBreakdown
	simPrefillWorker
	simDecodeWorker
	simXferStart
	simXferEnd
	simXferBytes
)

var simKeys = jsonlex.Names{"queue_wait_ns", "prefill_start_ns", "prefill_end_ns",
	"cached_tokens", "preemptions", "ttft_breakdown", "prefill_worker", "decode_worker",
	"kv_transfer_start_ns", "kv_transfer_end_ns", "kv_transfer_bytes"}

const (
	stName = iota
	stNs
)

var stageKeys = jsonlex.Names{"stage", "ns"}

func (d *jdec) topField(k []byte, m *RecordMetrics, seen *jsonlex.Seen) bool {
	f, ok := d.Member(k, topKeys, seen)
	switch f {
	case topMetadata:
		return !d.Null() && d.metadata(&m.Meta)
	case topMetrics:
		return d.metrics(m)
	case topError:
		return d.errorDetails(&m.Error)
	case topSimbench:
		return d.extension(&m.Ext)
	}
	return ok
}

func (d *jdec) metadata(md *Metadata) bool {
	var seen jsonlex.Seen
	return d.Object(func(k []byte) bool {
		f, ok := d.Member(k, metadataKeys, &seen)
		switch f {
		case mdSessionNum:
			return d.intTo(&md.SessionNum)
		case mdXRequestID:
			return d.stringTo(&md.XRequestID)
		case mdXCorrelationID:
			return d.stringTo(&md.XCorrelationID)
		case mdConversationID:
			return d.stringTo(&md.ConversationID)
		case mdTurnIndex:
			return d.intTo(&md.TurnIndex)
		case mdRequestStartNs:
			return d.int64To(&md.RequestStartNs)
		case mdRequestAckNs:
			return d.int64To(&md.RequestAckNs)
		case mdRequestEndNs:
			return d.int64To(&md.RequestEndNs)
		case mdWorkerID:
			return d.stringTo(&md.WorkerID)
		case mdRecordProcessorID:
			return d.stringTo(&md.RecordProcessorID)
		case mdBenchmarkPhase:
			return d.stringTo(&md.BenchmarkPhase)
		case mdWasCancelled:
			return d.boolTo(&md.WasCancelled)
		case mdCancellationTimeNs:
			return d.int64To(&md.CancellationTimeNs)
		}
		return ok
	})
}

func (d *jdec) errorDetails(dst **ErrorDetails) bool {
	if d.Null() {
		return true
	}
	e := new(ErrorDetails)
	*dst = e
	var seen jsonlex.Seen
	return d.Object(func(k []byte) bool {
		f, ok := d.Member(k, errorKeys, &seen)
		switch f {
		case errCode:
			return d.intTo(&e.Code)
		case errType:
			return d.stringTo(&e.Type)
		case errMessage:
			return d.stringTo(&e.Message)
		}
		return ok
	})
}

func (d *jdec) extension(dst **Extension) bool {
	if d.Null() {
		return true
	}
	e := new(Extension)
	*dst = e
	var seen jsonlex.Seen
	return d.Object(func(k []byte) bool {
		f, ok := d.Member(k, extKeys, &seen)
		switch f {
		case extTraceRow:
			return d.intTo(&e.TraceRow)
		case extIntendedSendNs:
			return d.int64To(&e.IntendedSendNs)
		case extWorker:
			return d.stringTo(&e.Worker)
		case extRequestedOutputTokens:
			return d.intTo(&e.RequestedOutputTokens)
		case extUsage:
			return d.usage(&e.Usage)
		case extSim:
			return d.sim(&e.Sim)
		case extChunkNs:
			return d.int64s(&e.ChunkNs)
		}
		return ok
	})
}

func (d *jdec) usage(dst **Usage) bool {
	if d.Null() {
		return true
	}
	u := new(Usage)
	*dst = u
	var seen jsonlex.Seen
	return d.Object(func(k []byte) bool {
		f, ok := d.Member(k, usageKeys, &seen)
		switch f {
		case usPrompt:
			return d.intTo(&u.PromptTokens)
		case usCompletion:
			return d.intTo(&u.CompletionTokens)
		case usReasoning:
			return d.intTo(&u.ReasoningTokens)
		case usTotal:
			return d.intTo(&u.TotalTokens)
		}
		return ok
	})
}

func (d *jdec) sim(dst **SimDetail) bool {
	if d.Null() {
		return true
	}
	s := new(SimDetail)
	*dst = s
	var seen jsonlex.Seen
	return d.Object(func(k []byte) bool {
		f, ok := d.Member(k, simKeys, &seen)
		switch f {
		case simQueueWait:
			return d.int64To(&s.QueueWaitNs)
		case simPrefillStart:
			return d.int64To(&s.PrefillStartNs)
		case simPrefillEnd:
			return d.int64To(&s.PrefillEndNs)
		case simCached:
			return d.intTo(&s.CachedTokens)
		case simPreemptions:
			return d.intTo(&s.Preemptions)
		case simBreakdown:
			return d.stages(&s.TTFTBreakdown)
		case simPrefillWorker:
			return d.stringTo(&s.PrefillWorker)
		case simDecodeWorker:
			return d.stringTo(&s.DecodeWorker)
		case simXferStart:
			return d.int64To(&s.KVTransferStartNs)
		case simXferEnd:
			return d.int64To(&s.KVTransferEndNs)
		case simXferBytes:
			return d.int64To(&s.KVTransferBytes)
		}
		return ok
	})
}

// stages reads ttft_breakdown: null, or an array whose null elements are
// zero stages, as encoding/json leaves them.
func (d *jdec) stages(dst *[]Stage) bool {
	if d.Null() {
		return true
	}
	out := make([]Stage, 0, 4)
	ok := d.Array(func(int) bool {
		out = append(out, Stage{})
		return d.Null() || d.stage(&out[len(out)-1])
	})
	*dst = out
	return ok
}

func (d *jdec) stage(st *Stage) bool {
	var seen jsonlex.Seen
	return d.Object(func(k []byte) bool {
		f, ok := d.Member(k, stageKeys, &seen)
		switch f {
		case stName:
			return d.stringTo(&st.Name)
		case stNs:
			return d.int64To(&st.Ns)
		}
		return ok
	})
}

// int64s reads null or an array of integers (null elements read as 0, as
// json.Unmarshal leaves them): chunk_ns, a list per line.
func (d *jdec) int64s(dst *[]int64) bool {
	if d.Null() {
		*dst = nil
		return true
	}
	if d.Peek() != '[' {
		return false
	}
	var ok bool
	*dst, ok = d.AppendInts(d.slab.ints(d.ListLen()))
	return ok
}

// Metric slots beyond the scalar recordIDs, for duplicate detection.
const (
	slotICL = int(numRecordMetrics) + iota
	slotTokenGap
	slotErrorISL
	slotOther = -1
)

func metricSlot(tag []byte) int {
	if id, ok := recordIndex[string(tag)]; ok {
		return int(id)
	}
	switch string(tag) {
	case TagICL:
		return slotICL
	case TagTokenGap:
		return slotTokenGap
	case TagErrorISL:
		return slotErrorISL
	}
	return slotOther
}

// metricsState tracks the tags of one "metrics" object: encoding/json keeps
// the last of repeated tags, parseFast falls back instead.
type metricsState struct {
	seen   jsonlex.Seen
	others [][]byte // tags that go to Other (null values included)
}

// metrics reads the "metrics" object into m with setRaw's semantics.
func (d *jdec) metrics(m *RecordMetrics) bool {
	if d.Null() {
		return false // missing: the slow path reports it
	}
	var buf [16][]byte
	st := metricsState{others: buf[:0]}
	ok := d.Object(func(tag []byte) bool { return d.metric(tag, m, &st) })
	return ok && st.finish(m)
}

func (d *jdec) metric(tag []byte, m *RecordMetrics, st *metricsState) bool {
	if !d.KeyPlain() || !d.KeyASCII() && !utf8.Valid(tag) { // encoding/json would decode the tag
		return false
	}
	slot := metricSlot(tag)
	if slot == slotOther {
		st.others = append(st.others, tag)
	} else if !st.seen.Once(slot) {
		return false
	}
	var mv metricVal
	if !d.metricValue(&mv) {
		return false
	}
	return mv.kind == valNone || m.storeFast(tag, slot, &mv)
}

// finish rejects repeated unknown tags and sorts Other by tag, as the slow
// path does. (Other also gets known tags whose value has the other shape: a
// list for a scalar metric, a number for a list one.)
func (st *metricsState) finish(m *RecordMetrics) bool {
	if len(st.others) > 1 {
		slices.SortFunc(st.others, bytes.Compare)
		for i := 1; i < len(st.others); i++ {
			if bytes.Equal(st.others[i-1], st.others[i]) {
				return false
			}
		}
	}
	if len(m.Other) > 1 {
		slices.SortFunc(m.Other, func(a, b NamedValue) int { return strings.Compare(a.Tag, b.Tag) })
	}
	return true
}

// metricVal is one {"value": …, "unit": …} object.
type metricVal struct {
	kind  int
	v     float64
	list  []float64
	unit  []byte // the unit's body as read
	plain bool   // unit is its own decoding
}

const (
	valNone = iota // absent or null: no metric, as in setRaw
	valScalar
	valList
)

func (d *jdec) metricValue(mv *metricVal) bool {
	if d.Null() {
		return true
	}
	start := d.Pos()
	if d.usualMetric(mv) {
		return true
	}
	d.SetPos(start)
	*mv = metricVal{}
	var seen jsonlex.Seen
	return d.Object(func(k []byte) bool {
		f, ok := d.Member(k, metricKeys, &seen)
		switch f {
		case mvValue:
			return d.value(mv)
		case mvUnit:
			return d.Null() || d.unitString(mv)
		}
		return ok
	})
}

// usualMetric reads {"value": …, "unit": "…"}, the members in the order
// everyone writes them, without the generic member lookup: as one literal
// per separator in the two layouts written (simbench's compact one and
// AIPerf's ", " and ": "), token by token otherwise.
func (d *jdec) usualMetric(mv *metricVal) bool {
	switch {
	case d.Literal(`{"value":`):
		return d.value(mv) && d.Literal(`,"unit":`) && d.unitString(mv) && d.Eat('}')
	case d.Literal(`{"value": `):
		return d.value(mv) && d.Literal(`, "unit": `) && d.unitString(mv) && d.Eat('}')
	}
	return d.Token(`{`) && d.Token(`"value"`) && d.Token(`:`) && d.value(mv) &&
		d.Token(`,`) && d.Token(`"unit"`) && d.Token(`:`) && d.unitString(mv) && d.Token(`}`)
}

func (d *jdec) unitString(mv *metricVal) bool {
	var ok bool
	mv.unit, mv.plain, ok = d.String()
	return ok
}

// value reads a metric value: null, a finite number, or a list of numbers
// (null elements read as 0, as json.Unmarshal into []float64 does).
func (d *jdec) value(mv *metricVal) bool {
	switch {
	case d.Null():
		return true
	case d.Peek() == '[':
		mv.kind = valList
		var ok bool
		mv.list, ok = d.AppendFloats(d.slab.floats(d.ListLen()))
		return ok
	}
	mv.kind = valScalar
	v, ok := d.Float()
	mv.v = v
	return ok
}

// storeFast stores a non-null metric value the way setRaw and setList do.
func (m *RecordMetrics) storeFast(tag []byte, slot int, mv *metricVal) bool {
	switch {
	case mv.kind == valList && (slot == slotICL || slot == slotTokenGap):
		if slices.ContainsFunc(mv.list, func(v float64) bool { return v < 0 }) {
			return false // setList's "negative gap" error
		}
		if slot == slotICL {
			m.ICL = mv.list
		} else {
			m.TokenGap = mv.list
		}
	case mv.kind == valScalar && slot >= 0 && slot < int(numRecordMetrics):
		if !mv.plain && len(mv.unit) > 0 || checkUnit(recordID(slot), string(mv.unit)) != nil {
			return false // an escaped unit, or setRaw's unit error
		}
		m.set(recordID(slot), mv.v)
	case mv.kind == valScalar && slot == slotErrorISL:
		m.ErrorISL = int(mv.v)
	default:
		m.Other = append(m.Other, NamedValue{Tag: string(tag), Unit: decodeString(mv.unit, mv.plain),
			Value: mv.v, List: mv.list, IsList: mv.kind == valList})
	}
	return true
}

// --- field values ---

func (d *jdec) intTo(dst *int) bool {
	if d.Null() {
		return true
	}
	v, ok := d.Int(strconv.IntSize)
	*dst = int(v)
	return ok
}

func (d *jdec) int64To(dst *int64) bool {
	if d.Null() {
		return true
	}
	v, ok := d.Int(64)
	*dst = v
	return ok
}

func (d *jdec) boolTo(dst *bool) bool {
	if d.Null() {
		return true
	}
	v, ok := d.Bool()
	*dst = v
	return ok
}

func (d *jdec) stringTo(dst *string) bool {
	if d.Null() {
		return true
	}
	body, plain, ok := d.String()
	*dst = decodeString(body, plain)
	return ok
}

// decodeString decodes a string body read by String, without allocating
// for the values every line repeats.
func decodeString(body []byte, plain bool) string {
	if !plain {
		return jsonlex.Decode(body, false)
	}
	switch string(body) {
	case "":
		return ""
	case "ms":
		return "ms"
	case "tokens":
		return "tokens"
	case "simbench":
		return "simbench"
	case "profiling":
		return "profiling"
	}
	return string(body)
}

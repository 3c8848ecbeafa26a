package results

import (
	"bytes"
	"encoding/json"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
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
// "metrics",
// invalid JSON. The caller then falls back to parseJSONLSlow, which also
// produces the error messages. FuzzFastJSONL and FuzzFastJSONLGen check that
// both agree whenever parseFast succeeds.
func parseFast(b []byte) (RecordMetrics, bool) { return parseFastIn(b, nil) }

// parseFastIn is parseFast with the number lists carved from s (a nil s
// allocates each list on its own).
func parseFastIn(b []byte, s *slab) (RecordMetrics, bool) {
	d := jdec{b: b, slab: s}
	var m RecordMetrics
	var seen keySet
	ok := d.object(func(k []byte) bool { return d.topField(k, &m, &seen) })
	if !ok || !d.end() || !seen.has(topMetadata) || !seen.has(topMetrics) {
		return RecordMetrics{}, false
	}
	return m, true
}

// jdec is a cursor over one line.
type jdec struct {
	b        []byte
	i        int
	keyASCII bool // the last key read is ASCII
	slab     *slab
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

// maxSkipDepth bounds the nesting of skipped values; deeper lines fall back.
const maxSkipDepth = 64

// keyTable lists the member names of one struct in field order
// (TestFastKeyTables checks them against the json tags).
type keyTable []string

// Members of jsonlLine, Metadata, ErrorDetails, jsonMetricValue, Extension,
// Usage, SimDetail and Stage; the constants index the tables.
const (
	topMetadata = iota
	topMetrics
	topError
	topSimbench
)

var topKeys = keyTable{"metadata", "metrics", "error", "simbench"}

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

var metadataKeys = keyTable{"session_num", "x_request_id", "x_correlation_id",
	"conversation_id", "turn_index", "request_start_ns", "request_ack_ns", "request_end_ns",
	"worker_id", "record_processor_id", "benchmark_phase", "was_cancelled", "cancellation_time_ns"}

const (
	errCode = iota
	errType
	errMessage
)

var errorKeys = keyTable{"code", "type", "message"}

const (
	mvValue = iota
	mvUnit
)

var metricKeys = keyTable{"value", "unit"}

const (
	extTraceRow = iota
	extIntendedSendNs
	extWorker
	extRequestedOutputTokens
	extUsage
	extSim
	extChunkNs
)

var extKeys = keyTable{"trace_row", "intended_send_ns", "worker",
	"requested_output_tokens", "usage", "sim", "chunk_ns"}

const (
	usPrompt = iota
	usCompletion
	usReasoning
	usTotal
)

var usageKeys = keyTable{"prompt_tokens", "completion_tokens", "reasoning_tokens", "total_tokens"}

const (
	simQueueWait = iota
	simPrefillStart
	simPrefillEnd
	simCached
	simPreemptions
	simBreakdown
)

var simKeys = keyTable{"queue_wait_ns", "prefill_start_ns", "prefill_end_ns",
	"cached_tokens", "preemptions", "ttft_breakdown"}

const (
	stName = iota
	stNs
)

var stageKeys = keyTable{"stage", "ns"}

// keySet records which members of an object were seen.
type keySet uint64

func (s keySet) has(i int) bool { return s&(1<<i) != 0 }

// once marks i seen and reports whether it was not seen before.
func (s *keySet) once(i int) bool {
	if s.has(i) {
		return false
	}
	*s |= 1 << i
	return true
}

// member resolves the name k of a struct member against t. It returns the
// field index and true for a field seen for the first time; -1 and true for
// an unknown name, whose value it has skipped; and false when encoding/json
// would treat k differently from us (a repeated field, a name with non-ASCII
// bytes, or one that matches a field case-insensitively only).
func (d *jdec) member(k []byte, t keyTable, seen *keySet) (int, bool) {
	for f, n := range t { // faster than a map for these few short names
		if string(k) == n {
			if !seen.once(f) {
				return -1, false
			}
			return f, true
		}
	}
	if !d.keyASCII {
		return -1, false
	}
	for _, n := range t {
		if bytes.EqualFold(k, []byte(n)) {
			return -1, false
		}
	}
	return -1, d.skip(0)
}

func (d *jdec) topField(k []byte, m *RecordMetrics, seen *keySet) bool {
	f, ok := d.member(k, topKeys, seen)
	switch f {
	case topMetadata:
		return !d.null() && d.metadata(&m.Meta)
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
	var seen keySet
	return d.object(func(k []byte) bool {
		f, ok := d.member(k, metadataKeys, &seen)
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
	if d.null() {
		return true
	}
	e := new(ErrorDetails)
	*dst = e
	var seen keySet
	return d.object(func(k []byte) bool {
		f, ok := d.member(k, errorKeys, &seen)
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
	if d.null() {
		return true
	}
	e := new(Extension)
	*dst = e
	var seen keySet
	return d.object(func(k []byte) bool {
		f, ok := d.member(k, extKeys, &seen)
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
	if d.null() {
		return true
	}
	u := new(Usage)
	*dst = u
	var seen keySet
	return d.object(func(k []byte) bool {
		f, ok := d.member(k, usageKeys, &seen)
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
	if d.null() {
		return true
	}
	s := new(SimDetail)
	*dst = s
	var seen keySet
	return d.object(func(k []byte) bool {
		f, ok := d.member(k, simKeys, &seen)
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
		}
		return ok
	})
}

// stages reads ttft_breakdown: null, or an array whose null elements are
// zero stages, as encoding/json leaves them.
func (d *jdec) stages(dst *[]Stage) bool {
	if d.null() {
		return true
	}
	out := make([]Stage, 0, 4)
	ok := d.array(func() bool {
		out = append(out, Stage{})
		return d.null() || d.stage(&out[len(out)-1])
	})
	*dst = out
	return ok
}

func (d *jdec) stage(st *Stage) bool {
	var seen keySet
	return d.object(func(k []byte) bool {
		f, ok := d.member(k, stageKeys, &seen)
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
	if d.null() {
		*dst = nil
		return true
	}
	if !d.peek('[') {
		return false
	}
	out := d.slab.ints(d.listLen())
	d.i++ // '['
	d.ws()
	if d.eat(']') {
		*dst = out
		return true
	}
	for {
		d.ws()
		v, ok := int64(0), d.null()
		if !ok {
			if v, ok = d.integer(64); !ok {
				return false
			}
		}
		out = append(out, v)
		if !d.eat(',') {
			d.ws()
			if d.eat(']') {
				*dst = out
				return true
			}
			if !d.eat(',') {
				return false
			}
		}
	}
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
	seen   keySet
	others [][]byte // tags that go to Other (null values included)
}

// metrics reads the "metrics" object into m with setRaw's semantics.
func (d *jdec) metrics(m *RecordMetrics) bool {
	if d.null() {
		return false // missing: the slow path reports it
	}
	var buf [16][]byte
	st := metricsState{others: buf[:0]}
	ok := d.object(func(tag []byte) bool { return d.metric(tag, m, &st) })
	return ok && st.finish(m)
}

func (d *jdec) metric(tag []byte, m *RecordMetrics, st *metricsState) bool {
	if !d.keyASCII && !utf8.Valid(tag) { // encoding/json would replace the bad bytes
		return false
	}
	slot := metricSlot(tag)
	if slot == slotOther {
		st.others = append(st.others, tag)
	} else if !st.seen.once(slot) {
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
	unit  []byte // the quoted unit as read; nil when absent or null
	plain bool   // unit has no escapes and is valid UTF-8
}

const (
	valNone = iota // absent or null: no metric, as in setRaw
	valScalar
	valList
)

func (d *jdec) metricValue(mv *metricVal) bool {
	if d.null() {
		return true
	}
	start := d.i
	if d.usualMetric(mv) {
		return true
	}
	d.i, *mv = start, metricVal{}
	var seen keySet
	return d.object(func(k []byte) bool {
		f, ok := d.member(k, metricKeys, &seen)
		switch f {
		case mvValue:
			return d.value(mv)
		case mvUnit:
			return d.null() || d.rawString(&mv.unit, &mv.plain)
		}
		return ok
	})
}

// usualMetric reads {"value": …, "unit": "…"}, the members in the order
// everyone writes them, without the generic member lookup.
func (d *jdec) usualMetric(mv *metricVal) bool {
	return d.token(`{`) && d.token(`"value"`) && d.token(`:`) && d.value(mv) &&
		d.token(`,`) && d.token(`"unit"`) && d.token(`:`) &&
		d.rawString(&mv.unit, &mv.plain) && d.token(`}`)
}

// token reads s and the whitespace after it.
func (d *jdec) token(s string) bool {
	d.ws()
	if !d.literal(s) {
		return false
	}
	d.ws()
	return true
}

// value reads a metric value: null, a finite number, or a list of numbers
// (null elements read as 0, as json.Unmarshal into []float64 does).
func (d *jdec) value(mv *metricVal) bool {
	switch {
	case d.null():
		return true
	case d.peek('['):
		mv.kind = valList
		return d.floats(&mv.list)
	}
	mv.kind = valScalar
	v, ok := d.float()
	mv.v = v
	return ok
}

// floats reads an array of numbers (null elements read as 0, as
// json.Unmarshal leaves them); it is the hot loop of a line.
func (d *jdec) floats(dst *[]float64) bool {
	out := d.slab.floats(d.listLen())
	d.i++ // '['
	d.ws()
	if d.eat(']') {
		*dst = out
		return true
	}
	for {
		d.ws()
		v, ok := 0.0, d.null()
		if !ok {
			if v, ok = d.float(); !ok {
				return false
			}
		}
		out = append(out, v)
		if !d.eat(',') { // no space after a comma nor before: the usual case
			d.ws()
			if d.eat(']') {
				*dst = out
				return true
			}
			if !d.eat(',') {
				return false
			}
		}
	}
}

// listLen estimates the number of elements of the flat array at the cursor.
func (d *jdec) listLen() int {
	end := bytes.IndexByte(d.b[d.i:], ']')
	if end < 0 {
		return 0
	}
	return bytes.Count(d.b[d.i:d.i+end], []byte{','}) + 1
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
		m.set(recordID(slot), mv.v)
	case mv.kind == valScalar && slot == slotErrorISL:
		m.ErrorISL = int(mv.v)
	default:
		unit, ok := decodeString(mv.unit, mv.plain)
		if !ok {
			return false
		}
		m.Other = append(m.Other, NamedValue{Tag: string(tag), Unit: unit,
			Value: mv.v, List: mv.list, IsList: mv.kind == valList})
	}
	return true
}

// --- field values ---

func (d *jdec) intTo(dst *int) bool {
	if d.null() {
		return true
	}
	v, ok := d.integer(strconv.IntSize)
	*dst = int(v)
	return ok
}

func (d *jdec) int64To(dst *int64) bool {
	if d.null() {
		return true
	}
	v, ok := d.integer(64)
	*dst = v
	return ok
}

func (d *jdec) boolTo(dst *bool) bool {
	switch {
	case d.null():
	case d.literal("true"):
		*dst = true
	case d.literal("false"):
		*dst = false
	default:
		return false
	}
	return true
}

func (d *jdec) stringTo(dst *string) bool {
	if d.null() {
		return true
	}
	var raw []byte
	var plain bool
	if !d.rawString(&raw, &plain) {
		return false
	}
	s, ok := decodeString(raw, plain)
	*dst = s
	return ok
}

// decodeString converts a quoted JSON string read by rawString. Strings with
// escapes or invalid UTF-8 go through encoding/json, which alone knows how
// it unescapes and replaces them.
func decodeString(raw []byte, plain bool) (string, bool) {
	switch {
	case raw == nil:
		return "", true
	case plain:
		return internString(raw[1 : len(raw)-1]), true
	}
	var s string
	return s, json.Unmarshal(raw, &s) == nil
}

// internString returns the values every line repeats without allocating.
func internString(b []byte) string {
	switch string(b) {
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
	return string(b)
}

// integer reads an integer literal that strconv.ParseInt accepts for bits:
// what encoding/json stores in an int field.
func (d *jdec) integer(bits int) (int64, bool) {
	b, i := d.b, d.i
	neg := i < len(b) && b[i] == '-'
	if neg {
		i++
	}
	first := i
	var u uint64
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i]-'1' <= 8:
		i, u = digitRun(b, i, u)
	default:
		return 0, false
	}
	if i < len(b) && (b[i] == '.' || b[i]|0x20 == 'e') {
		return 0, false // a fraction or exponent: not for an int field
	}
	lit := b[d.i:i]
	d.i = i
	switch {
	case i-first > 19 || bits < 64: // 19 digits cannot wrap a uint64
		v, err := strconv.ParseInt(string(lit), 10, bits)
		return v, err == nil
	case neg:
		return -int64(u), u <= 1<<63
	}
	return int64(u), u <= math.MaxInt64
}

// float reads a number as the float64 strconv.ParseFloat returns for it,
// rejecting what does not fit (as setRaw and json.Unmarshal do). It is the
// hot loop of a line, hence one function on locals. ParseFloat rounds
// correctly (to nearest, ties to even), so any correctly rounded conversion
// gives the same float: numbers without exponent of at most 19 digits are
// their digits m divided by 10^k, which toFloat computes exactly; others
// (exponents, longer numbers) go through strconv.
func (d *jdec) float() (float64, bool) {
	b, i := d.b, d.i
	neg := i < len(b) && b[i] == '-'
	if neg {
		i++
	}
	var mant uint64
	first := i
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i]-'1' <= 8:
		i, mant = digitRun(b, i, mant)
	default:
		return 0, false
	}
	nd, frac := i-first, i
	if i < len(b) && b[i] == '.' {
		i++
		frac = i
		i, mant = digitRun(b, i, mant)
		if i == frac {
			return 0, false
		}
		nd += i - frac
	}
	if (i < len(b) && b[i]|0x20 == 'e') || nd > 19 {
		return d.parseFloat()
	}
	d.i = i
	f := toFloat(mant, i-frac)
	if neg {
		f = -f
	}
	return f, true
}

// toFloat returns m/10^k correctly rounded, for k ≤ 19 (nd ≤ 19 implies it).
func toFloat(m uint64, k int) float64 {
	if m <= 1<<53 {
		// Clinger's fast path: both operands are exact floats, so the one
		// IEEE division rounds correctly.
		return float64(int64(m)) / float64pow10[k]
	}
	return divRound(m, uint64pow10[k])
}

var float64pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19}

var uint64pow10 = [...]uint64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19}

// divRound returns a/b for 0 < a, b rounded to nearest, ties to even, by
// long division: the 62-64 bit quotient of a·2^s/b and whether a remainder
// is left decide the rounding of its top 53 bits exactly. (AIPerf's gaps
// have 17 digits: too many for Clinger's path, and ParseFloat costs 3×.)
func divRound(a, b uint64) float64 {
	s := 63 - bits.Len64(a) + bits.Len64(b) // 0 ≤ s ≤ 126; puts the quotient in [2^62, 2^64)
	var hi, lo uint64
	switch {
	case s >= 64:
		hi = a << (s - 64)
	case s > 0:
		hi, lo = a>>(64-s), a<<s
	default:
		lo = a
	}
	q, r := bits.Div64(hi, lo, b) // hi < b: a·2^s < 2^(63+len(b))
	drop := bits.Len64(q) - 53    // 10 or 11 bits below the 53 kept
	m, rest, half := q>>drop, q&(1<<drop-1), uint64(1)<<(drop-1)
	if rest > half || (rest == half && (r != 0 || m&1 == 1)) {
		m++
	}
	e := drop - s + 52 // a/b ≈ m·2^(drop-s), m in [2^52, 2^53]
	if m == 1<<53 {
		m, e = m>>1, e+1
	}
	return math.Float64frombits(uint64(e+1023)<<52 | m&(1<<52-1))
}

// digitRun reads the digits at b[i:] into mant (which wraps past 19
// digits). Word-at-a-time (SWAR) and two-digit variants were not faster on
// these short runs.
func digitRun(b []byte, i int, mant uint64) (int, uint64) {
	for ; i < len(b) && b[i]-'0' <= 9; i++ {
		mant = mant*10 + uint64(b[i]-'0')
	}
	return i, mant
}

// parseFloat reads the number at the cursor with strconv.
func (d *jdec) parseFloat() (float64, bool) {
	start := d.i
	if _, ok := d.number(); !ok {
		return 0, false
	}
	v, err := strconv.ParseFloat(string(d.b[start:d.i]), 64)
	return v, err == nil && finite(v)
}

// --- syntax ---

func (d *jdec) ws() {
	b, i := d.b, d.i
	for i < len(b) && b[i] <= ' ' && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	d.i = i
}

func (d *jdec) peek(c byte) bool { return d.i < len(d.b) && d.b[d.i] == c }

func (d *jdec) eat(c byte) bool {
	if d.peek(c) {
		d.i++
		return true
	}
	return false
}

func (d *jdec) end() bool {
	d.ws()
	return d.i == len(d.b)
}

func (d *jdec) literal(s string) bool {
	if len(d.b)-d.i >= len(s) && string(d.b[d.i:d.i+len(s)]) == s {
		d.i += len(s)
		return true
	}
	return false
}

func (d *jdec) null() bool { return d.peek('n') && d.literal("null") }

// object reads an object, calling field with the cursor on each member's
// value. The key is plain: escaped keys make parseFast fall back.
func (d *jdec) object(field func(key []byte) bool) bool {
	d.ws()
	if !d.eat('{') {
		return false
	}
	d.ws()
	if d.eat('}') {
		return true
	}
	for {
		k, ok := d.key()
		if !ok || !field(k) {
			return false
		}
		d.ws()
		if d.eat('}') {
			return true
		}
		if !d.eat(',') {
			return false
		}
	}
}

// array reads an array, calling elem with the cursor on each element.
func (d *jdec) array(elem func() bool) bool {
	if !d.eat('[') {
		return false
	}
	d.ws()
	if d.eat(']') {
		return true
	}
	for {
		d.ws()
		if !elem() {
			return false
		}
		d.ws()
		if d.eat(']') {
			return true
		}
		if !d.eat(',') {
			return false
		}
	}
}

// key reads `"name":` without escapes and leaves the cursor on the value.
func (d *jdec) key() ([]byte, bool) {
	d.ws()
	if !d.eat('"') {
		return nil, false
	}
	start := d.i
	d.keyASCII = d.plainRun() < utf8.RuneSelf
	if !d.peek('"') {
		return nil, false // escape, control character or end of line
	}
	k := d.b[start:d.i]
	d.i++
	d.ws()
	ok := d.eat(':')
	d.ws()
	return k, ok
}

// plainByte[c] reports whether a string holds c as it is: not a quote, a
// backslash or a control character.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < len(t); c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// plainRun skips plain string bytes and returns them ORed together.
func (d *jdec) plainRun() byte {
	b, i := d.b, d.i
	var acc byte
	for ; i < len(b) && plainByte[b[i]]; i++ {
		acc |= b[i]
	}
	d.i = i
	return acc
}

// rawString reads a string, validating it, and returns it with its quotes;
// plain reports no escapes and valid UTF-8.
func (d *jdec) rawString(raw *[]byte, plain *bool) bool {
	start := d.i
	if !d.eat('"') {
		return false
	}
	acc, esc := byte(0), false
	for {
		acc |= d.plainRun()
		switch {
		case d.eat('"'):
			*raw = d.b[start:d.i]
			*plain = !esc && (acc < utf8.RuneSelf || utf8.Valid(*raw))
			return true
		case d.eat('\\'):
			esc = true
			if !d.escape() {
				return false
			}
		default:
			return false // control character or end of line
		}
	}
}

func (d *jdec) escape() bool {
	if d.i >= len(d.b) {
		return false
	}
	c := d.b[d.i]
	d.i++
	switch c {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return true
	case 'u':
		if d.i+4 > len(d.b) {
			return false
		}
		for _, h := range d.b[d.i : d.i+4] {
			if !isHexDigit(h) {
				return false
			}
		}
		d.i += 4
		return true
	}
	return false
}

func isHexDigit(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// number reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? and reports
// whether it is an integer literal (no fraction, no exponent).
func (d *jdec) number() (isInt, ok bool) {
	d.eat('-')
	if !d.eat('0') && !d.digits(true) {
		return false, false
	}
	isInt = true
	if d.eat('.') {
		isInt = false
		if !d.digits(false) {
			return false, false
		}
	}
	if d.eat('e') || d.eat('E') {
		isInt = false
		if !d.eat('+') {
			d.eat('-')
		}
		return false, d.digits(false)
	}
	return isInt, true
}

// digits reads one or more digits; nonZero requires the first to be 1-9.
func (d *jdec) digits(nonZero bool) bool {
	start := d.i
	if nonZero && (d.i >= len(d.b) || d.b[d.i] == '0') {
		return false
	}
	for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
		d.i++
	}
	return d.i > start
}

// skip validates and skips one value of any type.
func (d *jdec) skip(depth int) bool {
	if d.i >= len(d.b) || depth > maxSkipDepth {
		return false
	}
	switch c := d.b[d.i]; {
	case c == '{':
		return d.skipObject(depth)
	case c == '[':
		return d.array(func() bool { return d.skip(depth + 1) })
	case c == '"':
		var raw []byte
		var plain bool
		return d.rawString(&raw, &plain)
	case c == '-' || (c >= '0' && c <= '9'):
		_, ok := d.number()
		return ok
	}
	return d.literal("true") || d.literal("false") || d.null()
}

// skipObject skips an object; unlike object it accepts escaped keys.
func (d *jdec) skipObject(depth int) bool {
	d.i++ // '{'
	if d.token(`}`) {
		return true
	}
	for {
		var raw []byte
		var plain bool
		if !d.rawString(&raw, &plain) || !d.token(`:`) || !d.skip(depth+1) {
			return false
		}
		if d.token(`}`) {
			return true
		}
		if !d.token(`,`) {
			return false
		}
	}
}

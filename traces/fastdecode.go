package traces

import (
	"github.com/simbench/simbench/internal/jsonlex"
)

// fastDecode decodes one JSONL line straight into a Request, without
// reflection and without a second pass over the values: each known member
// is converted once from its token. It handles the shapes real traces use
// and returns ok false for anything it does not decode exactly as
// parseRowSlow (encoding/json and the checks on raw values) would: escaped
// or non-ASCII keys, keys matching a field only case-insensitively,
// repeated keys, values of another type than the field's, hash_ids that are
// not integer literals fitting int64, invalid JSON, and every row that
// fails a check. The caller then runs parseRowSlow, which also produces the
// error messages. FuzzFastDecode checks that both agree whenever fastDecode
// succeeds. hash_ids are blocks of blockSize tokens.
func fastDecode(line []byte, blockSize int) (req Request, missingOutput, ok bool) {
	var row fastRow
	if !row.decode(line) {
		return req, false, false
	}
	return row.request(blockSize)
}

// Members of a row (rawRow's json names): the numeric ones first, indexing
// fastRow.num.
const (
	fTimestamp = iota
	fCreatedTime
	fInputLength
	fInputTokens
	fOutputLength
	fOutputTokens
	fDelay
	fDelayMs
	fHashIDs
	fSessionID
	fTextInput
	fWarmup
	fParents
)

var rowKeys = jsonlex.Names{"timestamp", "created_time", "input_length", "input_tokens",
	"output_length", "output_tokens", "delay", "delay_ms", "hash_ids", "session_id", "text_input", "warmup", "parents"}

// fastRow is one row's known members, converted; null is absent, as with
// encoding/json.
type fastRow struct {
	num           [fDelayMs + 1]float64
	has           uint8 // bit i: num[i] was given (not null)
	hashIDs       []int64
	parents       []int64
	session, text string
	hasText       bool
	warmup        bool
}

func (r *fastRow) given(f int) bool { return r.has&(1<<f) != 0 }

// alias returns whichever of a field and its alias was given, and false when
// both were (pick's conflict).
func (r *fastRow) alias(a, b int) (v float64, given, ok bool) {
	switch {
	case r.given(a) && r.given(b):
		return 0, false, false
	case r.given(b):
		return r.num[b], true, true
	}
	return r.num[a], r.given(a), true
}

// request applies parseRowSlow's checks to the converted row.
func (r *fastRow) request(blockSize int) (req Request, missingOutput, ok bool) {
	req.TimestampMs, req.HasTimestamp, ok = r.alias(fTimestamp, fCreatedTime)
	if !ok || req.TimestampMs < 0 {
		return req, false, false
	}
	if req.DelayMs, _, ok = r.alias(fDelay, fDelayMs); !ok || req.DelayMs < 0 {
		return req, false, false
	}
	in, hasIn, ok := r.alias(fInputLength, fInputTokens)
	if !ok || !hasIn && !r.hasText || !isTokenCount(in) {
		return req, false, false
	}
	out, hasOut, ok := r.alias(fOutputLength, fOutputTokens)
	if !ok || !isTokenCount(out) {
		return req, false, false
	}
	req.InputLength, req.OutputLength, req.TextInput = int(in), int(out), r.text
	if n := len(r.hashIDs); n > 0 {
		if !hasIn || !hashIDsConsistent(req.InputLength, n, blockSize) {
			return req, false, false
		}
		req.HashIDs = r.hashIDs
	}
	req.SessionID, req.Warmup = r.session, r.warmup
	if len(r.parents) > 0 {
		req.Parents = make([]int, len(r.parents))
		for i, p := range r.parents {
			req.Parents[i] = int(p)
		}
	}
	return req, !hasOut, true
}

// decode reads the line's object into r.
func (r *fastRow) decode(line []byte) bool {
	l := jsonlex.New(line)
	var seen jsonlex.Seen
	return l.Object(func(key []byte) bool {
		f, ok := l.Member(key, rowKeys, &seen)
		switch {
		case f < 0:
			return ok
		case f <= fDelayMs:
			return r.number(&l, f)
		}
		return r.field(&l, f)
	}) && l.End()
}

// number reads null or a finite number into r.num[f], as mooncake.go's
// number does (the sign of -0 dropped).
func (r *fastRow) number(l *jsonlex.Lexer, f int) bool {
	if l.Null() {
		return true
	}
	v, ok := l.Float()
	if v == 0 {
		v = 0
	}
	r.num[f] = v
	r.has |= 1 << f
	return ok
}

// field reads the members that are not numbers.
func (r *fastRow) field(l *jsonlex.Lexer, f int) bool {
	if l.Null() {
		return true // absent, as the zero fastRow has it
	}
	var ok bool
	switch f {
	case fHashIDs:
		if l.Peek() != '[' {
			return false
		}
		r.hashIDs, ok = l.AppendInts(make([]int64, 0, l.ListLen()))
	case fParents:
		if l.Peek() != '[' {
			return false
		}
		r.parents, ok = l.AppendInts(make([]int64, 0, l.ListLen()))
	case fTextInput:
		r.text, ok = str(l)
		r.hasText = ok
	case fSessionID:
		r.session, ok = sessionText(l)
	case fWarmup:
		r.warmup, ok = l.Bool()
	}
	return ok
}

// sessionText reads a string, or a number kept as its literal text.
func sessionText(l *jsonlex.Lexer) (string, bool) {
	if c := l.Peek(); c != '-' && c-'0' > 9 {
		return str(l)
	}
	start := l.Pos()
	_, ok := l.Float()
	return string(l.From(start)), ok
}

func str(l *jsonlex.Lexer) (string, bool) {
	body, plain, ok := l.String()
	return jsonlex.Decode(body, plain), ok
}

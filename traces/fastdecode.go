package traces

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"
)

// fastDecode decodes one JSONL line straight into a Request, without
// reflection and without a second pass over the values: each known member
// is converted once from its token. It handles the shapes real traces use
// and returns ok false for anything it does not decode exactly as
// parseRowSlow (encoding/json and the checks on raw values) would: escaped
// or non-ASCII keys, keys matching a field only case-insensitively, values
// of another type than the field's, hash_ids that are not plain int64
// literals, invalid JSON, and every row that fails a check. The caller then
// runs parseRowSlow, which also produces the error messages. FuzzFastDecode
// checks that both agree whenever fastDecode succeeds.
func fastDecode(line []byte) (req Request, missingOutput, ok bool) {
	var row fastRow
	if !row.decode(line) {
		return req, false, false
	}
	return row.request()
}

// Numeric members of a row, indexing fastRow.num.
const (
	fTimestamp = iota
	fCreatedTime
	fInputLength
	fInputTokens
	fOutputLength
	fOutputTokens
	fDelay
	fDelayMs
)

// fastRow is one row's known members, converted. A repeated member keeps
// its last value and null is absent, as with encoding/json.
type fastRow struct {
	num           [8]float64
	has           uint8 // bit i: num[i] was given (not null)
	hashIDs       []int64
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
func (r *fastRow) request() (req Request, missingOutput, ok bool) {
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
		if !hasIn || !hashIDsConsistent(req.InputLength, n, MooncakeBlockSize) {
			return req, false, false
		}
		req.HashIDs = r.hashIDs
	}
	req.SessionID, req.Warmup = r.session, r.warmup
	return req, !hasOut, true
}

// decode reads the line's object into r.
func (r *fastRow) decode(line []byte) bool {
	p := parser{b: line}
	p.ws()
	if !p.eat('{') {
		return false
	}
	p.ws()
	if p.eat('}') {
		return p.end()
	}
	for {
		key, ok := p.key()
		if !ok || !p.field(key, r) {
			return false
		}
		p.ws()
		if p.eat('}') {
			return p.end()
		}
		if !p.eat(',') {
			return false
		}
	}
}

// parser is a cursor over one line.
type parser struct {
	b []byte
	i int
}

func (p *parser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) eat(c byte) bool {
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *parser) end() bool {
	p.ws()
	return p.i == len(p.b)
}

// key reads `"name"` and the colon; only plain ASCII keys without escapes.
func (p *parser) key() (string, bool) {
	p.ws()
	if !p.eat('"') {
		return "", false
	}
	start := p.i
	for p.i < len(p.b) {
		c := p.b[p.i]
		if c == '"' {
			k := string(p.b[start:p.i])
			p.i++
			p.ws()
			return k, p.eat(':')
		}
		if c == '\\' || c < 0x20 || c >= 0x80 {
			return "", false
		}
		p.i++
	}
	return "", false
}

var rowKeys = []string{"timestamp", "created_time", "input_length", "input_tokens", "output_length",
	"output_tokens", "hash_ids", "session_id", "delay", "delay_ms", "text_input", "warmup"}

// numField maps the numeric members to their index in fastRow.num.
func numField(key string) int {
	switch key {
	case "timestamp":
		return fTimestamp
	case "created_time":
		return fCreatedTime
	case "input_length":
		return fInputLength
	case "input_tokens":
		return fInputTokens
	case "output_length":
		return fOutputLength
	case "output_tokens":
		return fOutputTokens
	case "delay":
		return fDelay
	case "delay_ms":
		return fDelayMs
	}
	return -1
}

// field decodes the value of key into r.
func (p *parser) field(key string, r *fastRow) bool {
	p.ws()
	if f := numField(key); f >= 0 {
		return p.optNumber(f, r)
	}
	switch key {
	case "hash_ids":
		return p.int64s(&r.hashIDs)
	case "text_input":
		return p.optString(&r.text, &r.hasText)
	case "session_id":
		return p.sessionID(r)
	case "warmup":
		return p.optBool(&r.warmup)
	}
	for _, k := range rowKeys {
		if bytes.EqualFold([]byte(k), []byte(key)) {
			return false // encoding/json would match it case-insensitively
		}
	}
	_, ok := p.value()
	return ok
}

// optNumber reads null or a finite number into r.num[f], as number does
// (the sign of -0 dropped).
func (p *parser) optNumber(f int, r *fastRow) bool {
	r.has &^= 1 << f
	if p.literal("null") {
		r.num[f] = 0
		return true
	}
	v, _, ok := p.float()
	if ok {
		r.num[f] = v
		r.has |= 1 << f
	}
	return ok
}

// float reads a number token and converts it with strconv; infinities
// (1e400) are refused as number refuses them.
func (p *parser) float() (float64, []byte, bool) {
	start := p.i
	if !p.number() {
		return 0, nil, false
	}
	tok := p.b[start:p.i]
	v, err := strconv.ParseFloat(string(tok), 64)
	if err != nil || math.IsInf(v, 0) {
		return 0, nil, false
	}
	if v == 0 {
		v = 0
	}
	return v, tok, true
}

// sessionID reads null, a string, or a number kept as its literal text.
func (p *parser) sessionID(r *fastRow) bool {
	if p.i < len(p.b) && (p.b[p.i] == '-' || p.b[p.i]-'0' <= 9) {
		_, tok, ok := p.float()
		r.session = string(tok)
		return ok
	}
	var given bool
	return p.optString(&r.session, &given)
}

// value skips one JSON value, validating it, and returns its bytes.
func (p *parser) value() ([]byte, bool) {
	start := p.i
	if !p.skip(0) {
		return nil, false
	}
	return p.b[start:p.i], true
}

const maxDepth = 64

func (p *parser) skip(depth int) bool {
	if p.i >= len(p.b) || depth > maxDepth {
		return false
	}
	switch c := p.b[p.i]; {
	case c == '{':
		return p.skipObject(depth)
	case c == '[':
		return p.skipArray(depth)
	case c == '"':
		return p.skipString()
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	default:
		return p.literal("true") || p.literal("false") || p.literal("null")
	}
}

func (p *parser) skipObject(depth int) bool {
	p.i++
	p.ws()
	if p.eat('}') {
		return true
	}
	for {
		p.ws()
		if !p.skipString() {
			return false
		}
		p.ws()
		if !p.eat(':') {
			return false
		}
		p.ws()
		if !p.skip(depth + 1) {
			return false
		}
		p.ws()
		if p.eat('}') {
			return true
		}
		if !p.eat(',') {
			return false
		}
	}
}

func (p *parser) skipArray(depth int) bool {
	p.i++
	p.ws()
	if p.eat(']') {
		return true
	}
	for {
		p.ws()
		if !p.skip(depth + 1) {
			return false
		}
		p.ws()
		if p.eat(']') {
			return true
		}
		if !p.eat(',') {
			return false
		}
	}
}

// skipString validates a JSON string (escapes included).
func (p *parser) skipString() bool {
	if !p.eat('"') {
		return false
	}
	for p.i < len(p.b) {
		c := p.b[p.i]
		p.i++
		switch {
		case c == '"':
			return true
		case c < 0x20:
			return false
		case c == '\\':
			if !p.escape() {
				return false
			}
		}
	}
	return false
}

func (p *parser) escape() bool {
	if p.i >= len(p.b) {
		return false
	}
	c := p.b[p.i]
	p.i++
	switch c {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return true
	case 'u':
		if p.i+4 > len(p.b) {
			return false
		}
		for _, h := range p.b[p.i : p.i+4] {
			if !isHex(h) {
				return false
			}
		}
		p.i += 4
		return true
	}
	return false
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// number validates -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *parser) number() bool {
	p.eat('-')
	if !p.intDigits() {
		return false
	}
	if p.eat('.') && !p.digits() {
		return false
	}
	if p.eat('e') || p.eat('E') {
		if !p.eat('+') {
			p.eat('-')
		}
		return p.digits()
	}
	return true
}

func (p *parser) intDigits() bool {
	if p.eat('0') {
		return true
	}
	if p.i >= len(p.b) || p.b[p.i] < '1' || p.b[p.i] > '9' {
		return false
	}
	return p.digits()
}

func (p *parser) digits() bool {
	start := p.i
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		p.i++
	}
	return p.i > start
}

func (p *parser) literal(s string) bool {
	if bytes.HasPrefix(p.b[p.i:], []byte(s)) {
		p.i += len(s)
		return true
	}
	return false
}

// int64s reads null or an array of plain integer literals fitting int64.
func (p *parser) int64s(dst *[]int64) bool {
	if p.literal("null") {
		*dst = nil
		return true
	}
	if !p.eat('[') {
		return false
	}
	n := 0
	if end := bytes.IndexByte(p.b[p.i:], ']'); end >= 0 {
		n = bytes.Count(p.b[p.i:p.i+end], []byte{','}) + 1
	}
	out := make([]int64, 0, n)
	p.ws()
	if p.eat(']') {
		*dst = out
		return true
	}
	for {
		p.ws()
		v, ok := p.int64()
		if !ok {
			return false
		}
		out = append(out, v)
		p.ws()
		if p.eat(']') {
			*dst = out
			return true
		}
		if !p.eat(',') {
			return false
		}
	}
}

// int64 reads a plain integer literal (no fraction or exponent) that fits
// in an int64.
func (p *parser) int64() (int64, bool) {
	neg := p.eat('-')
	start := p.i
	if !p.intDigits() {
		return 0, false
	}
	if p.i < len(p.b) && (p.b[p.i] == '.' || p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		return 0, false
	}
	if p.i-start > 18 { // may overflow: let strconv decide
		s := string(p.b[start:p.i])
		if neg {
			s = "-" + s
		}
		v, err := strconv.ParseInt(s, 10, 64)
		return v, err == nil
	}
	var v int64
	for _, c := range p.b[start:p.i] {
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}

// optString reads null or a string; given reports a string. Strings with
// escapes or invalid UTF-8 go through encoding/json, which alone knows how
// it unescapes and replaces them.
func (p *parser) optString(dst *string, given *bool) bool {
	*dst, *given = "", false
	if p.literal("null") {
		return true
	}
	start := p.i
	if !p.skipString() {
		return false
	}
	raw := p.b[start:p.i]
	body := raw[1 : len(raw)-1]
	if bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body) {
		*dst, *given = string(body), true
		return true
	}
	*given = json.Unmarshal(raw, dst) == nil
	return *given
}

// optBool reads null (false), true or false.
func (p *parser) optBool(dst *bool) bool {
	switch {
	case p.literal("null"):
		*dst = false
	case p.literal("true"):
		*dst = true
	case p.literal("false"):
		*dst = false
	default:
		return false
	}
	return true
}

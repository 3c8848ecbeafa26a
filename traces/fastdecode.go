package traces

import (
	"bytes"
	"strconv"
	"unicode/utf8"
)

// fastDecode fills raw from one JSONL line without reflection. It handles
// the shapes real traces use and returns false for anything it does not
// treat exactly as json.Unmarshal would (escaped or non-ASCII keys, keys
// matching a field only case-insensitively, hash_ids that are not plain
// int64 literals, text_input with escapes, invalid JSON, …); the caller then
// falls back to json.Unmarshal, which also produces the error messages.
// FuzzFastDecode checks that both agree whenever fastDecode succeeds.
func fastDecode(line []byte, raw *rawRow) bool {
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
		if !ok || !p.field(key, raw) {
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

// field decodes the value of key into raw.
func (p *parser) field(key string, raw *rawRow) bool {
	p.ws()
	if dst := raw.rawField(key); dst != nil {
		v, ok := p.value()
		*dst = v // aliases line: parseRow is done with raw before the next line
		return ok
	}
	switch key {
	case "hash_ids":
		return p.int64s(&raw.HashIDs)
	case "text_input":
		return p.plainString(&raw.TextInput)
	case "warmup":
		return p.boolPtr(&raw.Warmup)
	}
	for _, k := range rowKeys {
		if bytes.EqualFold([]byte(k), []byte(key)) {
			return false // encoding/json would match it case-insensitively
		}
	}
	_, ok := p.value()
	return ok
}

func (raw *rawRow) rawField(key string) *[]byte {
	var m *[]byte
	switch key {
	case "timestamp":
		m = (*[]byte)(&raw.Timestamp)
	case "created_time":
		m = (*[]byte)(&raw.CreatedTime)
	case "input_length":
		m = (*[]byte)(&raw.InputLength)
	case "input_tokens":
		m = (*[]byte)(&raw.InputTokens)
	case "output_length":
		m = (*[]byte)(&raw.OutputLength)
	case "output_tokens":
		m = (*[]byte)(&raw.OutputTokens)
	case "session_id":
		m = (*[]byte)(&raw.SessionID)
	case "delay":
		m = (*[]byte)(&raw.Delay)
	case "delay_ms":
		m = (*[]byte)(&raw.DelayMs)
	}
	return m
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

// plainString reads null or a string without escapes in valid UTF-8.
func (p *parser) plainString(dst **string) bool {
	if p.literal("null") {
		*dst = nil
		return true
	}
	if !p.eat('"') {
		return false
	}
	start := p.i
	for p.i < len(p.b) {
		c := p.b[p.i]
		if c == '"' {
			s := p.b[start:p.i]
			p.i++
			if !utf8.Valid(s) {
				return false
			}
			str := string(s)
			*dst = &str
			return true
		}
		if c == '\\' || c < 0x20 {
			return false
		}
		p.i++
	}
	return false
}

func (p *parser) boolPtr(dst **bool) bool {
	switch {
	case p.literal("null"):
		*dst = nil
	case p.literal("true"):
		t := true
		*dst = &t
	case p.literal("false"):
		f := false
		*dst = &f
	default:
		return false
	}
	return true
}

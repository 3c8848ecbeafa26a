package loadgen

import (
	"unicode/utf16"
	"unicode/utf8"
)

// jscan is a minimal validating JSON scanner over one complete document. It
// lets the response decoder pick the few fields it needs out of each
// streamed chunk without allocating: strings come back as raw slices of the
// input, everything else is skipped.
type jscan struct {
	b     []byte
	i     int
	depth int
}

// maxJSONDepth bounds nesting so hostile input cannot exhaust the stack.
const maxJSONDepth = 256

func (s *jscan) ws() {
	for s.i < len(s.b) && s.b[s.i] <= ' ' {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek returns the next non-space byte, 0 at the end.
func (s *jscan) peek() byte {
	s.ws()
	if s.i >= len(s.b) {
		return 0
	}
	return s.b[s.i]
}

func (s *jscan) consume(c byte) bool {
	if s.peek() != c {
		return false
	}
	s.i++
	return true
}

// end reports whether only whitespace is left.
func (s *jscan) end() bool { return s.peek() == 0 && s.i >= len(s.b) }

// str reads a string and returns its raw (still escaped) bytes.
func (s *jscan) str() ([]byte, bool) {
	if !s.consume('"') {
		return nil, false
	}
	b, start := s.b, s.i
	for i := start; i < len(b); i++ {
		c := b[i]
		if plainStringByte[c] {
			continue
		}
		switch {
		case c == '"':
			s.i = i + 1
			return b[start:i], true
		case c == '\\':
			s.i = i
			if !s.escape() {
				return nil, false
			}
			i = s.i - 1
		default: // a control character
			return nil, false
		}
	}
	return nil, false
}

// plainStringByte marks bytes that stand for themselves inside a string.
var plainStringByte = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func (s *jscan) escape() bool {
	if s.i+1 >= len(s.b) {
		return false
	}
	switch s.b[s.i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		s.i += 2
		return true
	case 'u':
		if s.i+6 > len(s.b) || !isHex4(s.b[s.i+2:s.i+6]) {
			return false
		}
		s.i += 6
		return true
	}
	return false
}

func isHex4(b []byte) bool {
	for _, c := range b {
		if hexVal(c) < 0 {
			return false
		}
	}
	return true
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// object iterates an object's members; field must consume the value.
func (s *jscan) object(field func(key []byte) bool) bool {
	if !s.consume('{') || !s.enter() {
		return false
	}
	defer s.leave()
	if s.consume('}') {
		return true
	}
	for {
		key, ok := s.str()
		if !ok || !s.consume(':') || !field(key) {
			return false
		}
		if s.consume('}') {
			return true
		}
		if !s.consume(',') {
			return false
		}
	}
}

// array iterates an array's elements; elem must consume the value.
func (s *jscan) array(elem func(i int) bool) bool {
	if !s.consume('[') || !s.enter() {
		return false
	}
	defer s.leave()
	if s.consume(']') {
		return true
	}
	for i := 0; ; i++ {
		if !elem(i) {
			return false
		}
		if s.consume(']') {
			return true
		}
		if !s.consume(',') {
			return false
		}
	}
}

func (s *jscan) enter() bool {
	s.depth++
	return s.depth <= maxJSONDepth
}

func (s *jscan) leave() { s.depth-- }

// skip consumes any value.
func (s *jscan) skip() bool {
	switch c := s.peek(); {
	case c == '{':
		return s.object(func([]byte) bool { return s.skip() })
	case c == '[':
		return s.array(func(int) bool { return s.skip() })
	case c == '"':
		_, ok := s.str()
		return ok
	case c == 't':
		return s.lit("true")
	case c == 'f':
		return s.lit("false")
	case c == 'n':
		return s.lit("null")
	default:
		_, ok := s.number()
		return ok
	}
}

func (s *jscan) lit(word string) bool {
	if s.i+len(word) > len(s.b) || string(s.b[s.i:s.i+len(word)]) != word {
		return false
	}
	s.i += len(word)
	return true
}

// null consumes a null if one is next.
func (s *jscan) null() bool { return s.peek() == 'n' && s.lit("null") }

// number reads a JSON number; the value is its integer part (token counts
// are integers), saturated at a large bound.
func (s *jscan) number() (int, bool) {
	s.ws()
	start := s.i
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	n, digits := s.digits()
	if digits == 0 || digits > 1 && s.b[s.i-digits] == '0' {
		return 0, false
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if _, d := s.digits(); d == 0 {
			return 0, false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if _, d := s.digits(); d == 0 {
			return 0, false
		}
	}
	if s.b[start] == '-' {
		n = -n
	}
	return n, true
}

func (s *jscan) digits() (n, count int) {
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		if n < 1<<40 {
			n = n*10 + int(s.b[s.i]-'0')
		}
		s.i++
		count++
	}
	return n, count
}

// appendUnescaped appends the decoded form of a raw JSON string (as
// returned by str, so already validated).
func appendUnescaped(dst, raw []byte) []byte {
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			j := i + 1
			for j < len(raw) && raw[j] != '\\' {
				j++
			}
			dst = append(dst, raw[i:j]...)
			i = j
			continue
		}
		var n int
		dst, n = appendEscape(dst, raw[i:])
		i += n
	}
	return dst
}

// appendEscape decodes the escape at the start of raw and returns how many
// bytes it used.
func appendEscape(dst, raw []byte) ([]byte, int) {
	if len(raw) < 2 {
		return dst, len(raw)
	}
	switch raw[1] {
	case 'b':
		return append(dst, '\b'), 2
	case 'f':
		return append(dst, '\f'), 2
	case 'n':
		return append(dst, '\n'), 2
	case 'r':
		return append(dst, '\r'), 2
	case 't':
		return append(dst, '\t'), 2
	case 'u':
		return appendUnicodeEscape(dst, raw)
	}
	return append(dst, raw[1]), 2
}

func appendUnicodeEscape(dst, raw []byte) ([]byte, int) {
	if len(raw) < 6 {
		return dst, len(raw)
	}
	r := rune(hex4(raw[2:6]))
	if utf16.IsSurrogate(r) && len(raw) >= 12 && raw[6] == '\\' && raw[7] == 'u' && isHex4(raw[8:12]) {
		if pair := utf16.DecodeRune(r, rune(hex4(raw[8:12]))); pair != utf8.RuneError {
			return utf8.AppendRune(dst, pair), 12
		}
	}
	return utf8.AppendRune(dst, r), 6
}

func hex4(b []byte) int {
	return hexVal(b[0])<<12 | hexVal(b[1])<<8 | hexVal(b[2])<<4 | hexVal(b[3])
}

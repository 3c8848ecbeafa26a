// Package jsonlex is the one JSON lexer under simbench's hot readers: the
// lines of profile_export.jsonl (results), trace rows (traces) and streamed
// response chunks (loadgen). A Lexer is a validating cursor over one JSON
// text held in memory; it walks objects and arrays and converts strings and
// numbers where they lie, without reflection and without allocating.
//
// It is written by hand because no library does this job right here:
// valyala/fastjson, the fastest candidate served, was measured 1.4-3× slower
// than these loops on the three readers (it builds a value tree the readers
// then walk a second time), and the readers need encoding/json's exact
// answers (the float ParseFloat returns, the string json.Unmarshal decodes,
// integer range checks) to decide when a line may skip encoding/json. The
// fuzzers check it against encoding/json. It imports nothing of ours, so the
// leaf packages (results, traces) can use it.
//
// Conventions: value readers (String, Float, Int, Null, ...) read at the
// cursor without skipping whitespace first; Object and Array skip the
// whitespace around their tokens and call back with the cursor on the
// member's or element's value. A false result means the text is not what
// was asked for (or not JSON); the cursor is then unspecified.
package jsonlex

import "unicode/utf8"

// MaxDepth bounds the nesting of objects and arrays, so that hostile input
// cannot exhaust the stack.
const MaxDepth = 256

// Lexer is a cursor over one JSON text. The zero value is an empty text;
// Reset points it at another. A Lexer is not safe for concurrent use.
type Lexer struct {
	b        []byte
	i        int
	depth    int
	keyPlain bool // the last key read has no escapes
	keyASCII bool // the last key read is ASCII
}

// New returns a Lexer at the start of b.
func New(b []byte) Lexer { return Lexer{b: b} }

// Reset points l at the start of b.
func (l *Lexer) Reset(b []byte) { *l = Lexer{b: b} }

// Pos returns the cursor's offset; SetPos moves it back to one Pos returned.
func (l *Lexer) Pos() int { return l.i }

// SetPos moves the cursor to offset i, from an earlier Pos.
func (l *Lexer) SetPos(i int) { l.i = i }

// From returns the text from offset start (an earlier Pos) to the cursor.
func (l *Lexer) From(start int) []byte { return l.b[start:l.i] }

// WS skips whitespace.
func (l *Lexer) WS() { l.i = skipWS(l.b, l.i) }

// skipWS returns the offset of the first non-whitespace byte at or after
// b[i:]. (Comparisons, not a table: the first one rejects most bytes
// without the table's extra load, and it runs between all tokens.)
func skipWS(b []byte, i int) int {
	for i < len(b) && b[i] <= ' ' && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// afterComma skips the comma at the cursor and the whitespace after it.
func (l *Lexer) afterComma() { l.i = skipWS(l.b, l.i+1) }

// Peek returns the byte at the cursor, 0 at the end.
func (l *Lexer) Peek() byte {
	if l.i < len(l.b) {
		return l.b[l.i]
	}
	return 0
}

// Eat consumes c if it is at the cursor.
func (l *Lexer) Eat(c byte) bool {
	if l.i < len(l.b) && l.b[l.i] == c {
		l.i++
		return true
	}
	return false
}

// Literal consumes s if the text at the cursor starts with it.
func (l *Lexer) Literal(s string) bool {
	if len(l.b)-l.i >= len(s) && string(l.b[l.i:l.i+len(s)]) == s {
		l.i += len(s)
		return true
	}
	return false
}

// Token consumes s with the whitespace around it.
func (l *Lexer) Token(s string) bool {
	l.WS()
	if !l.Literal(s) {
		return false
	}
	l.WS()
	return true
}

// Null consumes a null at the cursor.
func (l *Lexer) Null() bool { return l.Peek() == 'n' && l.Literal("null") }

// Bool reads true or false.
func (l *Lexer) Bool() (v, ok bool) {
	switch {
	case l.Literal("true"):
		return true, true
	case l.Literal("false"):
		return false, true
	}
	return false, false
}

// End skips whitespace and reports whether the text ends there.
func (l *Lexer) End() bool {
	l.WS()
	return l.i == len(l.b)
}

// enter counts one level of nesting; false past MaxDepth.
func (l *Lexer) enter() bool {
	l.depth++
	return l.depth <= MaxDepth
}

// Object reads an object, calling member with each member's raw key (the
// bytes between the quotes, escapes as written) and the cursor on its
// value, which member must consume. KeyPlain and KeyASCII describe the key
// until member reads a nested object.
func (l *Lexer) Object(member func(key []byte) bool) bool {
	l.WS()
	if !l.Eat('{') || !l.enter() {
		return false
	}
	if l.WS(); !l.Eat('}') {
		for {
			k, ok := l.key()
			if !ok || !member(k) {
				return false
			}
			if l.i < len(l.b) && l.b[l.i] == ',' { // the usual separator: one test, inlined
				l.afterComma()
			} else if l.i, ok = listSep(l.b, l.i); !ok {
				break
			}
		}
		if !l.Eat('}') {
			return false
		}
	}
	l.depth--
	return true
}

// listSep reads the comma after an element or member and the whitespace
// around it, returning the offset of what follows; false (at the offset
// after the whitespace, on what should be the closing byte) when there is
// no comma. Object and Array test for a comma right after the element
// themselves (inlined) and call it for the rest.
func listSep(b []byte, i int) (int, bool) {
	if i < len(b) && b[i] == ',' {
		return skipWS(b, i+1), true
	}
	i = skipWS(b, i)
	if i < len(b) && b[i] == ',' {
		return skipWS(b, i+1), true
	}
	return i, false
}

// KeyPlain reports whether the last key Object read has no escapes: only
// then does the raw key equal the decoded name.
func (l *Lexer) KeyPlain() bool { return l.keyPlain }

// KeyASCII reports whether the last key Object read is ASCII.
func (l *Lexer) KeyASCII() bool { return l.keyASCII }

// key reads `"name":` and the whitespace after it.
func (l *Lexer) key() ([]byte, bool) {
	b, i := l.b, l.i
	if i >= len(b) || b[i] != '"' {
		return nil, false
	}
	end, acc := plainRun(b, i+1) // most keys are one run
	esc, ok := false, end < len(b) && b[end] == '"'
	if ok {
		end++
	} else if end, acc, esc, ok = quotedRest(b, end, acc); !ok {
		return nil, false
	}
	l.keyPlain, l.keyASCII = !esc, acc < utf8.RuneSelf
	j := skipWS(b, end)
	if j >= len(b) || b[j] != ':' {
		return nil, false
	}
	l.i = skipWS(b, j+1)
	return b[i+1 : end-1], true
}

// Array reads an array, calling elem with each element's index and the
// cursor on it; elem must consume the element.
func (l *Lexer) Array(elem func(i int) bool) bool {
	l.WS()
	if !l.Eat('[') || !l.enter() {
		return false
	}
	if l.WS(); !l.Eat(']') {
		for n := 0; ; n++ {
			if !elem(n) {
				return false
			}
			ok := true
			if l.i < len(l.b) && l.b[l.i] == ',' { // the usual separator: one test, inlined
				l.afterComma()
			} else if l.i, ok = listSep(l.b, l.i); !ok {
				break
			}
		}
		if !l.Eat(']') {
			return false
		}
	}
	l.depth--
	return true
}

// Skip validates and consumes one value of any type at the cursor.
func (l *Lexer) Skip() bool {
	switch c := l.Peek(); {
	case c == '{':
		return l.Object(func([]byte) bool { return l.Skip() })
	case c == '[':
		return l.Array(func(int) bool { return l.Skip() })
	case c == '"':
		_, _, ok := l.String()
		return ok
	case c == '-' || c-'0' <= 9:
		_, ok := l.Number()
		return ok
	case c == 't':
		return l.Literal("true")
	case c == 'f':
		return l.Literal("false")
	}
	return l.Null()
}

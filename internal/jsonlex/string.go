package jsonlex

import (
	"unicode/utf16"
	"unicode/utf8"
)

// plainByte[c] reports whether a string holds c as it is: not a quote, a
// backslash or a control character.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < len(t); c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// String reads a string, validating its escapes, and returns its body: the
// bytes between the quotes as written. plain reports no escapes and valid
// UTF-8, when the body is the decoded string itself; otherwise Decode or
// AppendUnescaped decode it.
func (l *Lexer) String() (body []byte, plain, ok bool) {
	b, i := l.b, l.i
	if i >= len(b) || b[i] != '"' {
		return nil, false, false
	}
	end, acc := plainRun(b, i+1) // most strings are one run
	esc := false
	if ok = end < len(b) && b[end] == '"'; ok {
		end++
	} else {
		end, acc, esc, ok = quotedRest(b, end, acc)
	}
	l.i = end
	if !ok {
		return nil, false, false
	}
	body = b[i+1 : end-1]
	return body, !esc && (acc < utf8.RuneSelf || utf8.Valid(body)), true
}

// plainRun skips the plain string bytes at b[i:] and returns them ORed
// together.
func plainRun(b []byte, i int) (int, byte) {
	var acc byte
	for ; i < len(b) && plainByte[b[i]]; i++ {
		acc |= b[i]
	}
	return i, acc
}

// quotedRest reads the rest of a string from b[i], its first byte that is
// not plain, validating its escapes; acc holds the plain bytes before it.
// It returns the offset after the closing quote, the plain bytes ORed
// together (below 0x80 when they are all ASCII) and whether there were
// escapes; false for a control character or the end of the text before
// the closing quote.
func quotedRest(b []byte, i int, acc byte) (end int, _ byte, esc, ok bool) {
	for {
		switch {
		case i >= len(b):
			return i, acc, esc, false
		case b[i] == '"':
			return i + 1, acc, esc, true
		case b[i] != '\\':
			return i, acc, esc, false // control character
		}
		if i, ok = escapeAt(b, i+1); !ok {
			return i, acc, esc, false
		}
		esc = true
		var more byte
		i, more = plainRun(b, i)
		acc |= more
	}
}

// escapeAt validates the escape at b[i:], just after its backslash, and
// returns the offset after it.
func escapeAt(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch b[i] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return i + 1, true
	case 'u':
		if len(b)-i < 5 || hex4(b[i+1:i+5]) < 0 {
			return i, false
		}
		return i + 5, true
	}
	return i, false
}

// hex4 returns the value of four hex digits, -1 when one is not.
func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return -1
		}
		r = r<<4 | rune(d)
	}
	return r
}

// Decode returns the string a body from String stands for.
func Decode(body []byte, plain bool) string {
	if plain {
		return string(body)
	}
	return string(AppendUnescaped(nil, body))
}

// AppendUnescaped appends the string a body from String stands for, as
// json.Unmarshal decodes it: escapes resolved, surrogate pairs joined, and
// lone surrogates and invalid UTF-8 bytes each replaced by U+FFFD.
func AppendUnescaped(dst, body []byte) []byte {
	for i := 0; i < len(body); {
		switch c := body[i]; {
		case c == '\\':
			var n int
			dst, n = appendEscape(dst, body[i:])
			i += n
		case c < utf8.RuneSelf:
			j := i + 1
			for j < len(body) && body[j] < utf8.RuneSelf && body[j] != '\\' {
				j++
			}
			dst = append(dst, body[i:j]...)
			i = j
		default:
			r, n := utf8.DecodeRune(body[i:])
			if r == utf8.RuneError && n == 1 {
				dst = utf8.AppendRune(dst, utf8.RuneError)
			} else {
				dst = append(dst, body[i:i+n]...)
			}
			i += n
		}
	}
	return dst
}

// appendEscape decodes the (validated) escape at the start of s and
// returns how many bytes it used.
func appendEscape(dst, s []byte) ([]byte, int) {
	switch s[1] {
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
		r := hex4(s[2:])
		if !utf16.IsSurrogate(r) {
			return utf8.AppendRune(dst, r), 6
		}
		if len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
			if pair := utf16.DecodeRune(r, hex4(s[8:])); pair != utf8.RuneError {
				return utf8.AppendRune(dst, pair), 12
			}
		}
		return utf8.AppendRune(dst, utf8.RuneError), 6
	}
	return append(dst, s[1]), 2 // '"', '\\', '/'
}

package jsonlex

import (
	"bytes"
	"math"
	"math/bits"
	"strconv"
)

// Number validates the number -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
// at the cursor and returns its text.
func (l *Lexer) Number() ([]byte, bool) {
	start := l.i
	var ok bool
	l.i, ok = scanNumber(l.b, start)
	return l.b[start:l.i], ok
}

// scanNumber validates the number at b[i:] and returns the offset after it.
func scanNumber(b []byte, i int) (int, bool) {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i]-'1' <= 8:
		i = skipDigits(b, i+1)
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		j := skipDigits(b, i+1)
		if j == i+1 {
			return j, false
		}
		i = j
	}
	if i < len(b) && b[i]|0x20 == 'e' {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := skipDigits(b, i)
		if j == i {
			return j, false
		}
		i = j
	}
	return i, true
}

// skipDigits returns the offset of the first non-digit at or after b[i:].
func skipDigits(b []byte, i int) int {
	for i < len(b) && b[i]-'0' <= 9 {
		i++
	}
	return i
}

// Int reads an integer literal (no fraction, no exponent) that fits in a
// signed integer of bitSize bits: what json.Unmarshal stores in an int field.
func (l *Lexer) Int(bitSize int) (v int64, ok bool) {
	v, l.i, ok = scanInt(l.b, l.i, bitSize)
	return v, ok
}

// scanInt is Int on b[i:]; it returns the offset after the literal.
func scanInt(b []byte, i, bitSize int) (int64, int, bool) {
	start := i
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
		return 0, i, false
	}
	if i < len(b) && (b[i] == '.' || b[i]|0x20 == 'e') {
		return 0, i, false // a fraction or exponent: not for an int field
	}
	switch {
	case i-first > 19 || bitSize < 64: // 19 digits cannot wrap a uint64
		v, err := strconv.ParseInt(string(b[start:i]), 10, bitSize)
		return v, i, err == nil
	case neg:
		return -int64(u), i, u <= 1<<63
	}
	return int64(u), i, u <= math.MaxInt64
}

// Float reads a number as the float64 strconv.ParseFloat returns for it
// (the one json.Unmarshal stores), refusing what does not fit.
func (l *Lexer) Float() (f float64, ok bool) {
	f, l.i, ok = scanFloat(l.b, l.i)
	return f, ok
}

// scanFloat is Float on b[i:]; it returns the offset after the number. It
// is the hot loop of the readers, hence one function on values: the
// cursor stays in a register and the list loops call it without going
// through memory. ParseFloat rounds correctly (to nearest, ties to even),
// so any correctly rounded conversion gives the same float: numbers
// without exponent of at most 19 digits are their digits m divided by
// 10^k, which toFloat computes exactly; others (exponents, longer numbers)
// go through strconv.
func scanFloat(b []byte, i int) (float64, int, bool) {
	start := i
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
		return 0, i, false
	}
	nd, frac := i-first, i
	if i < len(b) && b[i] == '.' {
		i++
		frac = i
		i, mant = digitRun(b, i, mant)
		if i == frac {
			return 0, i, false
		}
		nd += i - frac
	}
	if (i < len(b) && b[i]|0x20 == 'e') || nd > 19 {
		return parseFloat(b, start)
	}
	f := toFloat(mant, i-frac)
	if neg {
		f = -f
	}
	return f, i, true
}

// parseFloat reads the number at b[start:] with strconv.
func parseFloat(b []byte, start int) (float64, int, bool) {
	i, ok := scanNumber(b, start)
	if !ok {
		return 0, i, false
	}
	v, err := strconv.ParseFloat(string(b[start:i]), 64)
	return v, i, err == nil // ErrRange: beyond ±MaxFloat64
}

// toFloat returns m/10^k correctly rounded, for k ≤ 19.
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
// digits). Word-at-a-time (SWAR) and two-digit variants were slower on
// these runs: they cost digitRun its inlining, and the call with its
// spills costs more than the short runs save (measured again with eight
// digits a step: +13 % instructions and +70 % stores over a line).
func digitRun(b []byte, i int, mant uint64) (int, uint64) {
	for ; i < len(b) && b[i]-'0' <= 9; i++ {
		mant = mant*10 + uint64(b[i]-'0')
	}
	return i, mant
}

// ListLen estimates the number of elements of the flat array at the cursor
// (its commas before the first ']', plus one), to size a slice.
func (l *Lexer) ListLen() int {
	end := bytes.IndexByte(l.b[l.i:], ']')
	if end < 0 {
		return 0
	}
	return bytes.Count(l.b[l.i:l.i+end], []byte{','}) + 1
}

// AppendFloats reads an array of numbers, appending each as Float reads it
// to dst; null elements append 0, as json.Unmarshal into []float64 leaves
// them. It is the hot loop of a profile_export.jsonl line, hence on
// locals: the cursor lives in a register between the elements.
func (l *Lexer) AppendFloats(dst []float64) ([]float64, bool) {
	b, i := l.b, l.i
	if i >= len(b) || b[i] != '[' {
		return dst, false
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == ']' {
		l.i = i + 1
		return dst, true
	}
	for {
		v, ok := 0.0, true
		if isNull(b, i) {
			i += len("null")
		} else if v, i, ok = scanFloat(b, i); !ok {
			return dst, false
		}
		dst = append(dst, v)
		if i < len(b) && b[i] == ',' { // the usual separator: one test, inlined
			i = skipWS(b, i+1)
			continue
		}
		if i = skipWS(b, i); i >= len(b) || b[i] != ',' {
			break
		}
		i = skipWS(b, i+1)
	}
	return dst, l.closeList(i)
}

// AppendInts reads an array of integer literals fitting int64 to dst; null
// elements append 0, as json.Unmarshal into []int64 leaves them.
func (l *Lexer) AppendInts(dst []int64) ([]int64, bool) {
	b, i := l.b, l.i
	if i >= len(b) || b[i] != '[' {
		return dst, false
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == ']' {
		l.i = i + 1
		return dst, true
	}
	for {
		v, ok := int64(0), true
		if isNull(b, i) {
			i += len("null")
		} else if v, i, ok = scanInt(b, i, 64); !ok {
			return dst, false
		}
		dst = append(dst, v)
		if i < len(b) && b[i] == ',' { // the usual separator: one test, inlined
			i = skipWS(b, i+1)
			continue
		}
		if i = skipWS(b, i); i >= len(b) || b[i] != ',' {
			break
		}
		i = skipWS(b, i+1)
	}
	return dst, l.closeList(i)
}

// isNull reports whether b[i:] starts with null.
func isNull(b []byte, i int) bool {
	return len(b)-i >= 4 && b[i] == 'n' && string(b[i:i+4]) == "null"
}

// closeList consumes the ']' at b[i] that should end a list.
func (l *Lexer) closeList(i int) bool {
	l.i = i
	return l.Eat(']')
}

package results

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
)

// appendFloat appends f the way Python's repr (and so AIPerf's JSON) prints
// it: shortest round-trip digits, a ".0" on integral values, and an exponent
// outside 1e-4 ≤ |f| < 1e16. f must be finite. It formats once and moves the
// decimal point itself: this runs for every value of every JSONL line.
func appendFloat(b []byte, f float64) []byte {
	if f == 0 {
		if math.Signbit(f) {
			return append(b, "-0.0"...)
		}
		return append(b, "0.0"...)
	}
	var tmp [32]byte
	e := strconv.AppendFloat(tmp[:0], f, 'e', -1, 64)
	if e[0] == '-' {
		b = append(b, '-')
		e = e[1:]
	}
	i := bytes.IndexByte(e, 'e')
	mant, expPart := e[:i], e[i+1:]
	exp := parseExp(expPart)
	if exp < -4 || exp >= 16 {
		b = append(b, mant...)
		b = append(b, 'e', expPart[0])
		if len(expPart) < 3 {
			b = append(b, '0')
		}
		return append(b, expPart[1:]...)
	}
	digits := make([]byte, 0, 20)
	digits = append(digits, mant[0])
	if len(mant) > 2 {
		digits = append(digits, mant[2:]...)
	}
	return appendPositional(b, digits, exp)
}

// appendPositional writes the significant digits d (d[0] is the 10^exp
// place) without an exponent, always with a fractional part.
func appendPositional(b, d []byte, exp int) []byte {
	if exp < 0 {
		b = append(b, '0', '.')
		for range -exp - 1 {
			b = append(b, '0')
		}
		return append(b, d...)
	}
	if len(d) <= exp+1 {
		b = append(b, d...)
		for range exp + 1 - len(d) {
			b = append(b, '0')
		}
		return append(b, '.', '0')
	}
	b = append(b, d[:exp+1]...)
	b = append(b, '.')
	return append(b, d[exp+1:]...)
}

func parseExp(p []byte) int {
	n := 0
	for _, c := range p[1:] {
		n = n*10 + int(c-'0')
	}
	if p[0] == '-' {
		return -n
	}
	return n
}

// appendValue appends a metric value: integral token counts as ints when
// asInt, other values as Python floats.
func appendValue(b []byte, f float64, asInt bool) []byte {
	if asInt && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return strconv.AppendInt(b, int64(f), 10)
	}
	return appendFloat(b, f)
}

// appendString appends s as encoding/json quotes it. Metric tags, units
// and ids are plain ASCII, written as they are; anything else (escapes,
// HTML characters, non-ASCII) goes through json.Marshal.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// AppendPyFloat appends f the way Python's repr prints it, as every float
// of AIPerf's JSON is written. f must be finite.
func AppendPyFloat(b []byte, f float64) []byte { return appendFloat(b, f) }

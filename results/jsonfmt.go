package results

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// appendFloat appends f the way Python's repr (and so AIPerf's JSON) prints
// it: shortest round-trip digits, a ".0" on integral values, and an exponent
// outside 1e-4 ≤ |f| < 1e16. f must be finite.
func appendFloat(b []byte, f float64) []byte {
	if f == 0 {
		if math.Signbit(f) {
			return append(b, "-0.0"...)
		}
		return append(b, "0.0"...)
	}
	exp := int(math.Floor(math.Log10(math.Abs(f))))
	// Log10 may be off by one near powers of ten; check against the digits.
	e := strconv.FormatFloat(f, 'e', -1, 64)
	if i := strings.IndexByte(e, 'e'); i >= 0 {
		exp, _ = strconv.Atoi(e[i+1:])
	}
	if exp < -4 || exp >= 16 {
		mant, ex, _ := strings.Cut(e, "e")
		b = append(b, mant...)
		b = append(b, 'e')
		if ex[0] == '-' {
			b = append(b, '-')
		} else {
			b = append(b, '+')
		}
		digits := strings.TrimLeft(ex[1:], "+-")
		if len(digits) < 2 {
			b = append(b, '0')
		}
		return append(b, digits...)
	}
	start := len(b)
	b = strconv.AppendFloat(b, f, 'f', -1, 64)
	if !strings.ContainsRune(string(b[start:]), '.') {
		b = append(b, ".0"...)
	}
	return b
}

// appendValue appends a metric value: integral token counts as ints when
// asInt, other values as Python floats.
func appendValue(b []byte, f float64, asInt bool) []byte {
	if asInt && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return strconv.AppendInt(b, int64(f), 10)
	}
	return appendFloat(b, f)
}

func appendString(b []byte, s string) []byte {
	q, _ := json.Marshal(s)
	return append(b, q...)
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

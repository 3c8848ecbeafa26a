package jsonlex

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// decodeAny builds from l the value json.Unmarshal into an any gives:
// objects keep the last of repeated keys, numbers are float64.
func decodeAny(l *Lexer) (any, bool) {
	switch c := l.Peek(); {
	case c == '{':
		m := map[string]any{}
		ok := l.Object(func(key []byte) bool {
			name := Decode(key, l.KeyPlain() && utf8.Valid(key)) // before the value's keys
			v, ok := decodeAny(l)
			m[name] = v
			return ok
		})
		return m, ok
	case c == '[':
		s := []any{}
		ok := l.Array(func(int) bool {
			v, ok := decodeAny(l)
			s = append(s, v)
			return ok
		})
		return s, ok
	case c == '"':
		body, plain, ok := l.String()
		return Decode(body, plain), ok
	case c == 'n':
		return nil, l.Null()
	case c == 't' || c == 'f':
		return l.Bool()
	}
	return l.Float()
}

// parseAny decodes a whole text with decodeAny.
func parseAny(b []byte) (any, bool) {
	l := New(b)
	l.WS()
	v, ok := decodeAny(&l)
	return v, ok && l.End()
}

var validTexts = []string{
	`{}`, `[]`, `0`, `-0`, `1.5e-3`, `"x"`, `true`, `false`, `null`, ` {"a" : [1 , 2, {"b":null}] } `,
	`{"a":1,"a":2}`, `"\u00e9\ud83d\ude00\n\"\\\/\b\f\r\t"`, `"\ud800"`, `"\udc00\ud800x"`, `"\ud800\u0041"`,
	"\"\xff\xfe é\"", "\"\xed\xa0\x80\"", `{"k\u00e9y":{"\"q\"":[1,{}],"":"\/"}}`, `1E+2`, `123456789012345678901234`,
	`[0.30000000000000004, 9007199254740993, 1e-400]`, "\t\r\n[ ]\n",
}

var invalidTexts = []string{
	``, ` `, `{`, `}`, `[1,]`, `{"a":1,}`, `{"a" 1}`, `{a:1}`, `01`, `-`, `1.`, `.5`, `1e`, `1e+`, `+1`,
	`"\x"`, `"\u12"`, `"\u12g4"`, "\"\x01\"", `"abc`, `tru`, `nul`, `NaN`, `Infinity`, `[1 2]`, `{"a":1}}`,
	`{"a":1} x`, `'a'`, `[` + strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth) + `]`,
}

// TestSkipValidatesAsEncodingJSON: Skip accepts exactly what json.Valid
// accepts (within MaxDepth).
func TestSkipValidatesAsEncodingJSON(t *testing.T) {
	for _, s := range validTexts {
		l := New([]byte(s))
		l.WS()
		assert.True(t, l.Skip() && l.End(), s)
		assert.True(t, json.Valid([]byte(s)), s)
	}
	for _, s := range invalidTexts {
		l := New([]byte(s))
		l.WS()
		assert.False(t, l.Skip() && l.End(), s)
	}
}

// TestDecodeAsEncodingJSON: the values read through Object, Array, String,
// Float and Bool are json.Unmarshal's.
func TestDecodeAsEncodingJSON(t *testing.T) {
	for _, s := range validTexts {
		checkAny(t, []byte(s))
	}
}

func checkAny(t *testing.T, in []byte) {
	t.Helper()
	got, ok := parseAny(in)
	var want any
	err := json.Unmarshal(in, &want)
	if tooDeep(in) {
		return
	}
	require.Equal(t, err == nil, ok, "%q: %v", in, err)
	if ok {
		require.Equal(t, want, got, "%q", in)
	}
}

// tooDeep is true when in may nest deeper than MaxDepth.
func tooDeep(in []byte) bool {
	return bytes.Count(in, []byte("["))+bytes.Count(in, []byte("{")) > MaxDepth
}

func TestStringPlain(t *testing.T) {
	for _, c := range []struct {
		in    string
		body  string
		plain bool
	}{
		{`"abc"`, "abc", true}, {`""`, "", true}, {`"é"`, "é", true}, {`"a\nb"`, `a\nb`, false},
		{"\"\xff\"", "\xff", false}, {`"\u0041"`, `\u0041`, false},
	} {
		l := New([]byte(c.in))
		body, plain, ok := l.String()
		require.True(t, ok, c.in)
		assert.Equal(t, c.body, string(body), c.in)
		assert.Equal(t, c.plain, plain, c.in)
		assert.True(t, l.End(), c.in)
	}
}

// TestFloat: Float converts as strconv.ParseFloat does, bit for bit, on
// ties, on the 17-digit gaps AIPerf writes and on random decimals.
func TestFloat(t *testing.T) {
	in := []string{"0", "-0", "0.0", "-0.000", "1", "17.868007999999998", "18.349401999999998",
		"9007199254740993", "9007199254740995", "18014398509481986", "18014398509481985",
		"9999999999999999999", "1844674407370955.1615", "0.1000000000000000055511151231257827",
		"123456789.0123456789", "0.0000000000000000001", "83650.59938761013", "1.7976931348623157e308", "1e-400"}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 50_000 {
		digits := strconv.FormatUint(rng.Uint64()>>rng.IntN(64), 10)
		if p := rng.IntN(len(digits) + 1); p > 0 && p < len(digits) {
			digits = digits[:p] + "." + digits[p:]
		}
		in = append(in, digits)
	}
	for _, s := range in {
		l := New([]byte(s))
		got, ok := l.Float()
		want, err := strconv.ParseFloat(s, 64)
		require.NoError(t, err, s)
		require.True(t, ok && l.Pos() == len(s), s)
		require.Equal(t, math.Float64bits(want), math.Float64bits(got), "%s: %v, want %v", s, got, want)
	}
	for _, s := range []string{"1e400", "-1e309", "01", "1.", "-", "", "1e", "x"} {
		l := New([]byte(s))
		_, ok := l.Float()
		assert.False(t, ok && l.End(), s)
	}
}

func TestInt(t *testing.T) {
	for _, c := range []struct {
		in   string
		bits int
		want int64
		ok   bool
	}{
		{"0", 64, 0, true}, {"-0", 64, 0, true}, {"42", 64, 42, true},
		{"9223372036854775807", 64, math.MaxInt64, true}, {"-9223372036854775808", 64, math.MinInt64, true},
		{"9223372036854775808", 64, 0, false}, {"-9223372036854775809", 64, 0, false},
		{"18446744073709551616", 64, 0, false}, {"2147483648", 32, 0, false}, {"-2147483648", 32, math.MinInt32, true},
		{"1.0", 64, 0, false}, {"1e2", 64, 0, false}, {"01", 64, 0, true}, {"-", 64, 0, false},
	} {
		l := New([]byte(c.in))
		got, ok := l.Int(c.bits)
		if c.in == "01" { // reads the 0; the 1 is left for the caller to refuse
			assert.True(t, ok && l.Pos() == 1, c.in)
			continue
		}
		assert.Equal(t, c.ok, ok && l.End(), c.in)
		if c.ok {
			assert.Equal(t, c.want, got, c.in)
		}
	}
}

func TestAppendLists(t *testing.T) {
	l := New([]byte(`[1, null,-2.5 ,3e2]`))
	require.Equal(t, 4, l.ListLen())
	fs, ok := l.AppendFloats([]float64{9})
	require.True(t, ok && l.End())
	assert.Equal(t, []float64{9, 1, 0, -2.5, 300}, fs)

	l = New([]byte(`[ -5,null, 9223372036854775807 ]`))
	is, ok := l.AppendInts(nil)
	require.True(t, ok && l.End())
	assert.Equal(t, []int64{-5, 0, math.MaxInt64}, is)

	for _, s := range []string{`[1,]`, `[1 2]`, `[1.5]`, `["1"]`, `[`, `5`} {
		l = New([]byte(s))
		_, ok := l.AppendInts(nil)
		assert.False(t, ok && l.End(), s)
	}
	for _, s := range []string{`[1,]`, `[1e400]`, `[true]`, `[,1]`} {
		l = New([]byte(s))
		_, ok := l.AppendFloats(nil)
		assert.False(t, ok && l.End(), s)
	}
}

func TestMember(t *testing.T) {
	names := Names{"alpha", "beta"}
	for _, c := range []struct {
		in   string
		want []int // indexes returned, -1 for skipped unknowns
		ok   bool
	}{
		{`{"beta":1,"alpha":2,"gamma":[{}]}`, []int{1, 0, -1}, true},
		{`{"alpha":1,"alpha":2}`, []int{0}, false}, // repeated
		{`{"Alpha":1}`, nil, false},                // json.Unmarshal would fold it
		{`{"\u0061lpha":1}`, nil, false},           // escaped
		{`{"ſ":1}`, nil, false},                    // non-ASCII may fold
		{`{"x\"y":1}`, nil, false},
	} {
		l := New([]byte(c.in))
		var seen Seen
		var got []int
		ok := l.Object(func(key []byte) bool {
			f, ok := l.Member(key, names, &seen)
			if !ok {
				return false
			}
			got = append(got, f)
			if f >= 0 {
				_, ok = l.Float()
			}
			return ok
		})
		assert.Equal(t, c.ok, ok, c.in)
		assert.Equal(t, c.want, got, c.in)
	}
}

func TestAllocatesNothing(t *testing.T) {
	in := []byte(`{"id":"x","choices":[{"delta":{"content":"a\u00e9"}}],"n":[1.5,2,null],"deep":{"a":[true,false,null,"s"]}}`)
	dst := make([]byte, 0, 64)
	fs := make([]float64, 0, 8)
	allocs := testing.AllocsPerRun(100, func() {
		l := New(in)
		var walk func() bool
		walk = func() bool {
			switch l.Peek() {
			case '{':
				return l.Object(func([]byte) bool { return walk() })
			case '"':
				body, _, ok := l.String()
				dst = AppendUnescaped(dst[:0], body)
				return ok
			case '[':
				if l.b[l.i+1] == '1' {
					var ok bool
					fs, ok = l.AppendFloats(fs[:0])
					return ok
				}
				return l.Array(func(int) bool { return walk() })
			}
			return l.Skip()
		}
		if !walk() || !l.End() {
			panic("rejected")
		}
		if l.Reset(in); !l.Skip() || !l.End() {
			panic("skip rejected")
		}
	})
	assert.Zero(t, allocs)
}

// FuzzLexer: Skip accepts exactly what json.Valid accepts, and a walk with
// Object, Array, String, Float and Bool gives json.Unmarshal's value.
// Int(64) agrees with json.Unmarshal into an int64.
func FuzzLexer(f *testing.F) {
	for _, s := range append(append([]string{}, validTexts...), invalidTexts...) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if tooDeep(in) {
			return
		}
		l := New(in)
		l.WS()
		require.Equal(t, json.Valid(in), l.Skip() && l.End(), "%q", in)
		checkAny(t, in)

		l = New(in)
		l.WS()
		v, ok := l.Int(64)
		ok = ok && l.End()
		var want int64
		err := json.Unmarshal(in, &want)
		if bytes.Equal(bytes.TrimSpace(in), []byte("null")) {
			return // json.Unmarshal leaves want as it is
		}
		require.Equal(t, err == nil, ok, "%q: %v", in, err)
		if ok {
			require.Equal(t, want, v, "%q", in)
		}
	})
}

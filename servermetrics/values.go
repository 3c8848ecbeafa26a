package servermetrics

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/simbench/simbench/results"
)

// StatValue is one key of an ordered JSON object of numbers.
type StatValue struct {
	Name  string
	Value float64
}

// StatValues is a JSON object of numbers that keeps its key order. Values
// that are integers and named like counts are written without a fraction;
// non-finite values are never written.
type StatValues []StatValue

// Get returns the value of name.
func (nv StatValues) Get(name string) (float64, bool) {
	for _, v := range nv {
		if v.Name == name {
			return v.Value, true
		}
	}
	return 0, false
}

// MarshalJSON writes the object in order, numbers as Python floats.
func (nv StatValues) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	first := true
	for _, v := range nv {
		if !finite(v.Value) {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		name, _ := json.Marshal(v.Name)
		b = append(append(b, name...), ':')
		b = appendNumber(b, v.Value, isCountName(v.Name))
	}
	return append(b, '}'), nil
}

// UnmarshalJSON reads an object of numbers keeping its order; null values
// are skipped.
func (nv *StatValues) UnmarshalJSON(data []byte) error {
	if string(bytes.TrimSpace(data)) == "null" {
		*nv = nil
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := expectDelim(dec, '{'); err != nil {
		return err
	}
	*nv = (*nv)[:0]
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return err
		}
		var v *float64
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("%v: %w", k, err)
		}
		if v != nil {
			*nv = append(*nv, StatValue{Name: k.(string), Value: *v})
		}
	}
	_, err := dec.Token()
	return err
}

// isCountName reports whether a statistic is a count (written as an int,
// as AIPerf does) rather than a measurement.
func isCountName(name string) bool {
	if name == "count" {
		return true
	}
	_, err := strconv.ParseFloat(name, 64) // bucket keys: delta counts
	return err == nil || name == "+Inf"
}

// PyFloat is a float64 written the way Python's json writes floats.
type PyFloat float64

// MarshalJSON writes f as Python's repr would.
func (f PyFloat) MarshalJSON() ([]byte, error) {
	if !finite(float64(f)) {
		return []byte("null"), nil
	}
	return results.AppendPyFloat(nil, float64(f)), nil
}

func pyFloat(f float64) *PyFloat {
	if !finite(f) {
		return nil
	}
	p := PyFloat(f)
	return &p
}

// appendNumber appends a statistic: an integral count as an int when
// asInt, anything else as a Python float. f must be finite.
func appendNumber(b []byte, f float64, asInt bool) []byte {
	if asInt && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return strconv.AppendInt(b, int64(f), 10)
	}
	return results.AppendPyFloat(b, f)
}

// expectDelim reads the next token and checks it is want.
func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("want %q, got %v", want, tok)
	}
	return nil
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

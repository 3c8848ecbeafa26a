package timing

import (
	"fmt"
	"math"
	"strings"
)

// InRange checks lo <= v <= hi, naming the bound in the error.
func InRange(key string, v, lo, hi int) error {
	if v < lo || v > hi {
		return fmt.Errorf("%s: must be in [%d, %d], got %d", key, lo, hi, v)
	}
	return nil
}

// NonNegative checks v >= 0.
func NonNegative(key string, v int) error {
	if v < 0 {
		return fmt.Errorf("%s: must be >= 0, got %d", key, v)
	}
	return nil
}

// FiniteIn checks lo <= v <= hi (and that v is a number).
func FiniteIn(key string, v, lo, hi float64) error {
	if math.IsNaN(v) || v < lo || v > hi {
		return fmt.Errorf("%s: must be in [%g, %g], got %g", key, lo, hi, v)
	}
	return nil
}

// FirstErr is the first non-nil error of errs, nil if none.
func FirstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// OptionalOneOf is OneOf for a key whose empty value means its default.
func OptionalOneOf(key, v string, allowed ...string) error {
	if v == "" {
		return nil
	}
	return OneOf(key, v, allowed...)
}

// OneOf checks that v is one of allowed.
func OneOf(key, v string, allowed ...string) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return fmt.Errorf("%s: must be one of %s, got %q", key, strings.Join(allowed, ", "), v)
}

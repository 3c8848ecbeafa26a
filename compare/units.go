package compare

import (
	"fmt"
	"strings"
)

// unit is a display unit reduced to a dimension and the factor that turns a
// value in this unit into the dimension's base unit (seconds, or "per
// second" for rates).
type unit struct {
	dim   string
	scale float64
}

// timeScales are seconds per unit.
var timeScales = map[string]float64{
	"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3,
	"s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1, "min": 60,
}

// countNames folds the spellings of counted things.
var countNames = map[string]string{
	"tokens": "tokens", "token": "tokens", "tok": "tokens",
	"requests": "requests", "request": "requests", "req": "requests",
}

// parseUnit understands times (ns, us, ms, s/sec, min) and rates such as
// tokens/sec, tok/s, requests/sec and tokens/sec/user. Any other unit is its
// own dimension: it converts only to the same spelling.
func parseUnit(s string) unit {
	u := strings.ToLower(strings.TrimSpace(s))
	if sc, ok := timeScales[u]; ok {
		return unit{dim: "time", scale: sc}
	}
	parts := strings.Split(u, "/")
	if len(parts) == 2 || len(parts) == 3 && parts[2] == "user" {
		count, okC := countNames[parts[0]]
		sc, okT := timeScales[parts[1]]
		if okC && okT {
			return unit{dim: count + "/time" + strings.Repeat("/user", len(parts)-2), scale: 1 / sc}
		}
	}
	if c, ok := countNames[u]; ok {
		return unit{dim: c, scale: 1}
	}
	return unit{dim: "unit:" + u, scale: 1}
}

// converter returns the function that expresses values of unit from in unit
// to, or an error naming both units when they measure different things.
func converter(from, to string) (func(float64) float64, error) {
	if from == to {
		return func(v float64) float64 { return v }, nil
	}
	f, t := parseUnit(from), parseUnit(to)
	if f.dim != t.dim {
		return nil, fmt.Errorf("units %q and %q measure different things", to, from)
	}
	k := f.scale / t.scale
	return func(v float64) float64 { return v * k }, nil
}

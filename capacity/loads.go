package capacity

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// maxLoads bounds a load list: a sweep runs every point in full.
const maxLoads = 1000

// ParseConcurrencies parses a concurrency list: comma-separated integers
// and geometric ranges START..END xFACTOR (1..64x2 is 1,2,4,…,64), in any
// combination. A range's terms are rounded to the nearest integer. The
// result is ascending, without duplicates.
func ParseConcurrencies(s string) ([]int, error) {
	vals, err := parseLoads(s, true)
	if err != nil {
		return nil, fmt.Errorf("concurrency list %q: %w", s, err)
	}
	out := make([]int, len(vals))
	for i, v := range vals {
		out[i] = int(v)
	}
	return out, nil
}

// ParseRates parses a request-rate list (requests/s) as ParseConcurrencies
// does, with numbers that need not be integers (0.5..8x2).
func ParseRates(s string) ([]float64, error) {
	vals, err := parseLoads(s, false)
	if err != nil {
		return nil, fmt.Errorf("request-rate list %q: %w", s, err)
	}
	return vals, nil
}

func parseLoads(s string, integer bool) ([]float64, error) {
	var out []float64
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			return nil, fmt.Errorf("empty item")
		}
		vals, err := parseItem(item, integer)
		if err != nil {
			return nil, err
		}
		out = append(out, vals...)
		if len(out) > maxLoads {
			return nil, fmt.Errorf("more than %d loads", maxLoads)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// parseItem parses one number or one START..ENDxFACTOR range.
func parseItem(item string, integer bool) ([]float64, error) {
	lo, rest, isRange := strings.Cut(item, "..")
	if !isRange {
		v, err := parseLoad(item, integer)
		return []float64{v}, err
	}
	hi, fac, ok := strings.Cut(rest, "x")
	if !ok {
		return nil, fmt.Errorf("range %q: want START..ENDxFACTOR, e.g. 1..64x2", item)
	}
	start, err := parseLoad(lo, integer)
	if err != nil {
		return nil, err
	}
	end, err := parseLoad(hi, integer)
	if err != nil {
		return nil, err
	}
	f, err := strconv.ParseFloat(fac, 64)
	if err != nil || !(f > 1) || math.IsInf(f, 0) {
		return nil, fmt.Errorf("range %q: factor %q must be a number > 1", item, fac)
	}
	if end < start {
		return nil, fmt.Errorf("range %q: end %v is below start %v", item, end, start)
	}
	return geometric(start, end, f, integer)
}

// geometric is start·f^i for i = 0, 1, … up to end (within a relative
// 1e-9, so 0.1..0.8x2 ends at 0.8), each rounded to 12 significant digits
// (or to an integer) so 0.1·3 reads 0.3.
func geometric(start, end, f float64, integer bool) ([]float64, error) {
	var out []float64
	for i := 0; ; i++ {
		v := start * math.Pow(f, float64(i))
		if v > end*(1+1e-9) {
			return out, nil
		}
		if integer {
			v = math.Round(v)
		} else {
			v, _ = strconv.ParseFloat(strconv.FormatFloat(v, 'g', 12, 64), 64)
		}
		out = append(out, v)
		if len(out) > maxLoads {
			return nil, fmt.Errorf("more than %d loads", maxLoads)
		}
	}
}

func parseLoad(s string, integer bool) (float64, error) {
	s = strings.TrimSpace(s)
	if integer {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return 0, fmt.Errorf("%q is not an integer >= 1", s)
		}
		return float64(n), nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v > 0) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a number > 0", s)
	}
	return v, nil
}

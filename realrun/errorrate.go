package realrun

import (
	"math"
	"strconv"
	"strings"

	"github.com/simbench/simbench/internal/usage"
)

// ParseErrorRate reads a bound on the share of failed requests, "0.05" or
// "5%"; "" is no bound (-1).
func ParseErrorRate(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return -1, nil
	}
	pct := strings.HasSuffix(s, "%")
	v, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if pct {
		v /= 100
	}
	if err != nil || math.IsNaN(v) || v < 0 || v > 1 {
		return 0, usage.Errorf("--max-error-rate %q: want a fraction in [0, 1] or a percentage (5%%)", s)
	}
	return v, nil
}

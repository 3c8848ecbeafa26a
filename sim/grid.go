package sim

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"
)

// SpeedupKey is the grid parameter that is not a configuration key: the
// workload's arrival speedup (timestamps and delays divided by it).
const SpeedupKey = "speedup"

// maxGridPoints bounds a grid (a typo such as a 1e6-long list fails early).
const maxGridPoints = 100000

// Grid is a grid of simulator configurations over one workload: the
// cartesian product of its parameters' values, the first parameter varying
// slowest. A grid file is YAML:
//
//	parameters:
//	  - key: workers              # any configuration key, dotted as in the YAML
//	    values: [1, 2, 4]
//	  - key: router.policy
//	    values: [round_robin, kv]
//	  - key: speedup              # arrival speedup of the workload
//	    values: [1, 2]
type Grid struct {
	Parameters []GridParam `yaml:"parameters"`

	keyWarnings []error // the keys given under an old name (KeyWarnings)
}

// KeyWarnings are the grid file's keys given under an old name (see
// CurrentKey): each is read, and described, as its current key.
func (s *Grid) KeyWarnings() []error { return s.keyWarnings }

// GridParam is one axis of the grid.
type GridParam struct {
	Key    string `yaml:"key"`
	Values []any  `yaml:"values"`
}

// GridPoint is one configuration of the grid: Values[i] is the value of
// Parameters[i].
type GridPoint struct {
	Index  int
	Values []any
}

// LoadGrid reads and checks a grid file.
func LoadGrid(path string) (*Grid, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s, err := ParseGrid(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for i, w := range s.keyWarnings {
		s.keyWarnings[i] = fmt.Errorf("%s: %w", path, w)
	}
	return s, nil
}

// ParseGrid parses a grid document; unknown keys are errors.
func ParseGrid(b []byte) (*Grid, error) {
	var s Grid
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&s); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return &s, s.check()
}

func (s *Grid) check() error {
	if len(s.Parameters) == 0 {
		return errors.New("grid: no parameters")
	}
	seen := map[string]bool{}
	n := 1
	for i, p := range s.Parameters {
		if strings.TrimSpace(p.Key) == "" || len(p.Values) == 0 {
			return fmt.Errorf("grid: parameters[%d]: want a key and at least one value", i)
		}
		if cur, renamed := CurrentKey(p.Key); renamed {
			s.keyWarnings = append(s.keyWarnings, fmt.Errorf("parameters[%d]: %s is deprecated, read as %s", i, p.Key, cur))
			p.Key, s.Parameters[i].Key = cur, cur
		}
		if seen[p.Key] {
			return fmt.Errorf("grid: parameter %q given twice", p.Key)
		}
		seen[p.Key] = true
		if n *= len(p.Values); n > maxGridPoints {
			return fmt.Errorf("grid: more than %d points", maxGridPoints)
		}
	}
	return nil
}

// Points enumerates the grid.
func (s *Grid) Points() []GridPoint {
	n := 1
	for _, p := range s.Parameters {
		n *= len(p.Values)
	}
	out := make([]GridPoint, n)
	for i := range out {
		vals, rest := make([]any, len(s.Parameters)), i
		for k := len(s.Parameters) - 1; k >= 0; k-- {
			m := len(s.Parameters[k].Values)
			vals[k], rest = s.Parameters[k].Values[rest%m], rest/m
		}
		out[i] = GridPoint{Index: i, Values: vals}
	}
	return out
}

// Apply returns base with the point's configuration keys set, validated,
// and the point's arrival speedup (0 when the grid has none).
func (s *Grid) Apply(base Config, pt GridPoint) (Config, float64, error) {
	b, err := base.YAML()
	if err != nil {
		return base, 0, err
	}
	var doc map[string]any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return base, 0, err
	}
	speedup := 0.0
	for i, p := range s.Parameters {
		if p.Key == SpeedupKey {
			if speedup, err = positiveFloat(pt.Values[i]); err != nil {
				return base, 0, fmt.Errorf("grid point %d: speedup: %w", pt.Index, err)
			}
			continue
		}
		setPath(doc, strings.Split(p.Key, "."), pt.Values[i])
	}
	if s.setsPoolSizes() {
		delete(doc, "workers") // derived from the pools' sizes again
	}
	if b, err = yaml.Marshal(doc); err != nil {
		return base, 0, err
	}
	cfg, err := ParseConfig(b)
	if err == nil {
		err = cfg.Validate()
	}
	if err != nil {
		return base, 0, fmt.Errorf("grid point %d (%s): %w", pt.Index, s.Describe(pt), err)
	}
	return cfg, speedup, nil
}

// setsPoolSizes reports whether the grid sets a disaggregated pool's size
// and not workers (which must then follow the pools).
func (s *Grid) setsPoolSizes() bool {
	pools := false
	for _, p := range s.Parameters {
		if p.Key == "workers" {
			return false
		}
		pools = pools || p.Key == "disaggregation.prefill_workers" || p.Key == "disaggregation.decode_workers"
	}
	return pools
}

// Describe is "key=value, key=value".
func (s *Grid) Describe(pt GridPoint) string {
	parts := make([]string, len(s.Parameters))
	for i, p := range s.Parameters {
		parts[i] = fmt.Sprintf("%s=%v", p.Key, pt.Values[i])
	}
	return strings.Join(parts, ", ")
}

func setPath(doc map[string]any, path []string, v any) {
	for _, k := range path[:len(path)-1] {
		next, ok := doc[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			doc[k] = next
		}
		doc = next
	}
	doc[path[len(path)-1]] = v
}

func positiveFloat(v any) (float64, error) {
	var f float64
	switch x := v.(type) {
	case int:
		f = float64(x)
	case float64:
		f = x
	default:
		return 0, fmt.Errorf("%v is not a number", v)
	}
	if !(f > 0) || f > 1e6 {
		return 0, fmt.Errorf("%v: want a number > 0", v)
	}
	return f, nil
}

package serve

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/simbench/simbench/sim"
)

// Faults is the faults: section of serve's config: what goes wrong on
// purpose, for testing a benchmark pipeline's error handling and chaos
// runs. Each request draws its faults from a stream seeded by Seed and the
// request's number (1 for the first to arrive), so a run with the same
// requests gets the same faults. Times are wall milliseconds.
type Faults struct {
	// Seed seeds the draws (nil: the config's top-level seed).
	Seed *int64 `yaml:"seed"`
	// Errors answer a share of the requests with an HTTP error status
	// instead of the simulator (the request never enters it). Their rates
	// add up to at most 1: one draw picks at most one.
	Errors []ErrorFault `yaml:"errors"`
	// Cut ends a share of the streams abruptly (the connection is
	// aborted) after AfterTokens tokens; the simulator finishes the
	// request, as when a client leaves.
	Cut CutFault `yaml:"cut"`
	// Stall pauses a share of the streams for Ms before token AfterTokens
	// (0-based); the tokens due meanwhile follow at once.
	Stall StallFault `yaml:"stall"`
	// SlowHeaders holds back a share of the responses' headers (with a
	// stream's first token, a whole answer or an error) for Ms.
	SlowHeaders SlowFault `yaml:"slow_headers"`
}

// ErrorFault answers Rate of the requests with Status.
type ErrorFault struct {
	Status int     `yaml:"status"` // 429, 500, 502, 503 or 504
	Rate   float64 `yaml:"rate"`   // share of the requests, in [0, 1]
	// RetryAfterS is the Retry-After header's seconds (0: none).
	RetryAfterS int `yaml:"retry_after_s"`
}

// CutFault cuts Rate of the streams after AfterTokens tokens.
type CutFault struct {
	Rate        float64 `yaml:"rate"`
	AfterTokens int     `yaml:"after_tokens"`
}

// StallFault pauses Rate of the streams for Ms before token AfterTokens.
type StallFault struct {
	Rate        float64 `yaml:"rate"`
	AfterTokens int     `yaml:"after_tokens"`
	Ms          float64 `yaml:"ms"`
}

// SlowFault holds back Rate of the responses' headers for Ms.
type SlowFault struct {
	Rate float64 `yaml:"rate"`
	Ms   float64 `yaml:"ms"`
}

// faultStatuses are the statuses an ErrorFault may answer with.
var faultStatuses = []int{429, 500, 502, 503, 504}

// maxFaultMs bounds a stall or a header delay (a day).
const maxFaultMs = 86_400_000

// keyError is a validation error of the key at path (dotted, with list
// indices: errors[1].rate).
type keyError struct {
	path string
	msg  string
}

func (e *keyError) Error() string { return "faults." + e.path + ": " + e.msg }

func rateErr(path string, r float64) error {
	if math.IsNaN(r) || r < 0 || r > 1 {
		return &keyError{path, fmt.Sprintf("must be in [0, 1], got %g", r)}
	}
	return nil
}

func msErr(path string, rate, ms float64) error {
	if math.IsNaN(ms) || ms < 0 || ms > maxFaultMs || rate > 0 && ms == 0 {
		return &keyError{path, fmt.Sprintf("must be in (0, %d] when the rate is above 0, got %g", maxFaultMs, ms)}
	}
	return nil
}

// Validate checks every value; the error names the key.
func (f *Faults) Validate() error {
	var errs []error
	sum := 0.0
	for i, e := range f.Errors {
		p := "errors[" + strconv.Itoa(i) + "]."
		if !slices.Contains(faultStatuses, e.Status) {
			errs = append(errs, &keyError{p + "status", fmt.Sprintf("want one of %v, got %d", faultStatuses, e.Status)})
		}
		errs = append(errs, rateErr(p+"rate", e.Rate))
		if e.RetryAfterS < 0 || e.RetryAfterS > 86_400 {
			errs = append(errs, &keyError{p + "retry_after_s", fmt.Sprintf("must be in [0, 86400], got %d", e.RetryAfterS)})
		}
		sum += e.Rate
	}
	if sum > 1+1e-9 {
		errs = append(errs, &keyError{"errors", fmt.Sprintf("the rates add up to %g, more than 1", sum)})
	}
	errs = append(errs, rateErr("cut.rate", f.Cut.Rate), rateErr("stall.rate", f.Stall.Rate),
		rateErr("slow_headers.rate", f.SlowHeaders.Rate),
		msErr("stall.ms", f.Stall.Rate, f.Stall.Ms), msErr("slow_headers.ms", f.SlowHeaders.Rate, f.SlowHeaders.Ms))
	if f.Cut.AfterTokens < 0 {
		errs = append(errs, &keyError{"cut.after_tokens", fmt.Sprintf("must be ≥ 0, got %d", f.Cut.AfterTokens)})
	}
	if f.Stall.AfterTokens < 1 {
		if f.Stall.Rate > 0 {
			errs = append(errs, &keyError{"stall.after_tokens", fmt.Sprintf("must be ≥ 1 (a stall mid-stream; slow_headers delays the first), got %d", f.Stall.AfterTokens)})
		}
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// fault is what goes wrong with one request.
type fault struct {
	err        *ErrorFault // answer with its status instead
	cutAfter   int         // cut the stream after this many tokens (-1: never)
	stallAt    int         // pause before this token (-1: never)
	stallMs    float64
	slowHeader float64 // ms the headers are held back
}

// before holds token k back as the faults say: the headers' delay before
// the first, the stall before its token.
func (f fault) before(ctx context.Context, k int) error {
	ms := 0.0
	if k == 0 {
		ms += f.slowHeader
	}
	if k == f.stallAt {
		ms += f.stallMs
	}
	return hold(ctx, ms)
}

// noFault is a request served as it should be.
var noFault = fault{cutAfter: -1, stallAt: -1}

// draw is request n's faults (n from 1, in arrival order): four draws of
// a stream of its own, in a fixed order.
func (f *Faults) draw(seed int64, n int64) fault {
	out := noFault
	if f == nil {
		return out
	}
	rng := rand.New(rand.NewPCG(uint64(seed), uint64(n)))
	u, acc := rng.Float64(), 0.0
	for i := range f.Errors {
		if acc += f.Errors[i].Rate; u < acc {
			out.err = &f.Errors[i]
			break
		}
	}
	if rng.Float64() < f.Cut.Rate {
		out.cutAfter = f.Cut.AfterTokens
	}
	if rng.Float64() < f.Stall.Rate {
		out.stallAt, out.stallMs = f.Stall.AfterTokens, f.Stall.Ms
	}
	if rng.Float64() < f.SlowHeaders.Rate {
		out.slowHeader = f.SlowHeaders.Ms
	}
	return out
}

// LoadConfig reads serve's config file: a sim.yaml (sim.ParseConfig, then
// Validate) with an optional faults: section (nil without it). Errors name
// the file, the line and the key.
func LoadConfig(path string) (sim.Config, *Faults, error) {
	doc, err := os.ReadFile(path)
	if err != nil {
		return sim.Config{}, nil, err
	}
	f, rest, err := ParseFaults(doc)
	if err != nil {
		return sim.Config{}, nil, fmt.Errorf("%s: %w", path, err)
	}
	cfg, err := sim.ParseConfig(rest)
	if err == nil {
		err = cfg.Validate()
	}
	if err != nil {
		return sim.Config{}, nil, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, f, nil
}

// ParseFaults reads the faults: section out of a config document: the
// section, and the document with the section's lines blanked (the line
// numbers of the rest unchanged) for sim.ParseConfig. A document without
// it gives nil. Errors name the line and the key.
func ParseFaults(doc []byte) (*Faults, []byte, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(doc, &root); err != nil || len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
		return nil, doc, nil // sim.ParseConfig reports it
	}
	top := root.Content[0]
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], top.Content[i+1]
		if k.Value != "faults" {
			continue
		}
		end := 0 // the line after the section (0: the end of the document)
		if i+2 < len(top.Content) {
			end = top.Content[i+2].Line
		}
		if top.Style&yaml.FlowStyle != 0 || end == k.Line {
			return nil, doc, fmt.Errorf("line %d: faults: write the section in block style, on lines of its own", k.Line)
		}
		f, err := decodeFaults(v)
		if err != nil {
			return nil, doc, err
		}
		return f, blankLines(doc, k.Line, end), nil
	}
	return nil, doc, nil
}

// decodeFaults decodes and validates the section's node.
func decodeFaults(v *yaml.Node) (*Faults, error) {
	if err := checkFaultKeys(v, reflect.TypeFor[Faults](), ""); err != nil {
		return nil, err
	}
	f := &Faults{}
	if err := v.Decode(f); err != nil {
		return nil, fmt.Errorf("faults: %w", err)
	}
	if err := f.Validate(); err != nil {
		var ke *keyError
		if errors.As(err, &ke) {
			return nil, fmt.Errorf("line %d: %w", lineOf(v, ke.path), err)
		}
		return nil, err
	}
	return f, nil
}

// checkFaultKeys reports the first key under n that t has no field for, and
// an integer key given a fraction.
func checkFaultKeys(n *yaml.Node, t reflect.Type, path string) error {
	switch {
	case t.Kind() == reflect.Pointer:
		return checkFaultKeys(n, t.Elem(), path)
	case t.Kind() == reflect.Slice && n.Kind == yaml.SequenceNode:
		for i, e := range n.Content {
			if err := checkFaultKeys(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case t.Kind() == reflect.Int && n.Kind == yaml.ScalarNode && n.ShortTag() != "!!int":
		return fmt.Errorf("line %d: faults%s: want an integer, got %s", n.Line, path, n.Value)
	case t.Kind() == reflect.Struct && n.Kind == yaml.MappingNode:
		fields := map[string]reflect.Type{}
		for i := range t.NumField() {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
			fields[name] = t.Field(i).Type
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			ft, ok := fields[k.Value]
			if !ok {
				known := slices.Sorted(maps.Keys(fields))
				return fmt.Errorf("line %d: unknown key %q (known under faults%s: %s)", k.Line, "faults"+path+"."+k.Value, path, strings.Join(known, ", "))
			}
			if err := checkFaultKeys(n.Content[i+1], ft, path+"."+k.Value); err != nil {
				return err
			}
		}
	}
	return nil
}

// lineOf is the line of the key at path (errors[1].rate) under n, or of
// the deepest part of it found.
func lineOf(n *yaml.Node, path string) int {
	line := n.Line
	for part := range strings.SplitSeq(path, ".") {
		name, idx, indexed := strings.Cut(part, "[")
		next := mappingValue(n, name)
		if next == nil {
			return line
		}
		line, n = next.Line, next
		if indexed {
			i, _ := strconv.Atoi(strings.TrimSuffix(idx, "]"))
			if n.Kind != yaml.SequenceNode || i >= len(n.Content) {
				return line
			}
			n = n.Content[i]
			line = n.Line
		}
	}
	return line
}

// mappingValue is the value of key in the mapping n, with the key's line.
func mappingValue(n *yaml.Node, key string) *yaml.Node {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			v := *n.Content[i+1]
			v.Line = n.Content[i].Line
			return &v
		}
	}
	return nil
}

// blankLines empties lines from..end-1 (1-based; end 0: to the end) of
// doc, keeping their line breaks.
func blankLines(doc []byte, from, end int) []byte {
	lines := strings.SplitAfter(string(doc), "\n")
	for i := from - 1; i < len(lines) && (end == 0 || i < end-1); i++ {
		if strings.HasSuffix(lines[i], "\n") {
			lines[i] = "\n"
		} else {
			lines[i] = ""
		}
	}
	return []byte(strings.Join(lines, ""))
}

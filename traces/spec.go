package traces

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/simbench/simbench/internal/atomicfile"
)

// DefaultSynth holds the synthetic-workload defaults of the workload flags
// (AIPerf's where it has one): what a Spec key left unset means.
var DefaultSynth = SynthSpec{RequestCount: 10, GammaShape: 1, ISL: 550, OSL: 256, NumPrefixGroups: 1,
	BlockSize: MooncakeBlockSize, Turns: 1}

// Spec describes a workload the way the workload flags of simbench run and
// simbench sim do (and the workload section of a validate pipeline): a
// Mooncake trace reshaped by the filter keys, or a synthetic workload. A nil
// field is a flag not given. Each key is the flag's name with "_" for "-",
// and error messages name the flags, so a CLI, a pipeline file and this
// struct describe one workload in one vocabulary.
type Spec struct {
	Trace              *string  `yaml:"trace" json:"trace,omitempty"`
	TraceFormat        *string  `yaml:"trace_format" json:"trace_format,omitempty"`
	StartOffsetMs      *float64 `yaml:"start_offset_ms" json:"start_offset_ms,omitempty"`
	EndOffsetMs        *float64 `yaml:"end_offset_ms" json:"end_offset_ms,omitempty"`
	AutoOffset         *bool    `yaml:"auto_offset" json:"auto_offset,omitempty"`
	Speedup            *float64 `yaml:"speedup" json:"speedup,omitempty"`
	Limit              *int     `yaml:"limit" json:"limit,omitempty"`
	MaxTotalTokens     *int     `yaml:"max_total_tokens" json:"max_total_tokens,omitempty"`
	MaxISL             *int     `yaml:"max_isl" json:"max_isl,omitempty"`
	MaxOSL             *int     `yaml:"max_osl" json:"max_osl,omitempty"`
	ScaleLengths       *float64 `yaml:"scale_lengths" json:"scale_lengths,omitempty"`
	Concurrency        *int     `yaml:"concurrency" json:"concurrency,omitempty"`
	RequestCount       *int     `yaml:"request_count" json:"request_count,omitempty"`
	WarmupRequestCount *int     `yaml:"warmup_request_count" json:"warmup_request_count,omitempty"`
	RequestRate        *float64 `yaml:"request_rate" json:"request_rate,omitempty"`
	ArrivalPattern     *string  `yaml:"arrival_pattern" json:"arrival_pattern,omitempty"`
	GammaShape         *float64 `yaml:"gamma_shape" json:"gamma_shape,omitempty"`
	ISL                *int     `yaml:"isl" json:"isl,omitempty"`
	ISLStddev          *int     `yaml:"isl_stddev" json:"isl_stddev,omitempty"`
	OSL                *int     `yaml:"osl" json:"osl,omitempty"`
	OSLStddev          *int     `yaml:"osl_stddev" json:"osl_stddev,omitempty"`
	SharedPrefixTokens *int     `yaml:"shared_prefix_tokens" json:"shared_prefix_tokens,omitempty"`
	NumPrefixGroups    *int     `yaml:"num_prefix_groups" json:"num_prefix_groups,omitempty"`
	// PrefixPromptLength is AIPerf's --prefix-prompt-length: a shared
	// prefix of this many tokens before the ISL tokens of a first turn
	// (SharedPrefixTokens counts its prefix within them).
	PrefixPromptLength *int     `yaml:"prefix_prompt_length" json:"prefix_prompt_length,omitempty"`
	BlockSize          *int     `yaml:"block_size" json:"block_size,omitempty"`
	RandomSeed         *int64   `yaml:"random_seed" json:"random_seed,omitempty"`
	Turns              *int     `yaml:"turns" json:"turns,omitempty"`
	TurnDelayMs        *float64 `yaml:"turn_delay_ms" json:"turn_delay_ms,omitempty"`
}

// SpecError is a mistake in a Spec (a key that does not fit the others, a
// value out of range), as opposed to a trace that cannot be read.
type SpecError struct{ Err error }

// Error is the wrapped error's message.
func (e *SpecError) Error() string { return e.Err.Error() }

// Unwrap returns the wrapped error.
func (e *SpecError) Unwrap() error { return e.Err }

func specErrorf(format string, args ...any) error {
	return &SpecError{fmt.Errorf(format, args...)}
}

// Keys that apply to one kind of workload only, in the order they are
// checked.
var (
	filterKeys = []string{"start_offset_ms", "end_offset_ms", "auto_offset", "speedup", "limit",
		"max_total_tokens", "max_isl", "max_osl", "scale_lengths"}
	synthKeys = []string{"request_count", "warmup_request_count", "request_rate", "arrival_pattern", "gamma_shape",
		"isl", "isl_stddev", "osl", "osl_stddev", "shared_prefix_tokens", "num_prefix_groups",
		"prefix_prompt_length", "turns", "turn_delay_ms"}
)

// IsTrace reports whether the spec replays a trace.
func (s Spec) IsTrace() bool { return s.Trace != nil }

// Seed is random_seed, 0 when unset.
func (s Spec) Seed() int64 { return deref(s.RandomSeed, 0) }

// Build makes the workload: the trace loaded and reshaped, or the synthetic
// workload generated. fillSeconds > 0 (a run's duration limit) with a rate
// and no request_count synthesises enough requests to fill it. The trace's
// load warnings are returned, not printed.
func (s Spec) Build(fillSeconds float64) (*Workload, []Warning, error) {
	if s.IsTrace() {
		return s.buildTrace()
	}
	if key := s.firstSet(filterKeys); key != "" {
		return nil, nil, specErrorf("--%s reshapes a trace: it needs --trace", flagName(key))
	}
	if s.TraceFormat != nil {
		return nil, nil, specErrorf("--trace-format says how to read --trace: it needs --trace")
	}
	syn, err := s.Synth()
	if err != nil {
		return nil, nil, err
	}
	if fillSeconds > 0 && syn.Rate > 0 && s.RequestCount == nil {
		syn.RequestCount = int(math.Ceil(syn.Rate * fillSeconds))
	}
	wl, err := Synthesize(syn)
	if err != nil {
		return nil, nil, &SpecError{err}
	}
	return wl, nil, nil
}

func (s Spec) buildTrace() (*Workload, []Warning, error) {
	if key := s.firstSet(synthKeys); key != "" {
		return nil, nil, specErrorf("--%s shapes a synthetic workload: it cannot be used with --trace", flagName(key))
	}
	f := s.Filter()
	if err := f.Validate(); err != nil {
		return nil, nil, &SpecError{err}
	}
	if s.Concurrency != nil {
		if err := CheckConcurrency(*s.Concurrency, false); err != nil {
			return nil, nil, &SpecError{err}
		}
	}
	file := *s.Trace
	// The trace's hash_ids are blocks of block_size tokens: simbench's own
	// workload.jsonl of a run synthesised at another size than 512 replays.
	wl, warns, err := LoadTrace(file, deref(s.TraceFormat, FormatMooncake), deref(s.BlockSize, MooncakeBlockSize))
	if err != nil {
		return nil, nil, err
	}
	if wl, err = Apply(wl, f); err != nil {
		return nil, warns, specErrorf("%s: %v", file, err)
	}
	if !f.RebaseTime && !f.window() {
		w, err := checkLead(file, wl)
		if err != nil {
			return nil, warns, err
		}
		warns = append(warns, w...)
	}
	if s.Concurrency != nil {
		wl.Concurrency = *s.Concurrency
	}
	return wl, warns, nil
}

// Leads of a schedule's first request: beyond leadWarnMs the run waits
// long before it sends; beyond leadRefuseMs the timestamps are absolute
// (epoch milliseconds), and the run would wait for years and the simulator
// scrape for as long.
const (
	leadWarnMs   = 60e3
	leadRefuseMs = 86_400e3
)

// checkLead refuses a schedule whose first request is due more than a day
// after time zero and warns when it is due more than a minute after.
func checkLead(file string, wl *Workload) ([]Warning, error) {
	first := -1
	for i := range wl.Requests {
		if r := &wl.Requests[i]; r.HasTimestamp && (first < 0 || r.TimestampMs < wl.Requests[first].TimestampMs) {
			first = i
		}
	}
	if first < 0 {
		return nil, nil
	}
	r := &wl.Requests[first]
	switch {
	case r.TimestampMs > leadRefuseMs:
		return nil, specErrorf("%s:%d: timestamp: the first request is due %.1f days after time zero (epoch milliseconds?): "+
			"give --auto-offset to start the schedule at the first request", file, r.Line, r.TimestampMs/leadRefuseMs)
	case r.TimestampMs > leadWarnMs:
		return []Warning{{File: file, Line: r.Line, Msg: fmt.Sprintf("the first request is due %.0f s after time zero: "+
			"the run sends nothing until then (--auto-offset starts at the first request)", r.TimestampMs/1e3)}}, nil
	}
	return nil, nil
}

// Filter is the Filter of the trace keys.
func (s Spec) Filter() Filter {
	return Filter{
		MaxTotalTokens: deref(s.MaxTotalTokens, 0),
		StartMs:        deref(s.StartOffsetMs, 0),
		EndMs:          deref(s.EndOffsetMs, 0),
		HasWindow:      s.StartOffsetMs != nil || s.EndOffsetMs != nil,
		Speedup:        deref(s.Speedup, 0),
		Limit:          deref(s.Limit, 0),
		MaxISL:         deref(s.MaxISL, 0),
		MaxOSL:         deref(s.MaxOSL, 0),
		ScaleLengths:   deref(s.ScaleLengths, 0),
		RebaseTime:     deref(s.AutoOffset, false),
	}
}

// Synth is the SynthSpec of the synthetic keys (DefaultSynth where unset),
// its mode chosen from request_rate, arrival_pattern and concurrency.
func (s Spec) Synth() (SynthSpec, error) {
	d := DefaultSynth
	syn := SynthSpec{
		Concurrency: deref(s.Concurrency, 0), RequestCount: deref(s.RequestCount, d.RequestCount),
		WarmupCount: deref(s.WarmupRequestCount, 0), Rate: deref(s.RequestRate, 0),
		GammaShape: deref(s.GammaShape, d.GammaShape), ISL: deref(s.ISL, d.ISL), ISLStddev: deref(s.ISLStddev, 0),
		OSL: deref(s.OSL, d.OSL), OSLStddev: deref(s.OSLStddev, 0), SharedPrefixTokens: deref(s.SharedPrefixTokens, 0),
		NumPrefixGroups: deref(s.NumPrefixGroups, d.NumPrefixGroups), BlockSize: deref(s.BlockSize, d.BlockSize),
		Seed: s.Seed(), Turns: deref(s.Turns, d.Turns), TurnDelayMs: deref(s.TurnDelayMs, 0),
	}
	pattern := deref(s.ArrivalPattern, "")
	switch {
	case s.RequestRate != nil:
		syn.Mode = ModePoisson
		if pattern != "" {
			syn.Mode = pattern
		}
	case pattern != "":
		return syn, specErrorf("--arrival-pattern %s needs --request-rate", pattern)
	case s.Concurrency != nil:
		syn.Mode = ModeConcurrency
	default:
		return syn, specErrorf("give --concurrency N (closed loop: N requests in flight) or --request-rate R (open loop: R requests/s)")
	}
	if s.GammaShape != nil && syn.Mode != ModeGamma {
		return syn, specErrorf("--gamma-shape only applies to --arrival-pattern gamma")
	}
	if err := s.prefixPrompt(&syn); err != nil {
		return syn, err
	}
	switch syn.Mode {
	case ModeConcurrency, ModeConstant, ModePoisson, ModeGamma:
		return syn, nil
	}
	return syn, specErrorf("--arrival-pattern must be constant, poisson or gamma, got %q", pattern)
}

// prefixPrompt applies AIPerf's prefix_prompt_length L to syn: a shared
// prefix of L tokens, and L more input tokens, so the ISL draws stay the
// tokens after the prefix.
func (s Spec) prefixPrompt(syn *SynthSpec) error {
	if s.PrefixPromptLength == nil {
		return nil
	}
	l := *s.PrefixPromptLength
	switch {
	case s.SharedPrefixTokens != nil:
		return specErrorf("--prefix-prompt-length (AIPerf's prefix, before the --isl tokens) and --shared-prefix-tokens " +
			"(a prefix within them) both set the shared prefix: give one")
	case l < 0:
		return specErrorf("--prefix-prompt-length must be >= 0, got %d", l)
	case syn.BlockSize > 0 && l%syn.BlockSize != 0:
		return specErrorf("--prefix-prompt-length (%d) must be a multiple of --hash-block-size (%d): only whole hash blocks are shared",
			l, syn.BlockSize)
	}
	syn.SharedPrefixTokens, syn.ISL = l, syn.ISL+l
	return nil
}

// Keys lists the keys that are set, as "key=value" in field order (a
// pipeline's workload, for logs and tests).
func (s Spec) Keys() []string {
	v := reflect.ValueOf(s)
	var out []string
	for i := range v.NumField() {
		if f := v.Field(i); !f.IsNil() {
			out = append(out, SpecKey(i)+"="+fmt.Sprint(f.Elem().Interface()))
		}
	}
	return out
}

// SpecKey is the key of Spec's i-th field.
func SpecKey(i int) string { return reflect.TypeFor[Spec]().Field(i).Tag.Get("yaml") }

// firstSet is the first of keys that is set, "" when none is.
func (s Spec) firstSet(keys []string) string {
	v := reflect.ValueOf(s)
	for _, k := range keys {
		for i := range v.NumField() {
			if SpecKey(i) == k && !v.Field(i).IsNil() {
				return k
			}
		}
	}
	return ""
}

func flagName(key string) string { return strings.ReplaceAll(key, "_", "-") }

func deref[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

// WriteWorkloadFile keeps the exact workload a run replayed in its
// directory (WorkloadFile, Mooncake JSONL with warmup marked; whole or
// absent, an older file untouched by a failed write), so
// calibrate, merge and later replays rebuild it without the flags.
func WriteWorkloadFile(dir string, wl *Workload) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(dir, WorkloadFile), func(w io.Writer) error { return WriteJSONL(w, wl) })
}

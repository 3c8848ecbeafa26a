package capacity

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/simbench/simbench/results"
)

// SummaryName is the file a load sweep writes beside its points. The
// simulator's config-grid sweep (package sweep) writes a file of the same
// name with kind "config_grid"; Kind tells them apart.
const SummaryName = "sweep_summary.json"

// Kind is sweep_summary.json's kind for a load sweep; KindConfigGrid is
// the simulator config grid's.
const (
	Kind           = "load_sweep"
	KindConfigGrid = "config_grid"
)

// Load is what a sweep varies: the key of a point's load in the summary,
// as AIPerf names the flag.
type Load string

// The two loads: closed loop (concurrent users) and open loop (requests/s).
const (
	Concurrency Load = "concurrency"
	RequestRate Load = "request_rate"
)

// Summary is a load sweep's sweep_summary.json.
type Summary struct {
	Kind string `json:"kind"`
	Load Load   `json:"load"`
	// Loads is every load the sweep was asked for, ascending; the points
	// run are a prefix of it when the sweep stopped early.
	Loads []float64 `json:"loads"`
	// Goodput is the SLOs in AIPerf's --goodput syntax; empty without.
	Goodput string `json:"goodput,omitempty"`
	// AttainmentTarget is the share of valid requests that must meet
	// every SLO for a point to meet the SLO (--attainment).
	AttainmentTarget float64 `json:"attainment_target"`
	// MaxErrorRate is --max-error-rate as a fraction; absent when off.
	MaxErrorRate *float64 `json:"max_error_rate,omitempty"`
	Points       []Point  `json:"points"`
	// Capacity is absent without SLOs or without points.
	Capacity *Capacity `json:"capacity,omitempty"`
	// Stopped is absent when every load in Loads was run.
	Stopped *Stop `json:"stopped,omitempty"`
}

// Point is one load's headline metrics, in AIPerf's display units and
// under AIPerf's tags (statistics as TAG_p50). Exactly one of Concurrency
// and RequestRate is set, the one the summary's Load names.
type Point struct {
	Concurrency int     `json:"concurrency,omitempty"`
	RequestRate float64 `json:"request_rate,omitempty"`
	// Dir is the point's run directory, relative to the sweep's.
	Dir                   string  `json:"dir"`
	RequestCount          int     `json:"request_count"`
	ErrorRequestCount     int     `json:"error_request_count"`
	ErrorRate             float64 `json:"error_rate"`
	RequestThroughput     float64 `json:"request_throughput"`
	OutputTokenThroughput float64 `json:"output_token_throughput"`
	// Goodput, GoodRequestCount, Attainment and MeetsSLO exist only
	// with SLOs.
	Goodput          *float64 `json:"goodput,omitempty"`
	GoodRequestCount *int     `json:"good_request_count,omitempty"`
	Attainment       *float64 `json:"attainment,omitempty"`
	MeetsSLO         *bool    `json:"meets_slo,omitempty"`
	// The latencies (ms) exist only for streaming runs with a valid
	// request.
	TTFTP50 *float64 `json:"time_to_first_token_p50,omitempty"`
	TTFTP99 *float64 `json:"time_to_first_token_p99,omitempty"`
	ITLP50  *float64 `json:"inter_token_latency_p50,omitempty"`
	ITLP99  *float64 `json:"inter_token_latency_p99,omitempty"`
}

// Value is the point's load.
func (p Point) Value() float64 {
	if p.Concurrency != 0 {
		return float64(p.Concurrency)
	}
	return p.RequestRate
}

// Capacity is the SLO capacity: the highest load that meets the SLO before
// the first load that fails it, that failing load, and an estimate
// between them.
type Capacity struct {
	// Status is "found" (a load meets, a higher one fails), "above_tested"
	// (every point met: capacity is at least the highest) or
	// "below_tested" (the lowest load already failed).
	Status string `json:"status"`
	// Concurrency or RequestRate is the highest load meeting the SLO
	// (absent when below_tested).
	Concurrency int     `json:"concurrency,omitempty"`
	RequestRate float64 `json:"request_rate,omitempty"`
	// FailingConcurrency or FailingRequestRate is the first load that
	// fails (absent when above_tested).
	FailingConcurrency int     `json:"failing_concurrency,omitempty"`
	FailingRequestRate float64 `json:"failing_request_rate,omitempty"`
	// Estimate is the capacity estimate: interpolated between the two
	// loads when found, else the highest passing load (absent when
	// below_tested).
	Estimate     *float64 `json:"estimate,omitempty"`
	Interpolated bool     `json:"interpolated"`
	// Method says how Estimate was obtained, in words.
	Method string `json:"method"`
	// NonMonotone is set when a load above the failing one meets the SLO
	// again: capacity is still taken below the first failure.
	NonMonotone bool `json:"non_monotone,omitempty"`
}

// Capacity statuses.
const (
	StatusFound       = "found"
	StatusAboveTested = "above_tested"
	StatusBelowTested = "below_tested"
)

// Passing is the highest load meeting the SLO (0 when none).
func (c Capacity) Passing() float64 { return float64(c.Concurrency) + c.RequestRate }

// Failing is the first failing load (0 when none).
func (c Capacity) Failing() float64 { return float64(c.FailingConcurrency) + c.FailingRequestRate }

// Stop says why a sweep stopped before its last load.
type Stop struct {
	// Reason is "saturation", "error_rate", "slo" (the stop rule),
	// "interrupted" (SIGINT/SIGTERM) or "failed" (a point's run failed).
	Reason string `json:"reason"`
	// After is the last load run.
	After float64 `json:"after"`
	// Detail states the rule with the figures that triggered it.
	Detail string `json:"detail"`
	// Skipped is the loads not run.
	Skipped []float64 `json:"skipped"`
}

// Stop reasons.
const (
	StopSaturation = "saturation"
	StopErrorRate  = "error_rate"
	StopSLO        = "slo"
	// StopInterrupted is a sweep ended by a signal, not by the rule.
	StopInterrupted = "interrupted"
	// StopFailed is a sweep ended by a point whose run failed outright
	// (its load is the first of Skipped).
	StopFailed = "failed"
)

// PointDir is the run directory name of a load: c4, r2.5.
func PointDir(load Load, v float64) string {
	if load == Concurrency {
		return "c" + strconv.Itoa(int(v))
	}
	return "r" + strconv.FormatFloat(v, 'f', -1, 64)
}

// WriteSummary writes DIR/sweep_summary.json atomically.
func WriteSummary(dir string, s *Summary) error {
	s.Kind = Kind
	if err := s.Validate(); err != nil {
		return fmt.Errorf("%s: %w", SummaryName, err)
	}
	return results.WriteFile(filepath.Join(dir, SummaryName), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(s)
	})
}

// ReadSummary reads and validates DIR/sweep_summary.json of a load sweep.
func ReadSummary(dir string) (*Summary, error) {
	path := filepath.Join(dir, SummaryName)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s, err := ParseSummary(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// ParseSummary decodes and validates a load sweep's summary.
func ParseSummary(b []byte) (*Summary, error) {
	var head struct {
		Kind *string `json:"kind"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, err
	}
	switch {
	case head.Kind == nil || *head.Kind == KindConfigGrid:
		return nil, errors.New("a simulator config grid (simbench sim --grid), not a load sweep: kind is not \"" + Kind + "\"")
	case *head.Kind != Kind:
		return nil, fmt.Errorf("kind %q: want %q", *head.Kind, Kind)
	}
	var s Summary
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, err
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &s, nil
}

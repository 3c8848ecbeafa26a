package compare

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Threshold bounds the |error %| of one statistic of one metric.
type Threshold struct {
	Metric string
	Stat   string
	MaxPct float64
}

// Field is "metric.stat".
func (t Threshold) Field() string { return t.Metric + "." + t.Stat }

// DefaultGate is the bound set --gate enables: the headline latency and
// throughput figures, looser on the tails.
var DefaultGate = []Threshold{
	{"time_to_first_token", "avg", 10}, {"time_to_first_token", "p99", 20},
	{"inter_token_latency", "avg", 10}, {"inter_token_latency", "p99", 20},
	{"request_latency", "avg", 10}, {"output_token_throughput", "avg", 10},
}

// stallStats are the stall figures compared like metric statistics, under
// the metric name StallMetric.
var stallStats = []string{"stall_count", "stalls_per_1000_gaps", "blocked_stream_time_s"}

// StallMetric is the metric name of the stall rows.
const StallMetric = "stalls"

// ParseThresholds parses --fail-above values: "metric.stat=PCT%" (the % is
// optional), each value possibly a comma-separated list.
func ParseThresholds(specs []string) ([]Threshold, error) {
	var out []Threshold
	for _, spec := range specs {
		for _, f := range strings.Split(spec, ",") {
			if f = strings.TrimSpace(f); f == "" {
				continue
			}
			t, err := parseThreshold(f)
			if err != nil {
				return nil, err
			}
			out = append(out, t)
		}
	}
	return out, nil
}

func parseThreshold(f string) (Threshold, error) {
	field, pct, ok := strings.Cut(f, "=")
	metric, stat, ok2 := strings.Cut(field, ".")
	if !ok || !ok2 || metric == "" {
		return Threshold{}, fmt.Errorf("%q: want metric.stat=PCT%%, e.g. time_to_first_token.avg=10%%", f)
	}
	if !slices.Contains(statOrder, stat) && !slices.Contains(stallStats, stat) {
		return Threshold{}, fmt.Errorf("%q: unknown statistic %q (want one of %s, or for %s: %s)", f, stat,
			strings.Join(statOrder, " "), StallMetric, strings.Join(stallStats, " "))
	}
	v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(pct), "%"), 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return Threshold{}, fmt.Errorf("%q: bound %q is not a non-negative percentage", f, pct)
	}
	return Threshold{Metric: metric, Stat: stat, MaxPct: v}, nil
}

// Verdict statuses.
const (
	Pass    = "pass"
	Breach  = "breach"
	Missing = "missing"
)

// Verdict is the outcome of one threshold.
//
// A statistic whose reference is 0 while the candidate is not has no error
// % (the relative error is unbounded) and is a breach. A gated statistic
// that one side lacks cannot be judged: it is "missing", and a comparison
// with a missing verdict fails (exit code 1) whatever the other verdicts
// say, because a gate that silently skips fields would pass anything.
type Verdict struct {
	Threshold
	ErrorPct *float64
	Status   string
	Reason   string
}

// Evaluate judges every threshold against the rows. A field that does
// not exist on either side is "missing" too, which also catches typos in
// metric names.
func Evaluate(rows []Row, a Alignment, th []Threshold) []Verdict {
	out := make([]Verdict, 0, len(th))
	for _, t := range th {
		out = append(out, evaluate(rows, a, t))
	}
	return out
}

func evaluate(rows []Row, a Alignment, t Threshold) Verdict {
	v := Verdict{Threshold: t}
	i := slices.IndexFunc(rows, func(r Row) bool { return r.Metric == t.Metric && r.Stat == t.Stat })
	if i < 0 {
		v.Status, v.Reason = Missing, missingReason(a, t)
		return v
	}
	v.ErrorPct = rows[i].ErrorPct
	switch {
	case v.ErrorPct == nil:
		v.Status, v.Reason = Breach, "reference is 0 and candidate is not: unbounded relative error"
	case math.Abs(*v.ErrorPct) > t.MaxPct:
		v.Status, v.Reason = Breach, fmt.Sprintf("|%s| > %g%%", fmtPct(v.ErrorPct), t.MaxPct)
	default:
		v.Status, v.Reason = Pass, fmt.Sprintf("|%s| ≤ %g%%", fmtPct(v.ErrorPct), t.MaxPct)
	}
	return v
}

func missingReason(a Alignment, t Threshold) string {
	switch {
	case slices.Contains(a.OnlyInReference, t.Metric):
		return t.Metric + " is missing from the candidate"
	case slices.Contains(a.OnlyInCandidate, t.Metric):
		return t.Metric + " is missing from the reference"
	}
	return t.Field() + " is not on both sides"
}

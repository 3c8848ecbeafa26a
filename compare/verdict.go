package compare

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/simbench/simbench/internal/suggest"
	"github.com/simbench/simbench/results"
)

// Threshold bounds the |error %| of one statistic of one metric, or of
// the SLO capacity of two load sweeps (Metric CapacityField, no Stat).
type Threshold struct {
	Metric string
	Stat   string
	MaxPct float64
}

// CapacityField is the --fail-above field of a load sweep's SLO capacity
// ("capacity=10%"): the error % of the candidate's capacity estimate.
const CapacityField = "capacity"

// Field is "metric.stat", or "capacity".
func (t Threshold) Field() string {
	if t.Stat == "" {
		return t.Metric
	}
	return t.Metric + "." + t.Stat
}

// DefaultGate is the bound set --gate enables: the headline latency and
// throughput figures, looser on the tails.
var DefaultGate = []Threshold{
	{"time_to_first_token", "avg", 10}, {"time_to_first_token", "p99", 20},
	{"inter_token_latency", "avg", 10}, {"inter_token_latency", "p99", 20},
	{"request_latency", "avg", 10}, {"output_token_throughput", "avg", 10},
}

// WithDefaultGate puts DefaultGate before th; an explicit bound on the
// same field replaces the default one.
func WithDefaultGate(th []Threshold) []Threshold {
	var out []Threshold
	for _, d := range DefaultGate {
		if !slices.ContainsFunc(th, func(t Threshold) bool { return t.Field() == d.Field() }) {
			out = append(out, d)
		}
	}
	return append(out, th...)
}

// stallStats are the stall figures compared like metric statistics, under
// the metric name StallMetric.
var stallStats = []string{"stall_count", "stalls_per_1000_gaps", "blocked_stream_time_s"}

// StallMetric is the metric name of the stall rows.
const StallMetric = "stalls"

// ParseThresholds parses --fail-above values: "metric.stat=PCT%" (the % is
// optional) or "capacity=PCT%", each value possibly a comma-separated list.
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
	if field = strings.TrimSpace(field); ok && field == CapacityField {
		metric, stat, ok2 = CapacityField, "", true
	}
	if !ok || !ok2 || metric == "" {
		return Threshold{}, fmt.Errorf("%q: want metric.stat=PCT%% or capacity=PCT%%, e.g. time_to_first_token.avg=10%%", f)
	}
	if metric != CapacityField && !slices.Contains(statOrder, stat) && !slices.Contains(stallStats, stat) {
		return Threshold{}, fmt.Errorf("%q: unknown statistic %q (want one of %s, or for %s: %s)", f, stat,
			strings.Join(statOrder, " "), StallMetric, strings.Join(stallStats, " "))
	}
	if metric == CapacityField && stat != "" {
		return Threshold{}, fmt.Errorf("%q: capacity has no statistic: write capacity=PCT%%", f)
	}
	v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(pct), "%"), 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return Threshold{}, fmt.Errorf("%q: bound %q is not a non-negative percentage", f, pct)
	}
	return Threshold{Metric: metric, Stat: stat, MaxPct: v}, nil
}

// UnknownMetrics reports the thresholds whose metric neither side has and
// simbench does not define (a misspelt name), each with the nearest known
// name; a known metric one side lacks stays a "missing" verdict.
func (r *Report) UnknownMetrics() error {
	known := r.knownMetrics()
	var errs []error
	for _, t := range r.Options.Thresholds {
		if t.Metric == CapacityField || slices.Contains(known, t.Metric) {
			continue
		}
		near, _ := suggest.Nearest(t.Metric, known)
		errs = append(errs, fmt.Errorf("%s: unknown metric %q (did you mean %q?)", t.Field(), t.Metric, near))
	}
	return errors.Join(errs...)
}

// knownMetrics are the metrics of either side and every metric simbench
// defines.
func (r *Report) knownMetrics() []string {
	known := []string{StallMetric}
	for _, d := range results.Defs() {
		known = append(known, d.Tag)
	}
	for _, row := range r.Rows {
		known = append(known, row.Metric)
	}
	return append(append(known, r.OnlyInReference...), r.OnlyInCandidate...)
}

// Verdict statuses.
const (
	Pass    = "pass"
	Breach  = "breach"
	Missing = "missing"
	// NotSignificant is the status of a verdict whose medians are further
	// apart than the bound while the runs do not differ beyond their
	// run-to-run noise (Mann–Whitney p > alpha): benchstat's "~". It does
	// not fail a gate and needs several runs on a side.
	NotSignificant = "~"
)

// Verdict is the outcome of one threshold.
//
// A statistic whose reference is 0 while the candidate is not has no error
// % (the relative error is unbounded) and is a breach. A gated statistic
// that one side lacks cannot be judged: it is "missing", and a comparison
// with a missing verdict fails (exit code 1) whatever the other verdicts
// say, because a gate that silently skips fields would pass anything. A
// field that does not exist on either side is "missing" too, which also
// catches typos in metric names.
type Verdict struct {
	Threshold
	// Scope names the load of a load-sweep point's verdict ("concurrency
	// 4"); "" otherwise.
	Scope    string
	ErrorPct *float64
	Status   string
	Reason   string
}

// Name is the verdict's field, after its scope when it has one:
// "concurrency 4: time_to_first_token.avg".
func (v Verdict) Name() string {
	if v.Scope == "" {
		return v.Field()
	}
	return v.Scope + ": " + v.Field()
}

// evaluate judges every threshold against the rows: a breach needs
// |error| > bound and, with several runs per side, p ≤ alpha.
func (r *Report) evaluate() []Verdict {
	out := make([]Verdict, 0, len(r.Options.Thresholds))
	for _, t := range r.Options.Thresholds {
		out = append(out, r.judge(t))
	}
	return out
}

func (r *Report) judge(t Threshold) Verdict {
	v := Verdict{Threshold: t}
	m, ok := r.Row(t.Metric, t.Stat)
	if !ok {
		v.Status, v.Reason = Missing, r.missingReason(t)
		return v
	}
	v.ErrorPct = m.ErrorPct
	switch {
	case m.ErrorPct != nil && math.Abs(*m.ErrorPct) <= t.MaxPct:
		v.Status, v.Reason = Pass, fmt.Sprintf("|%s| ≤ %g%%", fmtPct(m.ErrorPct), t.MaxPct)
	case !m.Significant:
		v.Status, v.Reason = NotSignificant, fmt.Sprintf("%s beyond ±%g%% but p = %.3f > α = %g: within run-to-run noise",
			fmtPct(m.ErrorPct), t.MaxPct, m.Test.P, r.Options.Alpha)
	case m.ErrorPct == nil && m.Test == nil:
		v.Status, v.Reason = Breach, "reference is 0 and candidate is not: unbounded relative error"
	case m.ErrorPct == nil:
		v.Status, v.Reason = Breach, fmt.Sprintf("reference median is 0 and candidate median is not; p = %.3f", m.Test.P)
	case m.Test == nil:
		v.Status, v.Reason = Breach, fmt.Sprintf("|%s| > %g%%", fmtPct(m.ErrorPct), t.MaxPct)
	default:
		v.Status, v.Reason = Breach, fmt.Sprintf("|%s| > %g%%, p = %.3f ≤ α = %g", fmtPct(m.ErrorPct), t.MaxPct,
			m.Test.P, r.Options.Alpha)
	}
	return v
}

func (r *Report) missingReason(t Threshold) string {
	switch {
	case t.Metric == CapacityField:
		return "capacity is compared between two load-sweep directories (sweep_summary.json with kind load_sweep)"
	case !r.Paired():
		return t.Field() + " is not in every run of both sides"
	case slices.Contains(r.OnlyInReference, t.Metric):
		return t.Metric + " is missing from the candidate"
	case slices.Contains(r.OnlyInCandidate, t.Metric):
		return t.Metric + " is missing from the reference"
	}
	return t.Field() + " is not on both sides"
}

// verdictSummary counts verdicts by status: "1 breach, 0 missing, 5 pass",
// with the verdicts within noise ("~") when a side has several runs.
func verdictSummary(r *Report) string {
	n := map[string]int{}
	for _, v := range r.Verdicts {
		n[v.Status]++
	}
	if r.Paired() {
		return fmt.Sprintf("%d breach, %d missing, %d pass", n[Breach], n[Missing], n[Pass])
	}
	return fmt.Sprintf("%d breach, %d missing, %d within noise (~), %d pass", n[Breach], n[Missing], n[NotSignificant], n[Pass])
}

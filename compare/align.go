package compare

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/simbench/simbench/results"
)

// statOrder is the order of statistics in every output: AIPerf's headline
// statistics first, then the percentiles, then the informational ones.
// p99.9 exists only for the token-gap figures computed from records.
var statOrder = []string{"avg", "min", "max", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "p99.9", "std", "count", "sum"}

// informational statistics are shown but never gated or ranked: they say how
// much data there was, not how fast it went.
var informational = map[string]bool{"count": true, "sum": true}

// skippedMetrics are run-level values that differ between any two runs by
// construction (wall-clock timestamps), so comparing them is meaningless.
var skippedMetrics = map[string]bool{"min_request_timestamp": true, "max_response_timestamp": true}

// Row is one statistic of one metric on both sides, in the (first)
// reference run's unit. A side is one run or several: benchstat's model, in
// which a comparison of two single runs is a comparison of two samples of
// one.
type Row struct {
	Metric string
	Stat   string
	Unit   string
	// Reference and Candidate are each side's value: the median of its
	// runs' values (numpy's median), the value itself with one run.
	Reference float64
	Candidate float64
	// Diff is Candidate − Reference.
	Diff float64
	// ErrorPct is (Candidate − Reference)/Reference × 100; 0 when the two
	// are equal (even both zero), nil when the reference is 0 and the
	// candidate is not.
	ErrorPct *float64
	// Informational rows (count, sum) are shown but never gated or ranked.
	Informational bool
	// RefRuns and CandRuns are each side's values, one per run.
	RefRuns, CandRuns Spread
	// Test is the Mann–Whitney U test of the candidate runs' values against
	// the reference runs'; nil with one run per side, where there is no
	// run-to-run noise to test against.
	Test *UTest
	// Significant says the difference counts: always with one run per
	// side, else Test.P ≤ alpha (the sides differ beyond their noise).
	Significant bool
}

// Spread is one statistic over the runs of one side.
type Spread struct {
	Values   []float64 // one per run, in run order
	Min, Max float64
}

// spreadOf spreads values and returns their median (numpy's).
func spreadOf(values []float64) (Spread, float64) {
	s := slices.Clone(values)
	slices.Sort(s)
	return Spread{Values: values, Min: s[0], Max: s[len(s)-1]}, results.PercentileSorted(s, 50)
}

// NewRow builds the row of one run per side and its error.
func NewRow(metric, stat, unit string, ref, cand float64) Row {
	r := Row{Metric: metric, Stat: stat, Unit: unit, Reference: ref, Candidate: cand,
		Diff: cand - ref, Informational: informational[stat], Significant: true,
		RefRuns: Spread{Values: []float64{ref}, Min: ref, Max: ref}, CandRuns: Spread{Values: []float64{cand}, Min: cand, Max: cand}}
	r.ErrorPct = errorPct(ref, cand)
	return r
}

func errorPct(ref, cand float64) *float64 {
	if cand == ref {
		zero := 0.0
		return &zero
	}
	if ref == 0 {
		return nil
	}
	e := (cand - ref) / ref * 100
	if math.IsNaN(e) || math.IsInf(e, 0) {
		return nil
	}
	return &e
}

// Alignment is the field-for-field comparison of two profiles.
type Alignment struct {
	Rows            []Row
	OnlyInReference []string
	OnlyInCandidate []string
	Warnings        []Warning
}

// Align compares every statistic of every metric present in both profiles.
// Candidate values are converted into the reference's unit; a metric whose
// units measure different things is not compared and gets a warning.
func Align(ref, cand *results.Profile) Alignment {
	var a Alignment
	skipped := map[string]map[string]int{"reference": {}, "candidate": {}}
	for _, rm := range ref.Metrics {
		if skippedMetrics[rm.Tag] {
			continue
		}
		cm, ok := cand.Metric(rm.Tag)
		if !ok {
			a.OnlyInReference = append(a.OnlyInReference, rm.Tag)
			continue
		}
		a.alignMetric(rm, cm, skipped)
	}
	for _, cm := range cand.Metrics {
		if _, ok := ref.Metric(cm.Tag); !ok && !skippedMetrics[cm.Tag] {
			a.OnlyInCandidate = append(a.OnlyInCandidate, cm.Tag)
		}
	}
	a.Warnings = append(a.Warnings, skippedStatsWarnings(skipped)...)
	return a
}

func (a *Alignment) alignMetric(rm, cm results.MetricResult, skipped map[string]map[string]int) {
	conv, err := converter(cm.Unit, rm.Unit)
	if err != nil {
		a.Warnings = append(a.Warnings, warnf("%s not compared: %v", rm.Tag, err))
		return
	}
	if cm.Unit != rm.Unit {
		a.Warnings = append(a.Warnings, warnf("%s: candidate values converted from %s to %s", rm.Tag, unitName(cm.Unit), unitName(rm.Unit)))
	}
	for _, st := range statOrder {
		rv, okR := rm.Stats[st]
		cv, okC := cm.Stats[st]
		switch {
		case okR && okC:
			if st != "count" {
				cv = conv(cv)
			}
			a.Rows = append(a.Rows, NewRow(rm.Tag, st, rm.Unit, rv, cv))
		case okR:
			skipped["reference"][st]++
		case okC:
			skipped["candidate"][st]++
		}
	}
}

func unitName(u string) string {
	if u == "" {
		return `""`
	}
	return u
}

// skippedStatsWarnings summarizes statistics that only one side has (a
// DynoSim report has no p1–p25, a schema-1.0 file no count or sum).
func skippedStatsWarnings(skipped map[string]map[string]int) []Warning {
	var out []Warning
	for _, side := range []string{"reference", "candidate"} {
		m := skipped[side]
		if len(m) == 0 {
			continue
		}
		stats := make([]string, 0, len(m))
		for st, n := range m {
			stats = append(stats, fmt.Sprintf("%s (%d)", st, n))
		}
		slices.SortFunc(stats, func(a, b string) int { return cmp.Compare(statRank(a), statRank(b)) })
		out = append(out, warnf("statistics only in the %s were not compared, with the number of metrics: %s",
			side, strings.Join(stats, ", ")))
	}
	return out
}

// statRank orders "p50 (3)" by its statistic's place in statOrder.
func statRank(s string) int {
	name, _, _ := strings.Cut(s, " ")
	for i, st := range statOrder {
		if st == name {
			return i
		}
	}
	return len(statOrder)
}

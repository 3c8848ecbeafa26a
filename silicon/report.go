package silicon

import (
	"math"
	"slices"
	"strings"

	"github.com/simbench/simbench/results"
)

// Metric is one published figure of a stage: its name and how to read it.
type Metric struct {
	Name string
	Get  func(Figures) *float64
}

// Key is the metric's name in JSON: "TTFT mean" is ttft_mean.
func (m Metric) Key() string { return strings.ReplaceAll(strings.ToLower(m.Name), " ", "_") }

// Family is the metric's family: TTFT, ITL or E2E (its name's first word).
func (m Metric) Family() string { return strings.Fields(m.Name)[0] }

// ReportMetrics are the figures the fidelity table scores (all in ms).
var ReportMetrics = []Metric{
	{"TTFT mean", func(f Figures) *float64 { return f.TTFTMean }},
	{"TTFT p90", func(f Figures) *float64 { return f.TTFTP90 }},
	{"TTFT p99", func(f Figures) *float64 { return f.TTFTP99 }},
	{"ITL mean", func(f Figures) *float64 { return f.ITLMean }},
	{"E2E mean", func(f Figures) *float64 { return f.E2EMean }},
	{"E2E p90", func(f Figures) *float64 { return f.E2EP90 }},
	{"E2E p99", func(f Figures) *float64 { return f.E2EP99 }},
}

// Families are ReportMetrics' families, in order.
func Families() []string {
	var out []string
	for _, m := range ReportMetrics {
		if !slices.Contains(out, m.Family()) {
			out = append(out, m.Family())
		}
	}
	return out
}

// Prediction is one way of predicting every stage: a name and the
// simulated figures, in the stages' order. A stage it does not predict has
// zero Figures.
type Prediction struct {
	Name    string
	Key     string // a short name: the JSON's
	Figures []Figures
}

// errPct is the signed error % of got against real, false when either is
// missing.
func errPct(got, real *float64) (float64, bool) {
	if got == nil || real == nil || !(*real > 0) {
		return 0, false
	}
	e := 100 * (*got - *real) / *real
	return e, !math.IsNaN(e) && !math.IsInf(e, 0)
}

// Median is a median absolute error % over N stages; Value is absent when
// N is 0.
type Median struct {
	Metric string   `json:"metric"`
	Value  *float64 `json:"median,omitempty"`
	N      int      `json:"n"`
}

// absErrors are p's absolute errors % on the metrics mets over the stages
// that publish them and that p predicts.
func absErrors(stages []*Stage, p Prediction, mets []Metric) []float64 {
	var abs []float64
	for _, met := range mets {
		for i, s := range stages {
			if e, ok := errPct(met.Get(p.Figures[i]), met.Get(s.Actual)); ok {
				abs = append(abs, math.Abs(e))
			}
		}
	}
	return abs
}

// medianOf is the median of v (numpy's, as every other statistic of the
// project) named name.
func medianOf(name string, v []float64) Median {
	m := Median{Metric: name, N: len(v)}
	if len(v) > 0 {
		slices.Sort(v)
		x := results.PercentileSorted(v, 50)
		m.Value = &x
	}
	return m
}

// MedianAbsErrors is each metric's median absolute error % of p over the
// stages that publish it.
func MedianAbsErrors(stages []*Stage, p Prediction) []Median {
	out := make([]Median, len(ReportMetrics))
	for m, met := range ReportMetrics {
		out[m] = medianOf(met.Key(), absErrors(stages, p, []Metric{met}))
	}
	return out
}

// FamilyMedians is each metric family's median absolute error % of p: the
// errors of its mean and percentiles over every stage, pooled.
func FamilyMedians(stages []*Stage, p Prediction) []Median {
	var out []Median
	for _, fam := range Families() {
		mets := slices.DeleteFunc(slices.Clone(ReportMetrics), func(m Metric) bool { return m.Family() != fam })
		out = append(out, medianOf(strings.ToLower(fam), absErrors(stages, p, mets)))
	}
	return out
}

// Spreadless is the reference a percentile's error is read against: every
// stage's measured means as its figures, and each percentile equal to its
// mean (every request alike). No simulator: a model exact on every mean
// but without the measured spread of TTFT and E2E around it scores this
// on the percentiles, so it tells how much of a percentile's error is
// the spread around the mean.
func Spreadless(stages []*Stage) Prediction {
	p := Prediction{Name: "every mean exact, no spread (reference, not a prediction)", Key: "spreadless", Figures: make([]Figures, len(stages))}
	for i, s := range stages {
		a := s.Actual
		p.Figures[i] = Figures{TTFTMean: a.TTFTMean, TTFTP90: a.TTFTMean, TTFTP99: a.TTFTMean,
			ITLMean: a.ITLMean, E2EMean: a.E2EMean, E2EP90: a.E2EMean, E2EP99: a.E2EMean}
	}
	return p
}

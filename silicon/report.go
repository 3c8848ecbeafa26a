package silicon

import (
	"fmt"
	"io"
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

// ReportMetrics are the figures the fidelity table scores.
var ReportMetrics = []Metric{
	{"TTFT mean", func(f Figures) *float64 { return f.TTFTMean }},
	{"TTFT p90", func(f Figures) *float64 { return f.TTFTP90 }},
	{"TTFT p99", func(f Figures) *float64 { return f.TTFTP99 }},
	{"ITL mean", func(f Figures) *float64 { return f.ITLMean }},
	{"E2E mean", func(f Figures) *float64 { return f.E2EMean }},
	{"E2E p90", func(f Figures) *float64 { return f.E2EP90 }},
	{"E2E p99", func(f Figures) *float64 { return f.E2EP99 }},
}

// Prediction is one way of predicting every stage: a name and the
// simulated figures, in the stages' order.
type Prediction struct {
	Name    string
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

// MedianAbsErrors is each metric's median absolute error % of p over the
// stages that publish it.
func MedianAbsErrors(stages []*Stage, p Prediction) []float64 {
	out := make([]float64, len(ReportMetrics))
	for m, met := range ReportMetrics {
		var abs []float64
		for i, s := range stages {
			if e, ok := errPct(met.Get(p.Figures[i]), met.Get(s.Actual)); ok {
				abs = append(abs, math.Abs(e))
			}
		}
		out[m] = median(abs)
	}
	return out
}

// median is numpy's, as every other statistic of the project.
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	return results.PercentileSorted(v, 50)
}

// WriteMarkdown writes the fidelity tables: the median absolute error of
// each prediction per metric, then every stage's signed errors.
func WriteMarkdown(w io.Writer, stages []*Stage, preds []Prediction) error {
	var b strings.Builder
	fmt.Fprintf(&b, "## Median absolute error over %d stages of %d deployments\n\n", len(stages), len(Deployments(stages)))
	header(&b, "prediction")
	for _, p := range preds {
		b.WriteString("| " + p.Name)
		for _, e := range MedianAbsErrors(stages, p) {
			fmt.Fprintf(&b, " | %.1f %%", e)
		}
		b.WriteString(" |\n")
	}
	for _, p := range preds {
		fmt.Fprintf(&b, "\n## %s: signed error per stage, %% ((sim − real)/real)\n\n", p.Name)
		header(&b, "stage")
		for i, s := range stages {
			b.WriteString("| " + s.ID)
			for _, met := range ReportMetrics {
				if e, ok := errPct(met.Get(p.Figures[i]), met.Get(s.Actual)); ok {
					fmt.Fprintf(&b, " | %+.1f", e)
				} else {
					b.WriteString(" | –")
				}
			}
			b.WriteString(" |\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func header(b *strings.Builder, first string) {
	b.WriteString("| " + first)
	for _, m := range ReportMetrics {
		b.WriteString(" | " + m.Name)
	}
	b.WriteString(" |\n|---")
	for range ReportMetrics {
		b.WriteString("|---:")
	}
	b.WriteString("|\n")
}

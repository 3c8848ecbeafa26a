package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/simbench/simbench/compare"
	"github.com/simbench/simbench/plots"
	"github.com/simbench/simbench/results"
)

// scatterTags are the per-request metrics drawn as reference-vs-candidate
// scatter plots when the requests are joined.
var scatterTags = []string{results.TagTTFT, results.TagITL, results.TagRequestLatency}

// writeComparePlots draws the error chart and, with one run per side, both
// runs' figures, the stacked TTFT breakdown and the per-request scatter
// plots.
func writeComparePlots(dir string, rep *compare.Report) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	w := &plotWriter{dir: dir}
	if !rep.Paired() {
		w.add("error_pct.png", errorChart(rep))
		return w.run()
	}
	addRunPlots(w, []*compare.Digest{rep.RefDigest, rep.CandDigest}, []*compare.Stalls{rep.RefStalls, rep.CandStalls})
	w.add("error_pct.png", errorChart(rep))
	ref, cand := rep.Reference().Name, rep.Candidate().Name
	if b := rep.TTFTBreakdown; b != nil {
		stages, stacks := breakdownBars(rep)
		t := fmt.Sprintf("%s vs %s: server-side TTFT breakdown (stage means)", cand, ref)
		w.add("ttft_breakdown.png", func() (plots.Figure, error) { return plots.TTFTBreakdown(t, stages, stacks...) })
	}
	if j := rep.PerRequest; j != nil {
		for _, m := range j.Metrics {
			if !slices.Contains(scatterTags, m.Metric) {
				continue
			}
			t := fmt.Sprintf("%s per request (%d pairs, MAPE %s, grade %s)", m.Metric, m.N, pctOrNA(m.MAPEPct), m.Grade)
			w.add("scatter_"+m.Metric+".png", func() (plots.Figure, error) {
				return plots.Scatter(t, m.Metric+" ("+m.Unit+")", m.Reference, m.Candidate, ref, cand)
			})
		}
	}
	return w.run()
}

// errorChart is the error bar chart of the headline and gated statistics;
// with several runs per side the error of the medians, the bars of runs
// that do not differ beyond noise labelled "~".
func errorChart(rep *compare.Report) func() (plots.Figure, error) {
	var bars []plots.ErrorBar
	for _, r := range rep.ChartRows() {
		label := r.Metric + " " + r.Stat
		if !r.Significant {
			label += " ~"
		}
		bars = append(bars, plots.ErrorBar{Label: label, ErrorPct: *r.ErrorPct, BoundPct: r.BoundPct})
	}
	title := fmt.Sprintf("%s vs %s: error per statistic", rep.Candidate().Name, rep.Reference().Name)
	if !rep.Paired() {
		title = fmt.Sprintf("%d candidate vs %d reference runs: error of the medians (~ within noise)",
			len(rep.Candidates), len(rep.References))
	}
	return func() (plots.Figure, error) { return plots.Errors(title, bars) }
}

// breakdownBars turns the TTFT breakdown section into the stacked bars of
// both runs: the section's stages in its order, 0 ms where a run lacks
// the stage.
func breakdownBars(rep *compare.Report) ([]string, []plots.BreakdownBar) {
	b := rep.TTFTBreakdown
	ref := plots.BreakdownBar{Name: "reference: " + rep.Reference().Name, TTFTMs: b.Reference.TTFTMeanMs}
	cand := plots.BreakdownBar{Name: "candidate: " + rep.Candidate().Name, TTFTMs: b.Candidate.TTFTMeanMs}
	var stages []string
	for _, row := range b.Stages {
		stages = append(stages, compare.BreakdownStageName(row.Stage, row.Phase))
		ref.StageMs = append(ref.StageMs, valueOrZero(row.Reference))
		cand.StageMs = append(cand.StageMs, valueOrZero(row.Candidate))
	}
	return stages, []plots.BreakdownBar{ref, cand}
}

func valueOrZero(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

func pctOrNA(p *float64) string {
	if p == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.1f%%", *p)
}

// plotLinks makes the plot paths relative to the report file, so the
// markdown's image links work where the report is written.
func plotLinks(paths []string, output string) []string {
	if output == "" {
		return paths
	}
	out := make([]string, len(paths))
	for i, p := range paths {
		rel, err := filepath.Rel(filepath.Dir(output), p)
		if err != nil {
			rel = p
		}
		out[i] = filepath.ToSlash(rel)
	}
	return out
}

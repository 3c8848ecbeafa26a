package figures

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"

	"github.com/simbench/simbench/compare"
	"github.com/simbench/simbench/plots"
	"github.com/simbench/simbench/results"
)

// cdfMetrics are the per-request metrics drawn as CDFs.
var cdfMetrics = []string{results.TagTTFT, results.TagITL, results.TagRequestLatency}

// label is a metric's axis label: AIPerf's header and unit, "Time to
// First Token (ms)".
func label(tag string) string {
	d, _ := results.Lookup(tag)
	return compare.MetricTitle(tag, d.Unit)
}

// Run draws the figures of one run into dir and returns the files
// written.
func Run(dir string, d *compare.Digest) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	w := &Writer{Dir: dir}
	addRunPlots(w, []*compare.Digest{d}, []*compare.Stalls{d.Stalls()})
	return w.Run()
}

// addRunPlots adds the figures of one or two runs: CDF overlays, token-gap
// timelines and throughput over time.
func addRunPlots(w *Writer, ds []*compare.Digest, stalls []*compare.Stalls) {
	for _, tag := range cdfMetrics {
		var ss []plots.Series
		for _, d := range ds {
			if d != nil {
				ss = append(ss, plots.Series{Name: d.Name, Values: d.Values(tag)})
			}
		}
		w.Add("cdf_"+tag+".png", func() (plots.Figure, error) {
			return plots.Distribution("CDF of "+label(tag), label(tag), ss...)
		})
	}
	var gaps []plots.Series
	var tls []plots.GapTimeline
	var tps []plots.Throughput
	var gantts []plots.GanttRun
	for i, d := range ds {
		if d == nil {
			continue
		}
		gaps = append(gaps, plots.Series{Name: d.Name, Values: d.TokenGaps})
		tl, tp := timelineOf(d, stalls[i])
		tls, tps = append(tls, tl), append(tps, tp)
		gantts = append(gantts, ganttOf(d, ganttSessions))
	}
	w.Add("session_gantt.png", func() (plots.Figure, error) {
		return plots.Gantt(fmt.Sprintf("Sessions (the first %d of more than one request)", ganttSessions), gantts...)
	})
	w.Add("cdf_token_gap.png", func() (plots.Figure, error) {
		return plots.Distribution("CDF of pooled token gaps", label(results.TagTokenGap), gaps...)
	})
	w.Add("token_gap_timeline.png", func() (plots.Figure, error) { return plots.Timelines("Token gaps over time", tls...) })
	w.Add("output_throughput.png", func() (plots.Figure, error) {
		return plots.ThroughputOverTime("Output token throughput over time", tps...)
	})
}

// ganttSessions is how many sessions the Gantt chart shows.
const ganttSessions = 6

// ganttOf returns the first n sessions of d (by first start) that have
// more than one request; a session is the requests sharing an
// x_correlation_id.
func ganttOf(d *compare.Digest, n int) plots.GanttRun {
	run := plots.GanttRun{Name: d.Name}
	byID := map[string]int{}
	var sessions []plots.GanttSession
	for i := range d.Requests {
		r := &d.Requests[i]
		lat, ok := r.Value(results.TagRequestLatency)
		if r.Correlation == "" || !ok {
			continue
		}
		k, seen := byID[r.Correlation]
		if !seen {
			k = len(sessions)
			byID[r.Correlation] = k
			sessions = append(sessions, plots.GanttSession{Name: r.Correlation})
		}
		start := float64(r.StartNs-d.OriginNs) / 1e9
		sessions[k].Turns = append(sessions[k].Turns, plots.GanttTurn{Turn: int(r.Turn), StartS: start, EndS: start + lat/1e3})
	}
	first := func(s plots.GanttSession) float64 {
		return slices.MinFunc(s.Turns, func(a, b plots.GanttTurn) int { return cmp.Compare(a.StartS, b.StartS) }).StartS
	}
	slices.SortStableFunc(sessions, func(a, b plots.GanttSession) int { return cmp.Compare(first(a), first(b)) })
	for _, s := range sessions {
		if len(s.Turns) > 1 && len(run.Sessions) < n {
			run.Sessions = append(run.Sessions, s)
		}
	}
	return run
}

func timelineOf(d *compare.Digest, s *compare.Stalls) (plots.GapTimeline, plots.Throughput) {
	tl := plots.GapTimeline{Name: d.Name}
	tp := plots.Throughput{Name: d.Name}
	for _, sec := range d.Seconds() {
		tl.Seconds = append(tl.Seconds, sec.StartS)
		tl.MeanMs = append(tl.MeanMs, sec.GapMeanMs)
		tl.MaxMs = append(tl.MaxMs, sec.GapMaxMs)
		tp.Seconds = append(tp.Seconds, sec.StartS)
		tp.TokensPerS = append(tp.TokensPerS, sec.TokensPerS)
		tp.EndS = sec.StartS + sec.SpanS
	}
	if s != nil {
		tl.ThresholdMs = s.ThresholdMs
		for _, e := range s.Events {
			tl.StallAtS = append(tl.StallAtS, e.AtS)
			tl.StallGapMs = append(tl.StallGapMs, e.GapMs)
		}
	}
	return tl, tp
}

// Writer collects figures and renders them concurrently, at most
// GOMAXPROCS at a time (rasterizing and PNG encoding are CPU-bound), into
// pre-allocated slots so the files are listed in the order they were added.
// A figure with nothing to show (plots.ErrNoData) is skipped.
type Writer struct {
	Dir  string // where the PNGs go
	jobs []job
}

type job struct {
	name  string
	build func() (plots.Figure, error)
}

// Add queues a figure: build makes it, Run saves it as Dir/name.
func (w *Writer) Add(name string, build func() (plots.Figure, error)) {
	w.jobs = append(w.jobs, job{name, build})
}

// Run renders every figure and returns the files written, in order, and
// the first error in that order.
func (w *Writer) Run() ([]string, error) {
	paths := make([]string, len(w.jobs))
	errs := make([]error, len(w.jobs))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, j := range w.jobs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			paths[i], errs[i] = w.render(j)
		}()
	}
	wg.Wait()
	var out []string
	for i, p := range paths {
		if errs[i] != nil {
			return out, errs[i]
		}
		if p != "" {
			out = append(out, p)
		}
	}
	return out, nil
}

func (w *Writer) render(j job) (string, error) {
	f, err := j.build()
	if errors.Is(err, plots.ErrNoData) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("%s: %w", j.name, err)
	}
	path := filepath.Join(w.Dir, j.name)
	if err := plots.SavePNG(path, f); err != nil {
		return "", err
	}
	return path, nil
}

// scatterTags are the per-request metrics drawn as reference-vs-candidate
// scatter plots when the requests are joined.
var scatterTags = []string{results.TagTTFT, results.TagITL, results.TagRequestLatency}

// Compare draws the error chart and, with one run per side, both runs'
// figures, the stacked TTFT breakdown and the per-request scatter
// plots.
func Compare(dir string, rep *compare.Report) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	w := &Writer{Dir: dir}
	if !rep.Paired() {
		w.Add("error_pct.png", errorChart(rep))
		return w.Run()
	}
	addRunPlots(w, []*compare.Digest{rep.RefDigest, rep.CandDigest}, []*compare.Stalls{rep.RefStalls, rep.CandStalls})
	w.Add("error_pct.png", errorChart(rep))
	ref, cand := rep.Reference().Name, rep.Candidate().Name
	if b := rep.TTFTBreakdown; b != nil {
		stages, stacks := breakdownBars(rep)
		t := fmt.Sprintf("%s vs %s: server-side TTFT breakdown (stage means)", cand, ref)
		w.Add("ttft_breakdown.png", func() (plots.Figure, error) { return plots.TTFTBreakdown(t, stages, stacks...) })
	}
	if j := rep.PerRequest; j != nil {
		for _, m := range j.Metrics {
			if !slices.Contains(scatterTags, m.Metric) {
				continue
			}
			t := fmt.Sprintf("%s per request (%d pairs, MAPE %s, grade %s)", compare.MetricTitle(m.Metric, ""), m.N, pctOrNA(m.MAPEPct), m.Grade)
			w.Add("scatter_"+m.Metric+".png", func() (plots.Figure, error) {
				return plots.Scatter(t, compare.MetricTitle(m.Metric, m.Unit), m.Reference, m.Candidate, ref, cand)
			})
		}
	}
	return w.Run()
}

// errorChart is the error bar chart of the headline and gated statistics;
// with several runs per side the error of the medians, the bars of runs
// that do not differ beyond noise labelled "~".
func errorChart(rep *compare.Report) func() (plots.Figure, error) {
	var bars []plots.ErrorBar
	for _, r := range rep.ChartRows() {
		label := compare.MetricTitle(r.Metric, "") + " " + compare.StatLabel(r.Stat)
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

// Links makes the plot paths relative to the report file, so the
// markdown's image links work where the report is written.
func Links(paths []string, output string) []string {
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

// Names of the load-sweep comparison's figures.
const (
	SweepTradeoffsName  = "sweep_throughput_latency.png"
	SweepAttainmentName = "sweep_attainment.png"
)

// CompareSweeps draws the load-sweep comparison: output token throughput
// against TTFT p99 and against ITL p99 of every point of both sweeps (each
// side's Pareto front filled), and both sweeps' SLO attainment against the
// load with the required attainment and the capacity estimates. The
// figures come from the sweeps' summaries, so the loads only one side ran
// are drawn too.
func CompareSweeps(dir string, rep *compare.SweepReport) ([]string, error) {
	title := fmt.Sprintf("%s vs %s by %s", rep.Candidate.Name, rep.Reference.Name, rep.Load)
	return drawSweeps(dir, title, []string{"reference: " + rep.Reference.Name, "candidate: " + rep.Candidate.Name},
		rep.Reference, rep.Candidate)
}

// Sweep draws one load sweep as CompareSweeps draws two: throughput
// against latency, and SLO attainment against the load (when the sweep
// has SLOs).
func Sweep(dir string, s compare.SweepSide) ([]string, error) {
	return drawSweeps(dir, fmt.Sprintf("%s by %s", s.Name, s.Summary.Load), []string{s.Name}, s)
}

// drawSweeps draws the trade-off and attainment figures of the sweeps,
// each labelled; the first sweep's SLOs and attainment target are drawn.
func drawSweeps(dir, title string, labels []string, sides ...compare.SweepSide) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	w := &Writer{Dir: dir}
	ttft, itl, attain := make([]plots.SweepSide, len(sides)), make([]plots.SweepSide, len(sides)), make([]plots.AttainmentSide, len(sides))
	for i, s := range sides {
		ttft[i], itl[i] = plots.SweepSide{Name: labels[i]}, plots.SweepSide{Name: labels[i]}
		attain[i] = plots.AttainmentSide{Name: labels[i]}
		if c := s.Summary.Capacity; c != nil {
			attain[i].Capacity = c.Estimate
		}
		for _, p := range s.Summary.Points {
			if p.TTFTP99 != nil {
				ttft[i].Points = append(ttft[i].Points, plots.SweepPoint{Load: p.Value(), X: *p.TTFTP99, Y: p.OutputTokenThroughput})
			}
			if p.ITLP99 != nil {
				itl[i].Points = append(itl[i].Points, plots.SweepPoint{Load: p.Value(), X: *p.ITLP99, Y: p.OutputTokenThroughput})
			}
			if p.Attainment != nil {
				attain[i].Loads = append(attain[i].Loads, p.Value())
				attain[i].Attainment = append(attain[i].Attainment, *p.Attainment)
			}
		}
	}
	throughput := label(results.TagOutputThroughput)
	w.Add(SweepTradeoffsName, func() (plots.Figure, error) {
		return plots.SweepTradeoffs(
			plots.SweepPanel{Title: title + ": output token throughput vs TTFT p99", XLabel: compare.MetricTitle(results.TagTTFT, "") + " p99 (ms)",
				YLabel: throughput, Sides: ttft},
			plots.SweepPanel{Title: title + ": output token throughput vs ITL p99", XLabel: compare.MetricTitle(results.TagITL, "") + " p99 (ms)",
				YLabel: throughput, Sides: itl})
	})
	first := sides[0].Summary
	w.Add(SweepAttainmentName, func() (plots.Figure, error) {
		t := fmt.Sprintf("%s: SLO attainment (%s)", title, first.Goodput)
		return plots.Attainment(t, string(first.Load), first.AttainmentTarget, attain...)
	})
	return w.Run()
}

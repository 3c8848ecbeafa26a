package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/simbench/simbench/compare"
)

// Artifact names in the output directory.
const (
	compareJSONName  = "compare.json"
	compareMDName    = "compare.md"
	compareTextName  = "compare.txt"
	junitName        = "junit.xml"
	comparePlotsName = "plots"
)

// outcome is what the comparison step leaves for the summary and the
// history.
type outcome struct {
	verdicts verdicter // *compare.Report or *compare.MultiReport
	list     []compare.Verdict
	chart    []compare.ChartRow // the headline statistics and every gated one
	pValues  map[string]float64 // repeated runs: Mann–Whitney p per chart field
	files    []string
	plots    int
}

// compareArms compares the silicon runs (reference) with the simulated
// ones (candidate) and writes the reports.
func (v *validation) compareArms() (*outcome, error) {
	opts := v.p.Compare.options()
	v.logf("comparing %s with %s", v.armPath(armSim), v.armPath(armReal))
	if v.p.Repeat <= 1 {
		return v.compareSingle(opts)
	}
	return v.compareMulti(opts)
}

func (v *validation) armPath(arm int) string { return filepath.Join(v.out, armNames[arm]) }

func (v *validation) compareSingle(opts compare.MultiOptions) (*outcome, error) {
	ref, err := compare.Open(v.armPath(armReal))
	if err != nil {
		return nil, err
	}
	cand, err := compare.Open(v.armPath(armSim))
	if err != nil {
		return nil, err
	}
	rep, err := compare.Compare(ref, cand, compare.Options{Stall: opts.Stall, Thresholds: opts.Thresholds})
	if err != nil {
		return nil, err
	}
	var plots []string
	if v.p.Compare.wantPlots() {
		if plots, err = writeComparePlots(filepath.Join(v.out, comparePlotsName), rep); err != nil {
			return nil, err
		}
	}
	links := plotLinks(plots, filepath.Join(v.out, compareMDName))
	res := &outcome{verdicts: rep, list: rep.Verdicts, chart: rep.ChartRows(), plots: len(plots)}
	return res, v.writeReports(res, map[string]func(io.Writer) error{
		compareJSONName: func(w io.Writer) error { return compare.WriteJSON(w, rep) },
		compareMDName:   func(w io.Writer) error { return compare.WriteMarkdown(w, rep, links) },
		compareTextName: func(w io.Writer) error { return compare.WriteText(w, rep) },
		junitName:       func(w io.Writer) error { return compare.WriteJUnit(w, rep) },
	})
}

func (v *validation) compareMulti(opts compare.MultiOptions) (*outcome, error) {
	var refs, cands []string // exactly this validation's runs, not older ones left in OUTPUT
	for r := range v.p.Repeat {
		refs = append(refs, v.runDir(scheduledRun{armReal, r}))
		cands = append(cands, v.runDir(scheduledRun{armSim, r}))
	}
	rep, err := compareRunLists(refs, cands, opts)
	if err != nil {
		return nil, err
	}
	var plots []string
	if v.p.Compare.wantPlots() {
		if plots, err = writeMultiPlots(filepath.Join(v.out, comparePlotsName), rep); err != nil {
			return nil, err
		}
	}
	links := plotLinks(plots, filepath.Join(v.out, compareMDName))
	res := &outcome{verdicts: rep, list: rep.Verdicts, chart: rep.ChartRows(), plots: len(plots), pValues: map[string]float64{}}
	for _, c := range res.chart {
		if m, ok := rep.Row(c.Metric, c.Stat); ok {
			res.pValues[c.Metric+"."+c.Stat] = m.Test.P
		}
	}
	return res, v.writeReports(res, map[string]func(io.Writer) error{
		compareJSONName: func(w io.Writer) error { return compare.WriteMultiJSON(w, rep) },
		compareMDName:   func(w io.Writer) error { return compare.WriteMultiMarkdown(w, rep, links) },
		compareTextName: func(w io.Writer) error { return compare.WriteMultiText(w, rep) },
		junitName:       func(w io.Writer) error { return compare.WriteMultiJUnit(w, rep) },
	})
}

// writeReports writes every report file, in a fixed order.
func (v *validation) writeReports(res *outcome, writers map[string]func(io.Writer) error) error {
	for _, name := range []string{compareJSONName, compareMDName, compareTextName, junitName} {
		path := filepath.Join(v.out, name)
		if err := writeArtifact(path, writers[name]); err != nil {
			return err
		}
		res.files = append(res.files, path)
	}
	return nil
}

func writeArtifact(path string, write func(io.Writer) error) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	if err := write(f); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// verdictName is the history's one-word verdict.
func verdictName(vs []compare.Verdict) string {
	if len(vs) == 0 {
		return "ungated"
	}
	name := "pass"
	for _, v := range vs {
		switch v.Status {
		case compare.Missing:
			return "incomplete"
		case compare.Breach:
			name = "breach"
		}
	}
	return name
}

// printSummary prints the verdicts, the files and the history line.
func (v *validation) printSummary(res *outcome, e historyEntry) error {
	ew := &lineWriter{w: v.stdout}
	ew.printf("verdict: %s (%s)\n", e.Verdict, verdictCounts(res.list))
	for _, vd := range res.list {
		ew.printf("  %-8s %-32s %9s  bound ±%g%%  %s\n", strings.ToUpper(vd.Status), vd.Field(), pctText(vd.ErrorPct), vd.MaxPct, vd.Reason)
	}
	for _, f := range res.files {
		ew.printf("wrote %s\n", f)
	}
	if res.plots > 0 {
		ew.printf("wrote %d plots into %s\n", res.plots, filepath.Join(v.out, comparePlotsName))
	}
	ew.printf("history: appended to %s\n", v.history)
	return ew.err
}

func verdictCounts(vs []compare.Verdict) string {
	n := map[string]int{}
	for _, v := range vs {
		n[v.Status]++
	}
	return fmt.Sprintf("%d breach, %d missing, %d within noise, %d pass", n[compare.Breach], n[compare.Missing],
		n[compare.NotSignificant], n[compare.Pass])
}

func pctText(p *float64) string {
	if p == nil {
		return "n/a"
	}
	return fmt.Sprintf("%+.2f%%", *p)
}

// lineWriter keeps the first write error.
type lineWriter struct {
	w   io.Writer
	err error
}

func (l *lineWriter) printf(format string, args ...any) {
	if l.err == nil {
		_, l.err = fmt.Fprintf(l.w, format, args...)
	}
}

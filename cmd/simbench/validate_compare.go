package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/simbench/simbench/compare"
	"github.com/simbench/simbench/figures"
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
	verdicts *compare.Report
	list     []compare.Verdict
	chart    []compare.ChartRow // the headline statistics and every gated one
	pValues  map[string]float64 // repeated runs: Mann–Whitney p per chart field
	files    []string
	plots    int
}

// compareArms compares the silicon runs (reference) with the simulated
// ones (candidate) and writes the reports.
func (v *validation) compareArms() (*outcome, error) {
	v.logf("comparing %s with %s", v.armPath(armSim), v.armPath(armReal))
	refs, cands := []string{v.armPath(armReal)}, []string{v.armPath(armSim)}
	if v.p.Repeat > 1 { // exactly this validation's runs, not older ones left in OUTPUT
		refs, cands = nil, nil
		for r := range v.p.Repeat {
			refs = append(refs, v.runDir(scheduledRun{armReal, r}))
			cands = append(cands, v.runDir(scheduledRun{armSim, r}))
		}
	}
	rep, err := compareRuns(refs, cands, v.p.Compare.options())
	if err != nil {
		return nil, err
	}
	var plots []string
	if v.p.Compare.wantPlots() {
		if plots, err = figures.Compare(filepath.Join(v.out, comparePlotsName), rep); err != nil {
			return nil, err
		}
	}
	links := figures.Links(plots, filepath.Join(v.out, compareMDName))
	res := &outcome{verdicts: rep, list: rep.Verdicts, chart: rep.ChartRows(), plots: len(plots)}
	if !rep.Paired() {
		res.pValues = map[string]float64{}
		for _, c := range res.chart {
			res.pValues[c.Metric+"."+c.Stat] = c.Test.P
		}
	}
	return res, v.writeReports(res, map[string]func(io.Writer) error{
		compareJSONName: func(w io.Writer) error { return compare.WriteJSON(w, rep) },
		compareMDName:   func(w io.Writer) error { return compare.WriteMarkdown(w, rep, links) },
		compareTextName: func(w io.Writer) error { return compare.WriteText(w, rep) },
		junitName:       func(w io.Writer) error { return compare.WriteJUnit(w, rep) },
	})
}

func (v *validation) armPath(arm int) string { return filepath.Join(v.out, armNames[arm]) }

// compareRuns opens the runs of both sides and compares them.
func compareRuns(refs, cands []string, opts compare.Options) (*compare.Report, error) {
	a, err := compare.OpenRuns(refs)
	if err != nil {
		return nil, err
	}
	b, err := compare.OpenRuns(cands)
	if err != nil {
		return nil, err
	}
	return compare.Compare(a, b, opts)
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

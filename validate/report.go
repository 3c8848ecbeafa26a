package validate

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/simbench/simbench/compare"
	"github.com/simbench/simbench/fidelity"
	"github.com/simbench/simbench/plots/figures"
	"github.com/simbench/simbench/results"
)

// Artifact names in the output directory.
const (
	CompareJSONName = "compare.json"
	CompareMDName   = "compare.md"
	CompareTextName = "compare.txt"
	JUnitName       = "junit.xml"
	// FidelityTextName and FidelityJSONName hold, with repeated runs, the
	// sim error beside the real-vs-real spread of the first two silicon runs
	// (and WriteFidelity's table of a real-engine artifact directory).
	FidelityTextName = "fidelity.txt"
	FidelityJSONName = "fidelity.json"
	PlotsDirName     = "plots"
)

// Outcome is what a validation leaves: the verdicts, the files written
// and the history entry.
type Outcome struct {
	// Entry is the line appended to the history file at HistoryPath.
	Entry       HistoryEntry
	HistoryPath string

	report   *compare.Report      // nil for a load-sweep validation
	sweep    *compare.SweepReport // nil unless the arms were load sweeps
	list     []compare.Verdict
	chart    []compare.ChartRow // the headline statistics and every gated one
	pValues  map[string]float64 // repeated runs: Mann–Whitney p per chart field
	files    []string
	plots    int
	plotsDir string
	inSample string // why the comparison is in-sample; "" when it is held out
}

// compareArms compares the silicon runs (reference) with the simulated
// ones (candidate) and writes the reports.
func (v *validation) compareArms() (*Outcome, error) {
	v.logf("comparing %s with %s", v.armPath(armSim), v.armPath(armReal))
	refs, cands := []string{v.armPath(armReal)}, []string{v.armPath(armSim)}
	if v.p.Repeat > 1 { // exactly this validation's runs, not older ones left in OUTPUT
		refs, cands = nil, nil
		for r := range v.p.Repeat {
			refs = append(refs, v.runDir(scheduledRun{armReal, r}))
			cands = append(cands, v.runDir(scheduledRun{armSim, r}))
		}
	}
	rep, err := compareRuns(refs, cands, v.p.Compare.Options())
	if err != nil {
		return nil, err
	}
	inSample := v.p.inSample()
	rep.Warnings = markInSample(rep.Warnings, inSample)
	var plots []string
	if v.p.Compare.WantPlots() {
		if plots, err = figures.Compare(filepath.Join(v.out, PlotsDirName), rep); err != nil {
			return nil, err
		}
	}
	links := figures.Links(plots, filepath.Join(v.out, CompareMDName))
	res := &Outcome{report: rep, list: rep.Verdicts, chart: rep.ChartRows(), plots: len(plots),
		plotsDir: filepath.Join(v.out, PlotsDirName), inSample: inSample}
	if !rep.Paired() {
		res.pValues = map[string]float64{}
		for _, c := range res.chart {
			res.pValues[c.Metric+"."+c.Stat] = c.Test.P
		}
	}
	files := map[string]func(io.Writer) error{
		CompareJSONName: func(w io.Writer) error { return compare.WriteJSON(w, rep) },
		CompareMDName:   withBanner(inSample, true, func(w io.Writer) error { return compare.WriteMarkdown(w, rep, links) }),
		CompareTextName: withBanner(inSample, false, func(w io.Writer) error { return compare.WriteText(w, rep) }),
		JUnitName:       func(w io.Writer) error { return compare.WriteJUnit(w, rep) },
	}
	if len(refs) > 1 {
		tab, err := noiseTable(refs, cands)
		if err != nil {
			return nil, err
		}
		files[FidelityTextName] = tab.WriteText
		files[FidelityJSONName] = tab.WriteJSON
		for _, s := range tab.Summaries {
			v.logf("sim error beside silicon's own spread: median |error| %.2f %%, median |real-vs-real| %.2f %% (see %s)",
				s.MedianAbsPct, tab.SpreadMedianPct, FidelityTextName)
		}
	}
	return res, v.writeReports(res, files)
}

// noiseTable puts the simulator's error beside silicon's own run-to-run
// spread: the first silicon run against the second, and the median of the
// simulated runs (their seeds) against the first silicon run, field by
// field.
func noiseTable(refs, cands []string) (*fidelity.Table, error) {
	var profs []*results.Profile
	for _, dir := range append([]string{refs[0], refs[1]}, cands...) {
		run, err := results.LoadRun(dir)
		if err != nil {
			return nil, err
		}
		profs = append(profs, run.Profile)
	}
	return fidelity.Build([]fidelity.Workload{{Name: "pipeline", Real: profs[0], Repeat: profs[1],
		Candidates: []fidelity.Candidate{{Name: "sim", Runs: profs[2:]}}}}, nil), nil
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
func (v *validation) writeReports(res *Outcome, writers map[string]func(io.Writer) error) error {
	for _, name := range []string{CompareJSONName, CompareMDName, CompareTextName, JUnitName, FidelityTextName, FidelityJSONName} {
		if writers[name] == nil {
			continue
		}
		path := filepath.Join(v.out, name)
		if err := results.WriteFile(path, writers[name]); err != nil {
			return err
		}
		res.files = append(res.files, path)
	}
	return nil
}

// verdictName is the history's one-word verdict.
func verdictName(vs []compare.Verdict) string { return compare.VerdictName(vs) }

// WriteSummary prints the verdicts, the files and the history line.
func (o *Outcome) WriteSummary(w io.Writer) error {
	ew := &lineWriter{w: w}
	ew.printf("verdict: %s (%s)\n", o.Entry.Verdict, verdictCounts(o.list))
	if o.inSample != "" {
		ew.printf("  IN-SAMPLE: %s\n", o.inSample)
	}
	for _, vd := range o.list {
		ew.printf("  %-8s %-32s %9s  bound ±%g%%  %s\n", strings.ToUpper(vd.Status), vd.Name(), pctText(vd.ErrorPct), vd.MaxPct, vd.Reason)
	}
	for _, f := range o.files {
		ew.printf("wrote %s\n", f)
	}
	if o.plots > 0 {
		ew.printf("wrote %d plots into %s\n", o.plots, o.plotsDir)
	}
	ew.printf("history: appended to %s\n", o.HistoryPath)
	return ew.err
}

// Report is the comparison of the two arms; nil when they were load
// sweeps (see SweepReport).
func (o *Outcome) Report() *compare.Report { return o.report }

// SweepReport is the comparison of the two load sweeps; nil unless the
// pipeline has a sweep section.
func (o *Outcome) SweepReport() *compare.SweepReport { return o.sweep }

// Breaches returns the verdicts that breached their bound.
func (o *Outcome) Breaches() []compare.Verdict { return compare.VerdictsWith(o.list, compare.Breach) }

// MissingVerdicts returns the verdicts that could not be judged.
func (o *Outcome) MissingVerdicts() []compare.Verdict {
	return compare.VerdictsWith(o.list, compare.Missing)
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

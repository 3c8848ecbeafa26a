package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/simbench/simbench/compare"
	"github.com/simbench/simbench/plots"
	"github.com/simbench/simbench/results"
	"github.com/urfave/cli/v2"
)

// repeatDirPattern names the run directories of repeated runs
// (simbench sim --repeat, simbench validate with repeat: N).
var repeatDirPattern = regexp.MustCompile(`^run_[0-9]{4,}$`)

// repeatDirName is the directory of the i-th (0-based) repeated run.
func repeatDirName(i int) string { return fmt.Sprintf("run_%04d", i+1) }

// runLists expands compare's two arguments into the runs of each side and
// says whether this is a multi-run comparison (more than one run on a side).
func runLists(c *cli.Context) (refs, cands []string, multi bool, err error) {
	if refs, err = expandRuns(c.Args().Get(0)); err != nil {
		return nil, nil, false, err
	}
	if cands, err = expandRuns(c.Args().Get(1)); err != nil {
		return nil, nil, false, err
	}
	if c.String("reference") == "b" {
		refs, cands = cands, refs
	}
	return refs, cands, len(refs) > 1 || len(cands) > 1, nil
}

// expandRuns turns one argument into run paths: a comma-separated list,
// each element a run, or a directory holding only repeated runs
// (run_0001, run_0002, …), which stands for all of them.
func expandRuns(arg string) ([]string, error) {
	var out []string
	for _, p := range strings.Split(arg, ",") {
		if p = strings.TrimSpace(p); p == "" {
			return nil, usagef("run list %q has an empty element", arg)
		}
		runs, err := repeatedRuns(p)
		if err != nil {
			return nil, err
		}
		out = append(out, runs...)
	}
	return out, nil
}

// repeatedRuns lists dir's run_NNNN subdirectories when dir is not a run
// itself; otherwise it returns the path alone.
func repeatedRuns(path string) ([]string, error) {
	st, err := os.Stat(path)
	if err != nil || !st.IsDir() || isRunDir(path) {
		return []string{path}, nil // compare.Open reports what is wrong with it
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	var runs []string
	for _, e := range entries {
		if e.IsDir() && repeatDirPattern.MatchString(e.Name()) {
			runs = append(runs, filepath.Join(path, e.Name()))
		}
	}
	if len(runs) == 0 {
		return []string{path}, nil
	}
	return runs, nil
}

func isRunDir(dir string) bool {
	for _, name := range []string{results.ProfileJSONName, results.RecordsName} {
		if st, err := os.Stat(filepath.Join(dir, name)); err == nil && st.Mode().IsRegular() {
			return true
		}
	}
	return false
}

// compareMultiAction compares several runs per side: medians, min, max and
// a Mann–Whitney U test per statistic.
func compareMultiAction(c *cli.Context, refs, cands []string) error {
	if c.IsSet("records-a") || c.IsSet("records-b") {
		return usagef("--records-a/--records-b apply to one run per side, not to run lists")
	}
	opts, err := compareOptions(c)
	if err != nil {
		return err
	}
	softMemoryLimit()
	rep, err := compareRunLists(refs, cands, compare.MultiOptions{Stall: opts.Stall, Thresholds: opts.Thresholds, Alpha: c.Float64("alpha")})
	if err != nil {
		return err
	}
	var links []string
	if dir := c.String("plots"); dir != "" {
		if links, err = writeMultiPlots(dir, rep); err != nil {
			return err
		}
	}
	if err := writeMultiReport(c, rep, plotLinks(links, c.String("output"))); err != nil {
		return err
	}
	return verdictError(rep)
}

func compareRunLists(refs, cands []string, opts compare.MultiOptions) (*compare.MultiReport, error) {
	if !(opts.Alpha > 0 && opts.Alpha < 1) {
		return nil, usagef("--alpha must be in (0, 1), got %g", opts.Alpha)
	}
	open := func(paths []string) ([]*compare.Input, error) {
		var ins []*compare.Input
		for _, p := range paths {
			in, err := compare.Open(p)
			if err != nil {
				return nil, err
			}
			ins = append(ins, in)
		}
		return ins, nil
	}
	a, err := open(refs)
	if err != nil {
		return nil, err
	}
	b, err := open(cands)
	if err != nil {
		return nil, err
	}
	return compare.CompareRuns(a, b, opts)
}

// writeMultiPlots draws the error chart of the medians; bars whose runs do
// not differ beyond noise are labelled "~".
func writeMultiPlots(dir string, rep *compare.MultiReport) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var bars []plots.ErrorBar
	for _, r := range rep.ChartRows() {
		label := r.Metric + " " + r.Stat
		if m, ok := rep.Row(r.Metric, r.Stat); ok && !m.Significant {
			label += " ~"
		}
		bars = append(bars, plots.ErrorBar{Label: label, ErrorPct: *r.ErrorPct, BoundPct: r.BoundPct})
	}
	title := fmt.Sprintf("%d candidate vs %d reference runs: error of the medians (~ within noise)", len(rep.Candidates), len(rep.References))
	w := &plotWriter{dir: dir}
	w.add("error_pct.png", func() (plots.Figure, error) { return plots.Errors(title, bars) })
	return w.run()
}

func writeMultiReport(c *cli.Context, rep *compare.MultiReport, links []string) error {
	return writeOutput(c, func(w io.Writer) error { return renderMulti(w, c.String("format"), rep, links) })
}

func renderMulti(w io.Writer, format string, rep *compare.MultiReport, links []string) error {
	switch format {
	case "markdown":
		return compare.WriteMultiMarkdown(w, rep, links)
	case "json":
		return compare.WriteMultiJSON(w, rep)
	case "junit":
		return compare.WriteMultiJUnit(w, rep)
	}
	return compare.WriteMultiText(w, rep)
}

// verdicter is a comparison with verdicts: compare.Report or
// compare.MultiReport.
type verdicter interface {
	Breaches() []compare.Verdict
	MissingVerdicts() []compare.Verdict
}

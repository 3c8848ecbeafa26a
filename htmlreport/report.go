package htmlreport

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/simbench/simbench/compare"
	"github.com/simbench/simbench/results"
)

// Page is a whole report.
type Page struct {
	Title    string
	Sections []Section
}

// Section is one comparison, load-sweep comparison or run.
type Section struct {
	Title string
	// Status is the verdict's CSS class and badge: pass, breach,
	// incomplete, ungated; "" for a run, which has no verdict.
	Status   string
	Lines    []string // the headline: what is compared with what, the verdict's counts
	Tables   []Table
	Figures  []Figure
	Warnings []string
}

// Table is a titled table; Folded ones are drawn closed (<details>).
type Table struct {
	Title  string
	Folded bool
	Head   []Cell
	Rows   [][]Cell
}

// Cell is a table cell and its CSS class (r for right-aligned, a verdict
// status for a status cell).
type Cell struct {
	Text  string
	Class string
}

// Figure is an embedded PNG.
type Figure struct {
	Name string
	Src  template.URL // data:image/png;base64,…
}

var pngMagic = []byte("\x89PNG\r\n\x1a\n")

// Embed reads PNG files as figures named by their file names; a file that
// is not a PNG is an error naming it.
func Embed(paths []string) ([]Figure, error) {
	var out []Figure
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		if !bytes.HasPrefix(b, pngMagic) {
			return nil, fmt.Errorf("%s: not a PNG file", p)
		}
		name := strings.TrimSuffix(filepath.Base(p), filepath.Ext(p))
		// a data URI of a PNG checked above: safe in an img src
		out = append(out, Figure{Name: name, Src: template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(b))})
	}
	return out, nil
}

// Draw renders figures with draw into a temporary directory and embeds
// them; the directory is removed.
func Draw(draw func(dir string) ([]string, error)) ([]Figure, error) {
	dir, err := os.MkdirTemp("", "simbench-report-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	paths, err := draw(dir)
	if err != nil {
		return nil, err
	}
	return Embed(paths)
}

// tableOf turns one of compare's tables into cells: columns aligned as
// compare aligns them, verdict statuses classed.
func tableOf(t compare.Table) Table {
	out := Table{Title: t.Title, Folded: t.Folded}
	for i, row := range t.Rows {
		cells := make([]Cell, len(row))
		for j, text := range row {
			cells[j] = Cell{Text: text, Class: cellClass(t.Align, j, text)}
		}
		if i == 0 {
			out.Head = cells
			continue
		}
		out.Rows = append(out.Rows, cells)
	}
	return out
}

// statusClasses are the verdict statuses as the tables print them.
var statusClasses = map[string]string{"PASS": "pass", "BREACH": "breach", "MISSING": "incomplete", "~": "noise"}

func cellClass(align string, col int, text string) string {
	if c, ok := statusClasses[text]; ok && col == 0 {
		return c
	}
	if col < len(align) && align[col] == 'l' {
		return ""
	}
	return "r"
}

// Comparison is the section of a comparison of two runs (or two lists of
// runs) with its figures.
func Comparison(rep *compare.Report, figs []Figure) Section {
	s := Section{Title: sideNames(rep.Candidates) + " vs " + sideNames(rep.References), Status: compare.VerdictName(rep.Verdicts), Figures: figs}
	s.Lines = []string{"reference: " + sidePaths(rep.References), "candidate: " + sidePaths(rep.Candidates),
		"error % = (candidate − reference) / reference × 100" + medians(rep)}
	for _, t := range rep.Tables() {
		s.Tables = append(s.Tables, tableOf(t))
	}
	s.Warnings = warnings(rep.Warnings)
	return s
}

func medians(rep *compare.Report) string {
	if rep.Paired() {
		return ""
	}
	return fmt.Sprintf(", of the medians over the runs; ~ = within run-to-run noise (Mann–Whitney, α = %g)", rep.Options.Alpha)
}

// SweepComparison is the section of a load-sweep comparison with its
// figures.
func SweepComparison(rep *compare.SweepReport, figs []Figure) Section {
	s := Section{Title: fmt.Sprintf("%s vs %s by %s", rep.Candidate.Name, rep.Reference.Name, rep.Load),
		Status: compare.VerdictName(rep.Verdicts), Figures: figs,
		Lines: []string{"reference sweep: " + rep.Reference.Path, "candidate sweep: " + rep.Candidate.Path}}
	for _, t := range rep.Tables() {
		s.Tables = append(s.Tables, tableOf(t))
	}
	s.Warnings = warnings(rep.Warnings)
	return s
}

// Sweep is the section of one load sweep: its points (throughputs,
// latencies, attainment), its SLO capacity and its figures.
func Sweep(side compare.SweepSide, figs []Figure) Section {
	sum := side.Summary
	s := Section{Title: fmt.Sprintf("%s by %s", side.Name, sum.Load), Lines: []string{"load sweep: " + side.Path}, Figures: figs,
		Tables: []Table{tableOf(compare.Table{Title: "Points", Rows: sum.Table()})}}
	for _, line := range strings.Split(strings.TrimSpace(sum.Notes()), "\n") {
		if line != "" {
			s.Lines = append(s.Lines, line)
		}
	}
	return s
}

// runStats are the columns of a run's table.
var runStats = []string{"avg", "min", "p50", "p90", "p99", "max"}

// Run is the section of one run: its AIPerf metrics (avg, min, p50, p90,
// p99 and max where the metric has them) and its figures.
func Run(name, path string, p *results.Profile, figs []Figure) Section {
	t := Table{Title: "Metrics", Head: []Cell{{Text: "Metric"}}}
	for _, st := range runStats {
		t.Head = append(t.Head, Cell{Text: st, Class: "r"})
	}
	for _, m := range p.Metrics {
		row := []Cell{{Text: metricTitle(m)}}
		for _, st := range runStats {
			text := ""
			if v, ok := m.Get(st); ok {
				text = fmtNum(v)
			}
			row = append(row, Cell{Text: text, Class: "r"})
		}
		t.Rows = append(t.Rows, row)
	}
	return Section{Title: name, Lines: []string{"run: " + path}, Tables: []Table{t}, Figures: figs}
}

// metricTitle is AIPerf's "Header (unit)", the tag when it has no header.
func metricTitle(m results.MetricResult) string {
	title := m.Tag
	if d, ok := results.Lookup(m.Tag); ok && d.Header != "" {
		title = d.Header
	}
	if m.Unit == "" {
		return title
	}
	return title + " (" + m.Unit + ")"
}

// fmtNum prints integers as integers and other values with two decimals
// (three significant digits below 1).
func fmtNum(v float64) string {
	switch {
	case v == float64(int64(v)):
		return fmt.Sprintf("%d", int64(v))
	case v > -1 && v < 1:
		return fmt.Sprintf("%.3g", v)
	}
	return fmt.Sprintf("%.2f", v)
}

func sideNames(rs []compare.RunInfo) string {
	if len(rs) == 1 {
		return rs[0].Name
	}
	return fmt.Sprintf("%d runs", len(rs))
}

func sidePaths(rs []compare.RunInfo) string {
	paths := make([]string, len(rs))
	for i, r := range rs {
		paths[i] = r.Path
	}
	return strings.Join(paths, ", ")
}

func warnings(ws []compare.Warning) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.Msg
	}
	return out
}

// Write renders the page.
func Write(w io.Writer, p Page) error { return page.Execute(w, p) }

// WriteFile writes the page to path whole or not at all.
func WriteFile(path string, p Page) error {
	return results.WriteFile(path, func(w io.Writer) error { return Write(w, p) })
}

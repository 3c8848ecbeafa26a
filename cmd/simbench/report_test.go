package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"
)

// htmlSummary is what a written HTML report holds: its tables' titles
// (h3 and folded summaries), its verdict badges and its embedded images.
type htmlSummary struct {
	titles, badges []string
	tables, images int
}

func readHTMLReport(t *testing.T, path string) htmlSummary {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	doc, err := html.Parse(bytes.NewReader(b))
	require.NoError(t, err)
	var s htmlSummary
	var visit func(*html.Node)
	visit = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "table":
				s.tables++
			case "img":
				for _, a := range n.Attr {
					if a.Key == "src" && strings.HasPrefix(a.Val, "data:image/png;base64,") {
						s.images++
					}
				}
			case "h3", "summary":
				s.titles = append(s.titles, nodeText(n))
			case "span":
				s.badges = append(s.badges, nodeText(n))
			case "script":
				t.Errorf("%s: a script in the report", path)
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			visit(c)
		}
	}
	visit(doc)
	return s
}

func nodeText(n *html.Node) string {
	if n.Type == html.TextNode {
		return n.Data
	}
	var sb strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		sb.WriteString(nodeText(c))
	}
	return sb.String()
}

// reportRuns writes two runs whose TTFT differs by +50 %.
func reportRuns(t *testing.T) (string, string) {
	t.Helper()
	root := t.TempDir()
	a, b := filepath.Join(root, "real"), filepath.Join(root, "sim")
	gap := func(int, int) float64 { return 10 }
	writeRun(t, a, runSpec{requests: 20, chunks: 8, workers: 1, intervalMs: 100, ttftMs: func(int) float64 { return 40 }, gapMs: gap})
	writeRun(t, b, runSpec{requests: 20, chunks: 8, workers: 1, intervalMs: 100, ttftMs: func(int) float64 { return 60 }, gapMs: gap})
	return a, b
}

// TestReportCommand: `simbench report` writes one self-contained page: a
// run's metrics and figures; a comparison per candidate with its verdict
// (and compare's exit code); two load sweeps' capacities; and refuses a
// sweep beside a run or an output that is not .html.
func TestReportCommand(t *testing.T) {
	t.Parallel()
	real, sim := reportRuns(t)
	root := t.TempDir()
	sweepA, sweepB := filepath.Join(root, "sweep-a"), filepath.Join(root, "sweep-b")
	writeLoadSweep(t, sweepA, []float64{1, 2, 4}, []float64{40, 60, 200})
	writeLoadSweep(t, sweepB, []float64{1, 2, 4}, []float64{40, 90, 200})
	for name, tt := range map[string]struct {
		args   []string
		code   int
		badge  []string
		titles []string
		images bool
	}{
		"one run":      {[]string{real}, exitOK, nil, nil, true},
		"a comparison": {[]string{real, sim, "--fail-above", "time_to_first_token.avg=10%"}, exitThreshold, []string{"breach"}, []string{"Verdicts: 1 breach, 0 missing, 0 pass", "Headline statistics"}, true},
		"two candidates": {[]string{real, sim, real, "--gate"}, exitThreshold, []string{"breach", "pass"},
			[]string{"Headline statistics"}, true},
		"load sweeps":       {[]string{sweepA, sweepB}, exitOK, []string{"ungated"}, []string{"Points by concurrency: error % of the headline statistics (attainment and SLO met: reference / candidate)"}, true},
		"one load sweep":    {[]string{sweepA}, exitOK, nil, []string{"Points"}, true},
		"a sweep and a run": {[]string{sweepA, real}, exitUsage, nil, nil, false},
	} {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "report.html")
			code, stdout, stderr := simbench(t, append([]string{"report", "-o", out}, tt.args...)...)
			require.Equal(t, tt.code, code, stderr)
			if tt.code == exitUsage {
				assert.NoFileExists(t, out)
				return
			}
			assert.Contains(t, stdout, "wrote "+out)
			s := readHTMLReport(t, out)
			assert.Equal(t, tt.badge, s.badges)
			for _, title := range tt.titles {
				assert.Contains(t, s.titles, title)
			}
			assert.Positive(t, s.tables)
			assert.Equal(t, tt.images, s.images > 0, "figures embedded")
		})
	}
	code, _, stderr := simbench(t, "report", real, "-o", filepath.Join(root, "report.txt"))
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "-o must name an .html file")
}

// TestCompareHTML: compare --html writes the comparison's page beside its
// other output, with the --plots files when drawn, else its own figures.
func TestCompareHTML(t *testing.T) {
	t.Parallel()
	real, sim := reportRuns(t)
	dir := t.TempDir()
	page, plots := filepath.Join(dir, "compare.html"), filepath.Join(dir, "plots")
	code, stdout, stderr := simbench(t, "compare", real, sim, "--gate", "--html", page, "--plots", plots)
	require.Equal(t, exitThreshold, code, stderr)
	assert.Contains(t, stdout, "Time to First Token", "the text report still goes to stdout")
	pngs, err := filepath.Glob(filepath.Join(plots, "*.png"))
	require.NoError(t, err)
	s := readHTMLReport(t, page)
	assert.Equal(t, len(pngs), s.images, "every --plots figure embedded")
	assert.Equal(t, []string{"breach"}, s.badges)
	assert.Contains(t, s.titles, "Headline statistics")

	code, _, stderr = simbench(t, "compare", real, sim, "--html", page)
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, len(pngs), readHTMLReport(t, page).images, "drawn without --plots too")

	code, _, stderr = simbench(t, "compare", real, sim, "--html", filepath.Join(real, "profile_export.jsonl"))
	assert.Equal(t, exitUsage, code, stderr)
}

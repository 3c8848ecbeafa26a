package htmlreport

import (
	"bytes"
	"encoding/base64"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"

	"github.com/simbench/simbench/compare"
	"github.com/simbench/simbench/plots/figures"
)

const aiperfRun = "../testdata/aiperf/qwen_concurrency1"

// comparisonPage compares the bundled AIPerf run with itself under a gate
// and draws its figures: a real report, every section filled.
func comparisonPage(t *testing.T) (Page, int) {
	t.Helper()
	opts := compare.Options{Stall: compare.DefaultStallOptions, Alpha: compare.DefaultAlpha,
		Thresholds: compare.WithDefaultGate(nil)}
	var sides [2][]*compare.Input
	for i := range sides {
		in, err := compare.OpenRuns([]string{aiperfRun})
		require.NoError(t, err)
		sides[i] = in
	}
	rep, err := compare.Compare(sides[0], sides[1], opts)
	require.NoError(t, err)
	figs, err := Draw(func(dir string) ([]string, error) { return figures.Compare(dir, rep) })
	require.NoError(t, err)
	require.NotEmpty(t, figs)
	return Page{Title: "test <report>", Sections: []Section{Comparison(rep, figs)}}, len(figs)
}

// walk calls f on every element node.
func walk(n *html.Node, f func(*html.Node)) {
	if n.Type == html.ElementNode {
		f(n)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, f)
	}
}

func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

func text(n *html.Node) string {
	var sb strings.Builder
	var rec func(*html.Node)
	rec = func(n *html.Node) {
		if n.Type == html.TextNode {
			sb.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			rec(c)
		}
	}
	rec(n)
	return sb.String()
}

// TestPageIsSelfContained parses the written page: the verdict badge, the
// tables (verdicts, headline statistics, every statistic folded), one img
// per figure whose data URI decodes to a PNG, no script and nothing that
// would be fetched.
func TestPageIsSelfContained(t *testing.T) {
	p, nfigs := comparisonPage(t)
	path := filepath.Join(t.TempDir(), "report.html")
	require.NoError(t, WriteFile(path, p))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	doc, err := html.Parse(bytes.NewReader(b))
	require.NoError(t, err)

	var tables, imgs, badges []*html.Node
	var titles []string
	walk(doc, func(n *html.Node) {
		switch n.Data {
		case "script", "iframe", "object", "embed", "link":
			t.Errorf("<%s> in a self-contained page", n.Data)
		case "table":
			tables = append(tables, n)
		case "img":
			imgs = append(imgs, n)
		case "h3", "summary":
			titles = append(titles, text(n))
		case "span":
			if c, _ := attr(n, "class"); strings.HasPrefix(c, "badge") {
				badges = append(badges, n)
			}
		case "title":
			assert.Equal(t, "test <report>", text(n), "the title is escaped, not markup")
		}
		for _, key := range []string{"src", "href"} {
			if v, ok := attr(n, key); ok {
				assert.True(t, strings.HasPrefix(v, "data:image/png;base64,") || strings.HasPrefix(v, "#"),
					"<%s %s=%.40q>: nothing is fetched", n.Data, key, v)
			}
		}
	})
	require.Len(t, badges, 1)
	assert.Equal(t, "pass", text(badges[0]), "a run against itself passes the default gate")
	assert.Contains(t, titles, "Verdicts: 0 breach, 0 missing, 6 pass")
	assert.Contains(t, titles, "Headline statistics")
	assert.Contains(t, strings.Join(titles, "\n"), "statistics", "every statistic, folded")
	assert.GreaterOrEqual(t, len(tables), 4)
	var head string
	walk(tables[1], func(n *html.Node) {
		if n.Data == "thead" {
			head = text(n)
		}
	})
	for _, col := range []string{"Metric", "Stat", "Reference", "Candidate", "Error"} {
		assert.Contains(t, head, col)
	}
	assert.Contains(t, text(tables[1]), "Time to First Token (ms)")

	require.Len(t, imgs, nfigs, "every figure embedded")
	for _, img := range imgs {
		src, _ := attr(img, "src")
		raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(src, "data:image/png;base64,"))
		require.NoError(t, err)
		cfg, err := png.DecodeConfig(bytes.NewReader(raw))
		require.NoError(t, err)
		assert.Greater(t, cfg.Width, 100)
	}
}

// TestEmbedRejectsNonPNG: a file that is not a PNG never becomes an img.
func TestEmbedRejectsNonPNG(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "plot.png")
	require.NoError(t, os.WriteFile(bad, []byte("<svg/>"), 0o644))
	_, err := Embed([]string{bad})
	require.Error(t, err)
	assert.Contains(t, err.Error(), bad)
}

func TestCellClass(t *testing.T) {
	for _, tt := range []struct {
		align, text string
		col         int
		want        string
	}{
		{"llrrl", "BREACH", 0, "breach"},
		{"llrrl", "PASS", 1, ""},
		{"llrrl", "+3.00%", 2, "r"},
		{"ll", "1,234.00", 5, "r"},
		{"ll", "avg", 1, ""},
	} {
		assert.Equal(t, tt.want, cellClass(tt.align, tt.col, tt.text), "%+v", tt)
	}
}

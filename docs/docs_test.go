// Package docs holds simbench's documents; its tests keep them true: every
// relative link in a markdown file resolves, and architecture.md's code map
// names every package there is and no other.
package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// root is the repository, seen from this package.
const root = ".."

// link is a markdown link's or image's target: [text](target "title").
var link = regexp.MustCompile(`\]\(([^()\s]+)(?:\s+"[^"]*")?\)`)

// skipDir: directories that hold no documents of ours.
func skipDir(name string) bool {
	return strings.HasPrefix(name, ".") || name == "artifacts" || name == "bin" || name == "node_modules"
}

// markdownFiles lists the repository's *.md files, relative to root.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && skipDir(d.Name()) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			rel, err := filepath.Rel(root, path)
			out = append(out, rel)
			return err
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

// relativeTargets returns the file part of every link in text that is not
// a URL or an anchor of the same page, with its line.
func relativeTargets(text string) map[string]int {
	out := map[string]int{}
	for i, line := range strings.Split(text, "\n") {
		for _, m := range link.FindAllStringSubmatch(line, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") || strings.HasPrefix(target, "#") {
				continue
			}
			target, _, _ = strings.Cut(target, "#")
			if _, seen := out[target]; !seen {
				out[target] = i + 1
			}
		}
	}
	return out
}

// Every relative link in a markdown file names a file or directory that
// exists.
func TestRelativeLinksResolve(t *testing.T) {
	files := markdownFiles(t)
	require.Contains(t, files, "README.md")
	for _, name := range files {
		text, err := os.ReadFile(filepath.Join(root, name))
		require.NoError(t, err)
		for target, line := range relativeTargets(string(text)) {
			path := filepath.Join(root, filepath.Dir(name), filepath.FromSlash(target))
			_, err := os.Stat(path)
			assert.NoError(t, err, "%s:%d: link to %s, which does not exist", name, line, target)
		}
	}
}

func TestRelativeTargets(t *testing.T) {
	text := "see [cli](docs/cli.md), [top](#usage), [aiperf](https://x.org/a.md),\n" +
		"![plot](img/a.png \"a plot\") and [config](config.md#engine)"
	assert.Equal(t, map[string]int{"docs/cli.md": 1, "img/a.png": 2, "config.md": 2}, relativeTargets(text))
}

// codeMapRow is a row of architecture.md's code map: | `path` | job |.
var codeMapRow = regexp.MustCompile("(?m)^\\| `([a-z0-9_/]+)` \\|")

// packageDirs lists the directories holding Go files, relative to root,
// outside testdata.
func packageDirs(t *testing.T) []string {
	t.Helper()
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (skipDir(d.Name()) || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") {
			rel, err := filepath.Rel(root, filepath.Dir(path))
			seen[filepath.ToSlash(rel)] = true
			return err
		}
		return nil
	})
	require.NoError(t, err)
	var out []string
	for dir := range seen {
		out = append(out, dir)
	}
	slices.Sort(out)
	return out
}

// The code map has one row per package directory, and none for a package
// that does not exist.
func TestCodeMapListsEveryPackage(t *testing.T) {
	text, err := os.ReadFile("architecture.md")
	require.NoError(t, err)
	var rows []string
	for _, m := range codeMapRow.FindAllStringSubmatch(string(text), -1) {
		rows = append(rows, m[1])
	}
	slices.Sort(rows)
	assert.Equal(t, packageDirs(t), rows, "docs/architecture.md's code map and the package directories differ")
}

// readmeLimit is the README's size: what simbench is, the set-up, the
// everyday commands, the files, the exit codes and links; the rest is here.
const readmeLimit = 12 * 1024

// The README stays short and links every page of docs/.
func TestReadmeIsShortAndLinksEveryPage(t *testing.T) {
	text, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	assert.LessOrEqual(t, len(text), readmeLimit, "README.md is %d bytes; move the detail to docs/", len(text))
	linked := relativeTargets(string(text))
	pages, err := filepath.Glob("*.md")
	require.NoError(t, err)
	require.NotEmpty(t, pages)
	for _, page := range pages {
		assert.Contains(t, linked, "docs/"+page, "README.md does not link docs/%s", page)
	}
}

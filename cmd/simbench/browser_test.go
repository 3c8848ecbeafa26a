package main

import (
	"bufio"
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/simbench/simbench/validate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The HTML report in a real browser: headless Chromium, Debian's package
// (.ci/run installs it). Without it the test is skipped, except under CI
// (CI=true), where it fails. With SIMBENCH_E2E_DIR (make e2e) the engine's
// load-sweep and trace comparisons are rendered too, and the screenshots
// are kept there as report-*.png.

// browserWindow is the screenshot's size: wide enough for the tables, tall
// enough to reach the first figures.
const browserWindow = "1280,3000"

// chromium finds the browser, or skips (fails under CI).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is not installed: .ci/run installs Debian's chromium for this test")
	}
	t.Skip("chromium is not installed (apt-get install chromium): the HTML report's browser test needs it")
	return ""
}

// render opens page in headless Chromium and screenshots it into shot; it
// returns the page's console messages (errors, uncaught exceptions, any
// console output: a clean report has none).
func render(t *testing.T, chrome, page, shot string) []string {
	t.Helper()
	abs, err := filepath.Abs(page)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// the flags of a closed network: no background connections, no sandbox as root
	cmd := exec.CommandContext(ctx, chrome, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--hide-scrollbars", "--user-data-dir="+t.TempDir(), "--enable-logging=stderr", "--v=0",
		"--window-size="+browserWindow, "--screenshot="+shot, "file://"+abs)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Run(), stderr.String())
	var console []string
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		if line := sc.Text(); strings.Contains(line, ":CONSOLE") || strings.Contains(line, "Uncaught") {
			console = append(console, line)
		}
	}
	return console
}

// inked is the share of the screenshot's pixels that are not its most
// common colour (the background), and how many colours it has.
func inked(t *testing.T, shot string) (share float64, colours int) {
	t.Helper()
	f, err := os.Open(shot)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	counts := map[uint32]int{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			counts[r>>8<<16|g>>8<<8|bl>>8]++
		}
	}
	top := 0
	for _, n := range counts {
		top = max(top, n)
	}
	return 1 - float64(top)/float64(b.Dx()*b.Dy()), len(counts)
}

// Thresholds of a rendered report: a page of tables and figures inks far
// more than a blank one (a heading alone: 0.08 %) and has the thousands
// of colours of anti-aliased plots (a heading alone: about 200).
const (
	minInked   = 0.05
	minColours = 1000
)

// TestE2EHTMLReportInBrowser renders the report of a comparison and of a
// run in Chromium: the screenshot is the window's size, not blank, with
// the figures' colours, and the page logs nothing to the console. A broken
// page (an uncaught exception, next to nothing drawn) trips both checks.
func TestE2EHTMLReportInBrowser(t *testing.T) {
	t.Parallel()
	chrome := chromium(t)
	real, sim := reportRuns(t)
	dir := t.TempDir()
	pages := map[string][]string{"compare": {real, sim, "--gate"}, "run": {real}}
	keep := os.Getenv("SIMBENCH_E2E_DIR")
	if keep != "" {
		pages["load-sweep"] = []string{filepath.Join(keep, validate.LoadSweepDir, "real"), filepath.Join(keep, validate.LoadSweepDir, "sim")}
		pages["trace"] = []string{filepath.Join(keep, "trace", "real"), filepath.Join(keep, "trace", "sim")}
		dir = keep
	}
	for name, args := range pages {
		t.Run(name, func(t *testing.T) {
			page := filepath.Join(dir, "report-"+name+".html")
			code, _, stderr := simbench(t, append([]string{"report", "-o", page}, args...)...)
			require.Contains(t, []int{exitOK, exitThreshold}, code, stderr)
			shot := filepath.Join(dir, "report-"+name+".png")
			assert.Empty(t, render(t, chrome, page, shot), "console messages")
			cfg := pngConfig(t, shot)
			assert.Equal(t, []int{1280, 3000}, []int{cfg.Width, cfg.Height})
			share, colours := inked(t, shot)
			assert.Greater(t, share, minInked, "not blank")
			assert.Greater(t, colours, minColours, "the figures are drawn")
		})
	}
	t.Run("a broken page trips the checks", func(t *testing.T) {
		page := filepath.Join(t.TempDir(), "broken.html")
		require.NoError(t, os.WriteFile(page, []byte(`<!DOCTYPE html><html><body><h1>x</h1><script>undefinedFunction()</script></body></html>`), 0o644))
		shot := filepath.Join(t.TempDir(), "broken.png")
		console := render(t, chrome, page, shot)
		require.Len(t, console, 1)
		assert.Contains(t, console[0], "Uncaught ReferenceError: undefinedFunction is not defined")
		share, colours := inked(t, shot)
		assert.Less(t, share, minInked)
		assert.Less(t, colours, minColours)
	})
}

func pngConfig(t *testing.T, path string) image.Config {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	require.NoError(t, err)
	return cfg
}

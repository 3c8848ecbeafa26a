package figures

import (
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/simbench/simbench/capacity"
	"github.com/simbench/simbench/compare"
	"github.com/simbench/simbench/plots"
	"github.com/simbench/simbench/results"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot/vg"
)

// aiperfRun is a real AIPerf export with per-request records.
const aiperfRun = "../../testdata/aiperf/qwen_concurrency1"

// px is a length in pixels at plots.DPI.
func px(l vg.Length) int { return int(float64(l/vg.Inch)*plots.DPI + 0.5) }

// Heights of the figures, in pixels: one default panel, the CDF with its
// tail panel below (two of 3.5 in), one token-gap panel of 4 in per run.
var (
	panel    = px(plots.Height)
	cdf      = 2 * px(3.5*vg.Inch)
	timeline = px(4 * vg.Inch)
)

// checkPNGs decodes every file written and checks that the files are
// exactly those wanted, each at the default width and its height (0: a
// figure that grows with its bars, any height).
func checkPNGs(t *testing.T, paths []string, want map[string]int) {
	t.Helper()
	got := map[string]int{}
	for _, p := range paths {
		f, err := os.Open(p)
		require.NoError(t, err)
		img, err := png.Decode(f)
		require.NoError(t, f.Close())
		require.NoError(t, err, p)
		b := img.Bounds()
		assert.Equal(t, px(plots.Width), b.Dx(), p)
		name := filepath.Base(p)
		got[name] = b.Dy()
		if want[name] == 0 {
			assert.Greater(t, b.Dy(), panel, p)
			got[name] = 0
		}
	}
	assert.Equal(t, want, got)
}

// runHeights are the figures of one run (two with both, taller timeline).
func runHeights(runs int) map[string]int {
	return map[string]int{
		"cdf_" + results.TagTTFT + ".png": cdf, "cdf_" + results.TagITL + ".png": cdf,
		"cdf_" + results.TagRequestLatency + ".png": cdf, "cdf_token_gap.png": cdf,
		"token_gap_timeline.png": runs * timeline, "output_throughput.png": panel,
	}
}

func openRun(t *testing.T) *compare.Input {
	t.Helper()
	in, err := compare.Open(aiperfRun)
	require.NoError(t, err)
	return in
}

func TestRunRendersPNGs(t *testing.T) {
	d, err := compare.Scan(openRun(t), compare.DefaultStallOptions)
	require.NoError(t, err)
	paths, err := Run(t.TempDir(), d)
	require.NoError(t, err)
	checkPNGs(t, paths, runHeights(1))
}

func TestCompareRendersPNGs(t *testing.T) {
	rep, err := compare.Compare([]*compare.Input{openRun(t)}, []*compare.Input{openRun(t)},
		compare.Options{Stall: compare.DefaultStallOptions})
	require.NoError(t, err)
	paths, err := Compare(t.TempDir(), rep)
	require.NoError(t, err)
	want := runHeights(2)
	want["error_pct.png"] = 0
	for _, tag := range scatterTags {
		want["scatter_"+tag+".png"] = panel
	}
	checkPNGs(t, paths, want)
}

// testSweep is a concurrency sweep whose points all carry the real run's
// profile, with an SLO attainment falling with the load.
func testSweep(t *testing.T, name string) compare.SweepSide {
	t.Helper()
	run, err := results.LoadRun(aiperfRun)
	require.NoError(t, err)
	s := &capacity.Summary{Load: capacity.Concurrency, Goodput: "time_to_first_token:100", AttainmentTarget: 0.9}
	for i, load := range []float64{1, 2, 4} {
		pt := capacity.NewPoint(load, capacity.PointDir(capacity.Concurrency, load), run.Profile,
			capacity.PointOptions{Load: capacity.Concurrency, HasSLO: true, Target: 0.9, MaxErrorRate: -1})
		a := 1 - 0.3*float64(i)
		meets := a >= 0.9
		pt.Attainment, pt.MeetsSLO = &a, &meets
		s.Loads, s.Points = append(s.Loads, load), append(s.Points, pt)
	}
	s.Capacity = capacity.FindCapacity(capacity.Concurrency, s.Points, 0.9)
	return compare.SweepSide{Name: name, Path: name, Summary: s}
}

func TestSweepRendersPNGs(t *testing.T) {
	paths, err := Sweep(t.TempDir(), testSweep(t, "real"))
	require.NoError(t, err)
	checkPNGs(t, paths, map[string]int{SweepTradeoffsName: 2 * panel, SweepAttainmentName: panel})
}

func TestCompareSweepsRendersPNGs(t *testing.T) {
	rep := &compare.SweepReport{Load: capacity.Concurrency, Reference: testSweep(t, "real"), Candidate: testSweep(t, "sim")}
	paths, err := CompareSweeps(t.TempDir(), rep)
	require.NoError(t, err)
	checkPNGs(t, paths, map[string]int{SweepTradeoffsName: 2 * panel, SweepAttainmentName: panel})
}

func TestLinks(t *testing.T) {
	tests := []struct {
		name, output, path, want string
	}{
		{"no report file", "", "out/plots/a.png", "out/plots/a.png"},
		{"beside the report", "out/report.md", "out/plots/a.png", "plots/a.png"},
		{"above the report", "out/sub/report.md", "out/plots/a.png", "../plots/a.png"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, []string{tt.want}, Links([]string{tt.path}, tt.output))
		})
	}
}

package main

import (
	"bytes"
	"encoding/json"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/servermetrics"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runSpec describes a synthetic run: requests start every intervalMs on
// one of workers, with a first token after ttftMs(i) and chunk gaps
// gapMs(i, c) (one token per chunk).
type runSpec struct {
	requests, chunks, workers int
	intervalMs                float64
	ttftMs                    func(i int) float64
	gapMs                     func(i, c int) float64
}

// writeRun writes the run with results.RunWriter into dir.
func writeRun(t *testing.T, dir string, s runSpec) {
	t.Helper()
	rw, err := results.CreateRun(dir, results.RunOptions{Buffered: true})
	require.NoError(t, err)
	const epoch = int64(1_750_000_000_000_000_000)
	for i := 0; i < s.requests; i++ {
		start := epoch + int64(float64(i)*s.intervalMs*1e6)
		r := &results.Record{ID: "req", SessionNum: i, TraceRow: i, StartNs: start, AckNs: start + 1e6,
			InputTokens: 100, OutputTokens: s.chunks, Worker: "w" + string(rune('0'+i%max(s.workers, 1)))}
		at := start + int64(s.ttftMs(i)*1e6)
		for c := 0; c < s.chunks; c++ {
			if c > 0 {
				at += int64(s.gapMs(i, c) * 1e6)
			}
			r.Chunks = append(r.Chunks, results.Chunk{AtNs: at, Tokens: 1})
		}
		r.EndNs = at
		_, err := rw.Add(r)
		require.NoError(t, err)
	}
	_, err = rw.Close(results.RunMeta{BenchmarkID: "synthetic"})
	require.NoError(t, err)
}

// stallPair builds the acceptance pair: the reference has only 10 ms gaps,
// the candidate the same plus exactly seven 200 ms gaps.
func stallPair(t *testing.T, root string) (ref, cand string) {
	ref, cand = filepath.Join(root, "real"), filepath.Join(root, "sim")
	base := runSpec{requests: 60, chunks: 40, workers: 2, intervalMs: 250,
		ttftMs: func(i int) float64 { return 30 + float64(i%5) }, gapMs: func(int, int) float64 { return 10 }}
	writeRun(t, ref, base)
	stalled := base
	stalled.gapMs = func(i, c int) float64 {
		if c == 20 && i%8 == 3 && i < 56 { // requests 3, 11, …, 51: seven stalls
			return 200
		}
		return 10
	}
	writeRun(t, cand, stalled)
	return ref, cand
}

func compareCLI(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(append([]string{"simbench"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

// TestCompareStallAcceptance is the "done when": on a pair where the
// candidate has exactly seven 200 ms gaps among 10 ms gaps, the JSON reports
// 0 and 7 stalls, and --plots writes at least three PNGs of at least
// 600 × 400 (here with a markdown report linking them).
func TestCompareStallAcceptance(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	ref, cand := stallPair(t, root)
	code, out, errOut := compareCLI("compare", ref, cand, "--format", "json")
	require.Equal(t, 0, code, errOut)
	var got struct {
		Stalls struct {
			Reference, Candidate struct{ Count int }
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	assert.Equal(t, 0, got.Stalls.Reference.Count)
	assert.Equal(t, 7, got.Stalls.Candidate.Count)

	md := filepath.Join(root, "report", "compare.md")
	require.NoError(t, os.MkdirAll(filepath.Dir(md), 0o755))
	code, _, errOut = compareCLI("compare", ref, cand, "--format", "markdown", "-o", md, "--plots", filepath.Join(root, "report", "plots"))
	require.Equal(t, exitOK, code, errOut)
	pngs, err := filepath.Glob(filepath.Join(root, "report", "plots", "*.png"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(pngs), 3)
	for _, p := range pngs {
		checkPNGSize(t, p)
	}
	// full decodes are slow under -race: three figures here, every kind in
	// package plots' tests
	for _, name := range []string{"cdf_token_gap", "error_pct", "token_gap_timeline"} {
		checkPNG(t, filepath.Join(root, "report", "plots", name+".png"))
	}
	b, err := os.ReadFile(md)
	require.NoError(t, err)
	for _, name := range []string{"cdf_time_to_first_token", "cdf_token_gap", "error_pct", "scatter_request_latency",
		"token_gap_timeline", "output_throughput"} {
		assert.Contains(t, string(b), "!["+name+"](plots/"+name+".png)")
		assert.FileExists(t, filepath.Join(root, "report", "plots", name+".png"))
	}
}

// checkPNGSize reads a PNG's header and checks its size.
func checkPNGSize(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	require.NoError(t, err, path)
	assert.GreaterOrEqual(t, cfg.Width, 600, path)
	assert.GreaterOrEqual(t, cfg.Height, 400, path)
}

// checkPNG decodes a PNG and checks its size and that it is not blank.
func checkPNG(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err, path)
	b := img.Bounds()
	assert.GreaterOrEqual(t, b.Dx(), 600, path)
	assert.GreaterOrEqual(t, b.Dy(), 400, path)
	assert.Greater(t, distinctColors(img, 64), 8, "%s looks blank", path)
}

// distinctColors counts colours up to limit.
func distinctColors(img image.Image, limit int) int {
	seen := map[[4]uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y && len(seen) < limit; y += 3 {
		for x := b.Min.X; x < b.Max.X && len(seen) < limit; x += 3 {
			r, g, bl, a := img.At(x, y).RGBA()
			seen[[4]uint32{r, g, bl, a}] = true
		}
	}
	return len(seen)
}

// aggregatePair writes the fixture's aggregate file and a copy whose every
// statistic is scaled by factor(metric index, stat index), each alone in
// its directory.
func aggregatePair(t *testing.T, factor func(i, j int) float64) (a, b string) {
	t.Helper()
	p, err := results.LoadProfileJSON(fixtureJSON)
	require.NoError(t, err)
	root := t.TempDir()
	a, b = filepath.Join(root, "a", results.ProfileJSONName), filepath.Join(root, "b", results.ProfileJSONName)
	require.NoError(t, results.WriteProfileFiles(filepath.Dir(a), p))
	scaled := *p
	scaled.Metrics = nil
	for i, m := range p.Metrics {
		stats := map[string]float64{}
		j := 0
		for _, st := range results.StatNames {
			if v, ok := m.Stats[st]; ok {
				stats[st] = v * factor(i, j)
				j++
			}
		}
		scaled.Metrics = append(scaled.Metrics, results.MetricResult{Tag: m.Tag, Unit: m.Unit, Stats: stats})
	}
	require.NoError(t, results.WriteProfileFiles(filepath.Dir(b), &scaled))
	return a, b
}

const fixtureJSON = "../../testdata/aiperf/qwen_concurrency1/profile_export_aiperf.json"

type jsonMetrics struct {
	Metrics []struct {
		Metric, Stat         string
		Reference, Candidate float64
		ErrorPct             *float64 `json:"error_pct"`
	}
	Verdicts []struct{ Field, Status string }
}

// TestCompareAggregatesAcceptance: error % = (b − a)/a × 100 for every
// metric and statistic of two AIPerf aggregate files, and a breached
// --fail-above exits 3.
func TestCompareAggregatesAcceptance(t *testing.T) {
	t.Parallel()
	// a factor per metric and statistic, rising with the statistic so the
	// scaled percentiles stay in order (a file out of order is refused)
	a, b := aggregatePair(t, func(i, j int) float64 { return 1.15 + 0.01*float64(i) + 0.002*float64(j) })
	code, out, errOut := compareCLI("compare", a, b, "--format", "json", "--fail-above", "time_to_first_token.avg=10%")
	assert.Equal(t, exitThreshold, code, errOut)
	assert.Contains(t, errOut, "time_to_first_token.avg")
	var got jsonMetrics
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	pa, err := results.LoadProfileJSON(a)
	require.NoError(t, err)
	pb, err := results.LoadProfileJSON(b)
	require.NoError(t, err)
	checked := 0
	for _, m := range pa.Metrics {
		if m.Tag == "min_request_timestamp" || m.Tag == "max_response_timestamp" {
			continue
		}
		for st, va := range m.Stats {
			vb, _ := pb.Value(m.Tag, st)
			row := findJSONRow(t, got, m.Tag, st)
			require.NotNil(t, row.ErrorPct, "%s.%s", m.Tag, st)
			if va == 0 {
				assert.Zero(t, *row.ErrorPct)
				continue
			}
			assert.InDelta(t, (vb-va)/va*100, *row.ErrorPct, 1e-9, "%s.%s", m.Tag, st)
			checked++
		}
	}
	assert.Greater(t, checked, 140)
	require.Len(t, got.Verdicts, 1)
	assert.Equal(t, "breach", got.Verdicts[0].Status)

	small, smallB := aggregatePair(t, func(int, int) float64 { return 1.05 })
	code, _, errOut = compareCLI("compare", small, smallB, "--fail-above", "time_to_first_token.avg=10%")
	assert.Equal(t, exitOK, code, errOut)
}

func findJSONRow(t *testing.T, got jsonMetrics, metric, stat string) struct {
	Metric, Stat         string
	Reference, Candidate float64
	ErrorPct             *float64 `json:"error_pct"`
} {
	t.Helper()
	for _, r := range got.Metrics {
		if r.Metric == metric && r.Stat == stat {
			return r
		}
	}
	require.Failf(t, "no row", "%s.%s", metric, stat)
	return got.Metrics[0]
}

func TestCompareFixtureWithItself(t *testing.T) {
	t.Parallel()
	dir := filepath.Dir(fixtureJSON)
	code, out, errOut := compareCLI("compare", dir, dir, "--gate", "--format", "json")
	require.Equal(t, exitOK, code, errOut)
	var got jsonMetrics
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.NotEmpty(t, got.Metrics)
	for _, r := range got.Metrics {
		require.NotNil(t, r.ErrorPct, "%s.%s", r.Metric, r.Stat)
		assert.Zero(t, *r.ErrorPct, "%s.%s", r.Metric, r.Stat)
	}
}

func TestCompareGateMissingFieldFails(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	ref, cand := stallPair(t, root)
	// a breach and a field the runs do not have: missing wins, exit 1
	code, out, errOut := compareCLI("compare", ref, cand, "--format", "junit",
		"--fail-above", "token_gap.max=10%,goodput.avg=5%")
	assert.Equal(t, exitFailure, code, errOut)
	assert.Contains(t, errOut, "gate incomplete: goodput.avg")
	assert.Contains(t, out, `<testsuites name="simbench compare" tests="2" failures="1" errors="1">`)
	assert.Contains(t, out, `<testcase classname="simbench.compare" name="token_gap.max">`)
	assert.Contains(t, out, `<error message="goodput.avg is not on both sides" type="missing">`)
}

func TestCompareReferenceSwap(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	ref, cand := stallPair(t, root)
	code, out, errOut := compareCLI("compare", cand, ref, "--reference", "b", "--format", "json")
	require.Equal(t, exitOK, code, errOut)
	var got struct {
		Reference struct{ Name string }
		Stalls    struct{ Reference, Candidate struct{ Count int } }
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	assert.Equal(t, "real", got.Reference.Name)
	assert.Equal(t, 7, got.Stalls.Candidate.Count)
}

func TestCompareUsageErrors(t *testing.T) {
	t.Parallel()
	dir := filepath.Dir(fixtureJSON)
	for _, args := range [][]string{
		{"compare", dir},
		{"compare", dir, dir, "--format", "html"},
		{"compare", dir, dir, "--reference", "c"},
		{"compare", dir, dir, "--fail-above", "ttft=10%"},
		{"compare", dir, dir, "--stall-k", "0"},
		{"plot", dir},
	} {
		code, _, errOut := compareCLI(args...)
		assert.Equal(t, exitUsage, code, "%v: %s", args, errOut)
	}
	code, _, _ := compareCLI("compare", dir, filepath.Join(dir, "nope"))
	assert.Equal(t, exitFailure, code)
}

// TestCompareGolden pins the three human-facing formats on the stall pair.
func TestCompareGolden(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	ref, cand := stallPair(t, root)
	for _, format := range []string{"text", "markdown", "json"} {
		code, out, errOut := compareCLI("compare", ref, cand, "--gate", "--format", format)
		require.Equal(t, exitThreshold, code, errOut)
		golden(t, "compare_stalls_"+format+".golden", []byte(strings.ReplaceAll(out, root, "$TMP")))
	}
}

func TestPlotCommand(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	_, cand := stallPair(t, root)
	out := filepath.Join(root, "plots")
	code, stdout, errOut := compareCLI("plot", cand, "-o", out)
	require.Equal(t, exitOK, code, errOut)
	pngs, err := filepath.Glob(filepath.Join(out, "*.png"))
	require.NoError(t, err)
	assert.Len(t, pngs, 6, stdout) // 4 CDFs, the timeline, the throughput
	for _, p := range pngs {
		checkPNGSize(t, p)
	}
	checkPNG(t, filepath.Join(out, "output_throughput.png"))
	code, _, errOut = compareCLI("plot", filepath.Dir(fixtureJSON), "-o", filepath.Join(root, "empty"), "--records", "/nonexistent.jsonl")
	assert.Equal(t, exitFailure, code, errOut)
}

// breakdownRun writes a run directory holding the fixture's aggregate
// file and a server metrics export with Dynamo's TTFT and stage histograms
// over 10 requests (means in ms).
func breakdownRun(t *testing.T, dir string, ttftMs float64, stages map[string]float64) {
	t.Helper()
	b, err := os.ReadFile(fixtureJSON)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, results.ProfileJSONName), b, 0o644))
	const n, ep = 10.0, "http://127.0.0.1:8000/metrics"
	series := func(labels map[string]string, meanMs float64) servermetrics.SeriesStats {
		return servermetrics.SeriesStats{EndpointURL: ep, Labels: labels,
			Stats: servermetrics.StatValues{{Name: "count", Value: n}, {Name: "sum", Value: n * meanMs / 1000}}}
	}
	e := &servermetrics.Export{SchemaVersion: servermetrics.SchemaVersion, Metrics: map[string]*servermetrics.Metric{
		"dynamo_frontend_time_to_first_token_seconds": {Type: servermetrics.KindHistogram,
			Series: []servermetrics.SeriesStats{series(nil, ttftMs)}},
		"dynamo_frontend_ttft_stage_seconds": {Type: servermetrics.KindHistogram},
	}}
	for _, name := range []string{"tokenize", "route", "backend", "first_token"} {
		if ms, ok := stages[name]; ok {
			m := e.Metrics["dynamo_frontend_ttft_stage_seconds"]
			m.Series = append(m.Series, series(map[string]string{"stage": name, "phase": "aggregated"}, ms))
		}
	}
	f, err := os.Create(filepath.Join(dir, servermetrics.JSONName))
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, servermetrics.WriteJSON(f, e))
}

// TestCompareTTFTBreakdown is the "done when" for compare: two runs
// with server metrics show the breakdown side by side and --plots draws
// the stacked bars.
func TestCompareTTFTBreakdown(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	real, sim := filepath.Join(root, "real"), filepath.Join(root, "sim")
	breakdownRun(t, real, 100, map[string]float64{"tokenize": 6, "route": 2, "backend": 75, "first_token": 17})
	// the simulator misses tokenize and overestimates the backend
	breakdownRun(t, sim, 120, map[string]float64{"route": 2, "backend": 101, "first_token": 17})
	dir := filepath.Join(root, "plots")
	code, out, errOut := compareCLI("compare", real, sim, "--plots", dir)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "TTFT breakdown: server-side stage means over the run window")
	assert.Regexp(t, `backend\s+aggregated\s+75\.00\s+101\.00\s+\+26\.00\s+\+34\.67%\s+\+130\.00%`, out)
	assert.Regexp(t, `tokenize\s+aggregated\s+6\.00\s+–\s+-6\.00\s+n/a\s+-30\.00%`, out)
	assert.Regexp(t, `TTFT\s+100\.00\s+120\.00\s+\+20\.00\s+\+20\.00%\s+\+100\.00%`, out)
	golden(t, "compare_breakdown_text.golden", []byte(strings.ReplaceAll(out, root, "$TMP")))
	png := filepath.Join(dir, "ttft_breakdown.png")
	checkPNG(t, png)
	checkPNGSize(t, png)

	code, out, errOut = compareCLI("compare", real, sim, "--format", "markdown", "--plots", dir)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "#### TTFT breakdown")
	assert.Contains(t, out, "![ttft_breakdown]("+png+")")

	// a run without server metrics: no section, a warning
	require.NoError(t, os.Remove(filepath.Join(sim, servermetrics.JSONName)))
	code, out, errOut = compareCLI("compare", real, sim, "--format", "json", "--plots", filepath.Join(root, "plots2"))
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, `"ttft_breakdown": null`)
	assert.Contains(t, out, "TTFT breakdown not compared: real has server-side TTFT stages, sim none")
	assert.NoFileExists(t, filepath.Join(root, "plots2", "ttft_breakdown.png"))
}

// TestCompareGateUnknownMetricIsUsageError: a misspelt metric in
// --fail-above is a usage error naming it and the nearest known metric; a
// known metric one side lacks stays a missing verdict (exit 1, above).
func TestCompareGateUnknownMetricIsUsageError(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	ref, cand := stallPair(t, root)
	code, out, errOut := compareCLI("compare", ref, cand, "--fail-above", "time_to_frist_token.avg=10%")
	assert.Equal(t, exitUsage, code, errOut)
	assert.Empty(t, out, "no report for a gate that cannot be read")
	assert.Contains(t, errOut, `time_to_frist_token.avg: unknown metric "time_to_frist_token" (did you mean "time_to_first_token"?)`)
}

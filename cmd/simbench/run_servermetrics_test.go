package main

import (
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/loadgen/openaitest"
	"github.com/simbench/simbench/servermetrics"
)

// dynamoServer is the scripted server with Dynamo's frontend metrics.
func dynamoServer(t *testing.T, failScrape func(n int) bool) (*openaitest.Server, *openaitest.Metrics, *httptest.Server) {
	t.Helper()
	m, err := openaitest.NewMetrics("M", nil)
	require.NoError(t, err)
	m.FailScrape = failScrape
	srv := &openaitest.Server{TTFT: 30 * time.Millisecond, ITL: 2 * time.Millisecond, Metrics: m}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return srv, m, ts
}

func runWithMetrics(ts *httptest.Server, dir string, extra ...string) (int, string, string) {
	args := append([]string{"run", "--url", ts.URL, "-m", "M", "--concurrency", "2", "--request-count", "8",
		"--isl", "8", "--osl", "4", "-o", dir, "--server-metrics-interval", "10ms", "--progress-interval", "1h"}, extra...)
	return runCmdLine(args...)
}

func ttftSeries(t *testing.T, e *servermetrics.Export) *servermetrics.SeriesStats {
	t.Helper()
	m, ok := e.Metrics[openaitest.FamilyTTFT]
	require.True(t, ok, "TTFT family exported")
	require.Len(t, m.Series, 1)
	return &m.Series[0]
}

// assertAdditive checks ttft_breakdown.json: Dynamo's stages, additive, the
// stage means adding up to the TTFT mean within 1 %.
func assertAdditive(t *testing.T, dir string, requests float64) {
	t.Helper()
	b, err := servermetrics.LoadTTFTBreakdownJSON(filepath.Join(dir, servermetrics.TTFTBreakdownName))
	require.NoError(t, err)
	assert.Equal(t, servermetrics.Dynamo, b.Server)
	assert.True(t, b.Additive, b.Reason)
	assert.Equal(t, requests, b.TTFTCount)
	assert.GreaterOrEqual(t, b.TTFTMeanMs, 30.0, "server-side TTFT ≥ the scripted 30 ms")
	require.Len(t, b.Stages, len(openaitest.DefaultStages()))
	var sum float64
	for i, st := range b.Stages {
		sum += st.MeanMs
		assert.Equal(t, requests, st.Count, st.Key())
		want := openaitest.DefaultStages()[i]
		assert.Equal(t, want.Stage+"/"+want.Phase, st.Key())
		assert.InDelta(t, want.Fraction*b.TTFTMeanMs, st.MeanMs, 1e-6*b.TTFTMeanMs, st.Key())
	}
	assert.Less(t, math.Abs(sum-b.TTFTMeanMs), 0.01*b.TTFTMeanMs)
}

// TestRunServerMetricsDynamo is the "done when": a run against a
// server with Dynamo's metrics writes server_metrics_export.json and prints
// a TTFT breakdown whose stage means add up to the TTFT mean.
func TestRunServerMetricsDynamo(t *testing.T) {
	_, m, ts := dynamoServer(t, nil)
	dir := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := runWithMetrics(ts, dir)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.NotContains(t, stderr, "server metrics")

	e, err := servermetrics.LoadJSON(filepath.Join(dir, servermetrics.JSONName))
	require.NoError(t, err)
	csv := string(runReadFile(t, filepath.Join(dir, servermetrics.CSVName)))
	assert.Contains(t, csv, "histogram,"+openaitest.FamilyTTFT+",seconds,8,")
	url := ts.URL + "/metrics"
	assert.Equal(t, []string{url}, e.Summary.EndpointsSuccessful)
	assert.GreaterOrEqual(t, e.Summary.EndpointInfo[url].TotalFetches, 2, "baseline and final")
	assert.Equal(t, m.Scrapes(), e.Summary.EndpointInfo[url].TotalFetches+1, "the probe, then every fetch")
	ttft := ttftSeries(t, e)
	count, _ := ttft.Stat("count")
	assert.Equal(t, 8.0, count)
	reqs := e.Metrics[strings.TrimSuffix(openaitest.FamilyRequests, "_total")] // AIPerf keys counters without _total
	require.NotNil(t, reqs)
	total, _ := reqs.Series[0].Stat("total")
	assert.Equal(t, 8.0, total)
	assert.NotNil(t, e.InputConfig, "input_config as in the profile")

	assertAdditive(t, dir, 8)
	assert.Contains(t, stdout, "TTFT breakdown (dynamo, "+openaitest.FamilyTTFT)
	assert.Contains(t, stdout, "backend")
	assert.Contains(t, stdout, "additive: stage means add up to the TTFT mean")
	assert.Less(t, strings.Index(stdout, "Time to First Token"), strings.Index(stdout, "TTFT breakdown"),
		"the breakdown follows the summary")
}

// TestRunServerMetricsScrapeFailsMidRun: a 500 from /metrics mid-run is a
// warning; the run succeeds and the export is still complete.
func TestRunServerMetricsScrapeFailsMidRun(t *testing.T) {
	// Scrape 0 is the probe, 1 the baseline, 2 the first tick.
	_, _, ts := dynamoServer(t, func(n int) bool { return n == 2 })
	dir := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := runWithMetrics(ts, dir)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Contains(t, stderr, "warning: server metrics: "+ts.URL+"/metrics: HTTP 500")

	e, err := servermetrics.LoadJSON(filepath.Join(dir, servermetrics.JSONName))
	require.NoError(t, err)
	assert.Equal(t, map[string]int{ts.URL + "/metrics": 1}, e.Simbench.FailedFetches)
	count, _ := ttftSeries(t, e).Stat("count")
	assert.Equal(t, 8.0, count)
	assertAdditive(t, dir, 8)
}

func TestRunNoServerMetrics(t *testing.T) {
	_, m, ts := dynamoServer(t, nil)
	dir := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := runWithMetrics(ts, dir, "--no-server-metrics")
	require.Equal(t, 0, code, stderr)
	assert.Zero(t, m.Scrapes())
	assert.NoFileExists(t, filepath.Join(dir, servermetrics.JSONName))
	assert.NoFileExists(t, filepath.Join(dir, servermetrics.TTFTBreakdownName))
	assert.NotContains(t, stdout, "TTFT breakdown")
	assert.NotContains(t, stderr, "server metrics")
}

// TestRunDefaultMetricsAbsent: a server without /metrics is not scraped,
// with one note; --quiet drops the note.
func TestRunDefaultMetricsAbsent(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/v1/", &openaitest.Server{TTFT: 2 * time.Millisecond})
	ts := httptest.NewServer(mux) // GET /metrics: 404
	defer ts.Close()
	dir := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := runWithMetrics(ts, dir)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, 1, strings.Count(stderr, "server metrics: "))
	assert.Contains(t, stderr, "server metrics: "+ts.URL+"/metrics not scraped: HTTP 404")
	assert.NoFileExists(t, filepath.Join(dir, servermetrics.JSONName))
	assert.NotContains(t, stdout, "TTFT breakdown")

	code, _, stderr = runWithMetrics(ts, filepath.Join(t.TempDir(), "quiet"), "--quiet")
	require.Equal(t, 0, code, stderr)
	assert.NotContains(t, stderr, "server metrics")
}

// TestRunExplicitServerMetricsNeverAnswers: an explicit endpoint is scraped
// even when it never answers: warnings, no file, exit 0.
func TestRunExplicitServerMetricsNeverAnswers(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	dead := l.Addr().String()
	require.NoError(t, l.Close())
	ts := httptest.NewServer(&openaitest.Server{TTFT: 2 * time.Millisecond})
	defer ts.Close()
	dir := filepath.Join(t.TempDir(), "run")
	code, _, stderr := runWithMetrics(ts, dir, "--server-metrics", dead)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "warning: server metrics: http://"+dead+"/metrics: ")
	assert.Contains(t, stderr, "no endpoint was scraped successfully")
	assert.NoFileExists(t, filepath.Join(dir, servermetrics.JSONName))

	code, _, stderr = runWithMetrics(ts, filepath.Join(t.TempDir(), "bad"), "--server-metrics", "ftp://x")
	assert.Equal(t, exitUsage, code, stderr)
}

// TestRunInterruptedWritesServerMetrics: Ctrl-C still takes the final
// scrape and writes the export.
func TestRunInterruptedWritesServerMetrics(t *testing.T) {
	m, err := openaitest.NewMetrics("M", nil)
	require.NoError(t, err)
	srv := &openaitest.Server{TTFT: 10 * time.Millisecond, ITL: 30 * time.Millisecond, Metrics: m}
	dir := runInterruptedAt(t, srv, 5, "--server-metrics-interval", "10ms")
	e, err := servermetrics.LoadJSON(filepath.Join(dir, servermetrics.JSONName))
	require.NoError(t, err)
	count, _ := ttftSeries(t, e).Stat("count")
	assert.GreaterOrEqual(t, count, 1.0, "the requests that got a first token")
	assert.Less(t, count, 50.0)
	assert.FileExists(t, filepath.Join(dir, servermetrics.TTFTBreakdownName))
}

// TestRunServerMetricsExcludeWarmup: the scrape taken when the profiling
// phase starts is the window's reference, so the server-side counts are the
// profiling requests' only, even with a long scrape interval.
func TestRunServerMetricsExcludeWarmup(t *testing.T) {
	_, _, ts := dynamoServer(t, nil)
	dir := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := runWithMetrics(ts, dir, "--warmup-request-count", "3", "--server-metrics-interval", "1h")
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.NotContains(t, stderr, "warmup request(s) were still in flight")
	e, err := servermetrics.LoadJSON(filepath.Join(dir, servermetrics.JSONName))
	require.NoError(t, err)
	count, _ := ttftSeries(t, e).Stat("count")
	assert.Equal(t, 8.0, count, "the 3 warmup requests are outside the window")
	assertAdditive(t, dir, 8)
}

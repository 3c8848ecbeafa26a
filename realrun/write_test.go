package realrun

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/simbench/simbench/internal/warning"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/loadgen"
	"github.com/simbench/simbench/loadgen/openaitest"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/servermetrics"
	"github.com/simbench/simbench/traces"
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

// syncBuffer is a bytes.Buffer safe for concurrent use (the scraper warns
// from its own goroutine).
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func ptr[T any](v T) *T { return &v }

// testOptions run a closed loop of 2 (8 requests of 8 → 4 tokens) against
// url, scraping every 10 ms; log gets the warnings and notes.
func testOptions(url string, log *syncBuffer) Options {
	ep := loadgen.Endpoint{URL: url, Type: loadgen.EndpointChat, Model: "M", Streaming: true, Timeout: time.Minute,
		Prompts: loadgen.Prompts{VocabSize: 32000, BlockSize: traces.MooncakeBlockSize}}
	return Options{Config: loadgen.Config{Endpoint: ep, Grace: 30 * time.Second},
		Spec: traces.Spec{Concurrency: ptr(2), RequestCount: ptr(8), ISL: ptr(8), OSL: ptr(4)},
		// Scrapes every 10 ms, each with time to answer on a loaded machine.
		ServerMetrics: ServerMetricsOptions{Interval: 10 * time.Millisecond, Timeout: 5 * time.Second}, Log: log,
		Warn: warning.To(log)}
}

// runWithMetrics runs the options' workload into dir; it returns the run's
// text report and its log.
func runWithMetrics(t *testing.T, dir string, o Options) (stdout, stderr string) {
	t.Helper()
	log := o.Log.(*syncBuffer)
	wl, _, err := o.Spec.Build(0)
	require.NoError(t, err)
	res, err := WriteRun(context.Background(), dir, wl, o)
	require.NoError(t, err, log.String())
	var out bytes.Buffer
	require.NoError(t, res.WriteText(&out))
	return out.String(), log.String()
}

func ttftSeries(t *testing.T, e *servermetrics.Export) *servermetrics.SeriesStats {
	t.Helper()
	m, ok := e.Metrics[openaitest.FamilyTTFT]
	require.True(t, ok, "TTFT family exported")
	require.Len(t, m.Series, 1)
	return &m.Series[0]
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
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
	stdout, stderr := runWithMetrics(t, dir, testOptions(ts.URL, &syncBuffer{}))
	assert.NotContains(t, stderr, "server metrics")

	e, err := servermetrics.LoadJSON(filepath.Join(dir, servermetrics.JSONName))
	require.NoError(t, err)
	csv := string(readFile(t, filepath.Join(dir, servermetrics.CSVName)))
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
	_, stderr := runWithMetrics(t, dir, testOptions(ts.URL, &syncBuffer{}))
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
	o := testOptions(ts.URL, &syncBuffer{})
	o.ServerMetrics.Off = true
	stdout, stderr := runWithMetrics(t, dir, o)
	assert.Zero(t, m.Scrapes())
	assert.NoFileExists(t, filepath.Join(dir, servermetrics.JSONName))
	assert.NoFileExists(t, filepath.Join(dir, servermetrics.TTFTBreakdownName))
	assert.NotContains(t, stdout, "TTFT breakdown")
	assert.NotContains(t, stderr, "server metrics")
}

// TestRunDefaultMetricsAbsent: a server without /metrics is not scraped,
// with one note; Quiet drops the note.
func TestRunDefaultMetricsAbsent(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/v1/", &openaitest.Server{TTFT: 2 * time.Millisecond})
	ts := httptest.NewServer(mux) // GET /metrics: 404
	defer ts.Close()
	dir := filepath.Join(t.TempDir(), "run")
	stdout, stderr := runWithMetrics(t, dir, testOptions(ts.URL, &syncBuffer{}))
	assert.Equal(t, 1, strings.Count(stderr, "server metrics: "))
	assert.Contains(t, stderr, "server metrics: "+ts.URL+"/metrics not scraped: HTTP 404")
	assert.NoFileExists(t, filepath.Join(dir, servermetrics.JSONName))
	assert.NotContains(t, stdout, "TTFT breakdown")

	o := testOptions(ts.URL, &syncBuffer{})
	o.Quiet = true
	_, stderr = runWithMetrics(t, filepath.Join(t.TempDir(), "quiet"), o)
	assert.NotContains(t, stderr, "server metrics")
}

// TestRunExplicitServerMetricsNeverAnswers: an explicit endpoint is scraped
// even when it never answers: warnings, no file, no failure.
func TestRunExplicitServerMetricsNeverAnswers(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	dead := l.Addr().String()
	require.NoError(t, l.Close())
	ts := httptest.NewServer(&openaitest.Server{TTFT: 2 * time.Millisecond})
	defer ts.Close()
	dir := filepath.Join(t.TempDir(), "run")
	o := testOptions(ts.URL, &syncBuffer{})
	url, err := loadgen.NormalizeMetricsURL(dead)
	require.NoError(t, err)
	o.ServerMetrics.URLs = []string{url}
	_, stderr := runWithMetrics(t, dir, o)
	assert.Contains(t, stderr, "warning: server metrics: http://"+dead+"/metrics: ")
	assert.Contains(t, stderr, "no endpoint was scraped successfully")
	assert.NoFileExists(t, filepath.Join(dir, servermetrics.JSONName))
}

// TestRunInterruptedWritesServerMetrics: an interrupt still takes the final
// scrape and writes the export.
func TestRunInterruptedWritesServerMetrics(t *testing.T) {
	m, err := openaitest.NewMetrics("M", nil)
	require.NoError(t, err)
	srv := &openaitest.Server{TTFT: 10 * time.Millisecond, ITL: 30 * time.Millisecond, Metrics: m}
	dir := runInterruptedAt(t, srv, 5)
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
	o := testOptions(ts.URL, &syncBuffer{})
	o.Spec.WarmupRequestCount, o.ServerMetrics.Interval = ptr(3), time.Hour
	_, stderr := runWithMetrics(t, dir, o)
	assert.NotContains(t, stderr, "warmup request(s) were still in flight")
	e, err := servermetrics.LoadJSON(filepath.Join(dir, servermetrics.JSONName))
	require.NoError(t, err)
	count, _ := ttftSeries(t, e).Stat("count")
	assert.Equal(t, 8.0, count, "the 3 warmup requests are outside the window")
	assertAdditive(t, dir, 8)
}

// TestRunInterruptedFilesAreValid interrupts a run once the server has seen
// the fourth request, while those streams are still running: the files
// are written and valid, the requests in flight cancelled.
func TestRunInterruptedFilesAreValid(t *testing.T) {
	dir := runInterruptedAt(t, &openaitest.Server{TTFT: 30 * time.Millisecond, ITL: 30 * time.Millisecond}, 3)
	run, err := results.LoadRun(dir)
	require.NoError(t, err)
	assert.True(t, run.Profile.WasCancelled)
	n, _ := run.Profile.Value(results.TagErrorRequestCount, "avg")
	assert.GreaterOrEqual(t, n, 4.0, "the requests in flight were cancelled")
	require.NotEmpty(t, run.Profile.ErrorSummary)
	assert.Equal(t, 499, run.Profile.ErrorSummary[0].Details.Code)
	lines := strings.Split(strings.TrimSpace(string(readFile(t, filepath.Join(dir, results.RecordsName)))), "\n")
	assert.Less(t, len(lines), 50, "later requests were never sent")
}

// runInterruptedAt runs a 50-request trace (a request every 20 ms) against
// srv and cancels the run's context when the server sees request n
// (0-based); it checks the outcome is ErrInterrupted and returns the run
// directory.
func runInterruptedAt(t *testing.T, srv *openaitest.Server, n int) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv.FaultFor = func(i int) openaitest.Fault {
		if i == n {
			cancel()
		}
		return openaitest.None
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	var b strings.Builder
	for i := range 50 {
		fmt.Fprintf(&b, `{"timestamp": %d, "input_length": 8, "output_length": 10, "hash_ids": [%d]}`+"\n", i*20, i%4)
	}
	trace := filepath.Join(t.TempDir(), "trace.jsonl")
	require.NoError(t, os.WriteFile(trace, []byte(b.String()), 0o644))
	o := testOptions(ts.URL, &syncBuffer{})
	o.Spec = traces.Spec{Trace: &trace}
	o.Quiet = true
	wl, _, err := o.Spec.Build(0)
	require.NoError(t, err)
	dir := filepath.Join(t.TempDir(), "run")
	res, err := WriteRun(ctx, dir, wl, o)
	require.NoError(t, err)
	assert.ErrorIs(t, res.Check(-1), ErrInterrupted)
	return dir
}

// TestCheckCountsEmptyStreamsAsFailed: streams that end normally without
// content are failed requests in the aggregate (AIPerf's
// InvalidInferenceResultError) but printed "8 ok, 0 errors" and passed
// --max-error-rate; the summary line and the exit gates use the aggregate's
// counts now.
func TestCheckCountsEmptyStreamsAsFailed(t *testing.T) {
	for _, tc := range []struct {
		name    string
		fault   func(n int) openaitest.Fault
		maxRate float64
		line    string
		want    string
	}{
		{"all empty", func(int) openaitest.Fault { return openaitest.NoContent }, -1,
			"0 ok, 8 errors", "no request succeeded: 8 sent, 8 failed"},
		{"a quarter empty", func(n int) openaitest.Fault {
			if n%4 == 0 {
				return openaitest.NoContent
			}
			return openaitest.None
		}, 0.1, "6 ok, 2 errors", "2 of 8 requests failed (25.00%), above --max-error-rate 10.00%"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := httptest.NewServer(&openaitest.Server{FaultFor: tc.fault})
			defer ts.Close()
			o := testOptions(ts.URL, &syncBuffer{})
			o.ServerMetrics, o.Quiet = ServerMetricsOptions{Off: true}, true
			wl, _, err := o.Spec.Build(0)
			require.NoError(t, err)
			res, err := WriteRun(context.Background(), filepath.Join(t.TempDir(), "run"), wl, o)
			require.NoError(t, err)
			var out bytes.Buffer
			require.NoError(t, res.WriteText(&out))
			assert.Contains(t, out.String(), tc.line)
			assert.EqualError(t, res.Check(tc.maxRate), tc.want+func() string {
				if tc.maxRate < 0 {
					return " (their errors are in error_summary)"
				}
				return ""
			}())
		})
	}
}

// TestRunRedactsURLCredentials: credentials in --url and in a
// --server-metrics URL reach no file of the run directory and no log line;
// input_config and the server-metrics export name the endpoints redacted.
func TestRunRedactsURLCredentials(t *testing.T) {
	_, _, ts := dynamoServer(t, nil)
	withCreds := strings.Replace(ts.URL, "http://", "http://user:s3cret-pw@", 1)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	dead := l.Addr().String()
	require.NoError(t, l.Close())
	o := testOptions(withCreds, &syncBuffer{})
	o.ServerMetrics.URLs = []string{"http://scraper:s3cret-pw@" + dead + "/metrics"}
	dir := filepath.Join(t.TempDir(), "run")
	_, stderr := runWithMetrics(t, dir, o)
	assert.NotContains(t, stderr, "s3cret-pw")
	assert.Contains(t, stderr, "redacted@"+dead, "the failing endpoint is still named")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.NotEmpty(t, entries)
	for _, e := range entries {
		assert.NotContains(t, string(readFile(t, filepath.Join(dir, e.Name()))), "s3cret-pw", e.Name())
	}
	p, err := results.LoadProfileJSON(filepath.Join(dir, results.ProfileJSONName))
	require.NoError(t, err)
	ic, err := results.ParseInputConfig(p.InputConfig)
	require.NoError(t, err)
	assert.Equal(t, strings.Replace(ts.URL, "http://", "http://redacted@", 1), ic.Endpoint.URL)
	e, err := servermetrics.LoadJSON(filepath.Join(dir, servermetrics.JSONName))
	require.NoError(t, err)
	assert.Contains(t, e.Summary.EndpointsSuccessful, strings.Replace(ts.URL, "http://", "http://redacted@", 1)+"/metrics")
}

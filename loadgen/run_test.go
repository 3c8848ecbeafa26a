package loadgen

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/simbench/simbench/loadgen/openaitest"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/traces"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// collect is a Sink that keeps the records.
type collect struct {
	mu   sync.Mutex
	recs []*results.Record
}

func (c *collect) add(r *results.Record) (results.RecordMetrics, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.recs = append(c.recs, r)
	return results.ComputeMetrics(r), nil
}

func everyMs(n int, stepMs float64, osl int) *traces.Workload {
	reqs := make([]traces.Request, n)
	for i := range reqs {
		reqs[i] = traces.Request{Row: i, TimestampMs: float64(i) * stepMs, HasTimestamp: true,
			InputLength: 16, OutputLength: osl, HashIDs: []int64{int64(i % 3)}}
	}
	return &traces.Workload{Requests: reqs, BlockSize: 512}
}

func TestRunKeepsScheduleAndRecordsEverything(t *testing.T) {
	t.Parallel()
	srv := &openaitest.Server{TTFT: 20 * time.Millisecond, ITL: 2 * time.Millisecond, Record: true,
		FaultFor: func(n int) openaitest.Fault {
			if n == 3 {
				return openaitest.HTTP500
			}
			return openaitest.None
		}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	wl := everyMs(20, 10, 5)
	wl.Requests[0].Warmup, wl.Requests[1].Warmup = true, true
	wl.Concurrency = 0
	var sink collect
	var snaps []Progress
	rep, err := Run(context.Background(), wl, Config{Endpoint: chatEndpoint(ts.URL),
		Progress: func(p Progress) { snaps = append(snaps, p) }, ProgressEvery: 50 * time.Millisecond}, sink.add)
	require.NoError(t, err)
	require.Len(t, sink.recs, 20)
	assert.Equal(t, 18, rep.Sent)
	assert.Equal(t, 2, rep.Warmup)
	assert.Equal(t, 1, rep.Errors)
	assert.False(t, rep.Interrupted)
	require.NotEmpty(t, snaps)
	assert.True(t, snaps[len(snaps)-1].Final)
	assert.EqualValues(t, 20, snaps[len(snaps)-1].Done)

	s, _, ok := rep.SendLag()
	require.True(t, ok)
	assert.Equal(t, 17, s.Count, "send lag of the successful profiling requests")
	assert.GreaterOrEqual(t, s.P[0], 0.0, "never sent early; how late is a timing figure, checked in cmd/simbench's TestRunAcceptance")
	req, _ := rep.RequestedRate()
	assert.InDelta(t, 100, req, 1e-9, "10 ms apart")

	ids := map[string]bool{}
	for _, r := range sink.recs {
		assert.False(t, ids[r.ID], "unique x_request_id")
		ids[r.ID] = true
		assert.NotZero(t, r.IntendedNs)
		assert.GreaterOrEqual(t, r.StartNs, r.IntendedNs, "never sent early")
	}
	for _, rq := range srv.Requests() {
		assert.True(t, ids[rq.Header.Get("X-Request-ID")])
	}
}

func TestRunClosedLoopMultiTurn(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(&openaitest.Server{TTFT: 5 * time.Millisecond, ITL: time.Millisecond})
	defer ts.Close()
	wl, err := traces.Synthesize(traces.SynthSpec{Concurrency: 2, RequestCount: 8, ISL: 20, OSL: 3, Turns: 2, TurnDelayMs: 5, BlockSize: 8, Seed: 3})
	require.NoError(t, err)
	var sink collect
	rep, err := Run(context.Background(), wl, Config{Endpoint: chatEndpoint(ts.URL)}, sink.add)
	require.NoError(t, err)
	require.Len(t, sink.recs, 8)
	assert.Zero(t, rep.Errors)
	bySession := map[string][]*results.Record{}
	for _, r := range sink.recs {
		bySession[r.ConversationID] = append(bySession[r.ConversationID], r)
	}
	require.Len(t, bySession, 4)
	for id, recs := range bySession {
		require.Len(t, recs, 2, id)
		first, second := recs[0], recs[1]
		if first.Turn == 1 {
			first, second = second, first
		}
		assert.Equal(t, first.CorrelationID, second.CorrelationID, "one x_correlation_id per session")
		assert.GreaterOrEqual(t, second.StartNs, first.EndNs+int64(5*time.Millisecond), "turn 2 after turn 1 + delay")
	}
}

// TestRunInterruptWritesCompleteFiles cancels a run in the middle, as the
// first SIGINT does, and checks the run directory is complete and valid.
func TestRunInterruptWritesCompleteFiles(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(&openaitest.Server{TTFT: 50 * time.Millisecond, ITL: 20 * time.Millisecond})
	defer ts.Close()
	dir := t.TempDir()
	rw, err := results.CreateRun(dir, results.RunOptions{})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	var done atomic.Int32
	sink := func(r *results.Record) (results.RecordMetrics, error) {
		if done.Add(1) == 3 {
			cancel() // three requests finished; the later ones are in flight
		}
		return rw.Add(r)
	}
	rep, err := Run(ctx, everyMs(40, 20, 10), Config{Endpoint: chatEndpoint(ts.URL)}, sink)
	require.NoError(t, err)
	p, err := rw.Close(results.RunMeta{StartNs: rep.StartNs, EndNs: rep.EndNs, WasCancelled: rep.Interrupted})
	require.NoError(t, err)

	assert.True(t, rep.Interrupted)
	assert.Less(t, rep.Sent, 40, "later requests were never sent")
	assert.Equal(t, rep.Sent, rep.Finished, "every sent request was recorded")
	assert.Positive(t, rep.Cancelled)
	assert.GreaterOrEqual(t, rep.Finished-rep.Cancelled, 3, "requests done before the interrupt are kept")

	lines := readLines(t, filepath.Join(dir, results.RecordsName))
	require.Len(t, lines, rep.Sent)
	cancelled := 0
	for _, l := range lines {
		var v struct {
			Metadata struct {
				WasCancelled bool `json:"was_cancelled"`
			} `json:"metadata"`
			Error *results.ErrorDetails `json:"error"`
		}
		require.NoError(t, json.Unmarshal([]byte(l), &v), l)
		if v.Metadata.WasCancelled {
			cancelled++
			require.NotNil(t, v.Error)
			assert.Equal(t, 499, v.Error.Code)
			assert.Equal(t, "RequestCancellationError", v.Error.Type)
		}
	}
	assert.Equal(t, rep.Cancelled, cancelled)

	run, err := results.LoadRun(dir)
	require.NoError(t, err)
	assert.True(t, run.Profile.WasCancelled)
	fromJSONL, err := results.SummarizeJSONL(filepath.Join(dir, results.RecordsName), nil)
	require.NoError(t, err)
	for _, m := range fromJSONL.Metrics {
		got, ok := p.Metric(m.Tag)
		require.True(t, ok, m.Tag)
		assert.Equal(t, m.Stats, got.Stats, m.Tag)
	}
	_, err = os.Stat(filepath.Join(dir, results.ProfileCSVName))
	assert.NoError(t, err)
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) != "" {
			out = append(out, sc.Text())
		}
	}
	require.NoError(t, sc.Err())
	return out
}

func TestRunDurationLimitAndGrace(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(&openaitest.Server{TTFT: 10 * time.Millisecond, ITL: 50 * time.Millisecond})
	defer ts.Close()
	var sink collect
	rep, err := Run(context.Background(), everyMs(100, 10, 20), Config{Endpoint: chatEndpoint(ts.URL),
		Limits: Limits{Duration: 100 * time.Millisecond}, Grace: 150 * time.Millisecond}, sink.add)
	require.NoError(t, err)
	assert.Equal(t, 10, rep.Sent, "deadlines 0..90 ms are inside 100 ms")
	assert.Equal(t, 10, rep.Cancelled, "1 s streams outlive the grace period: cancelled, not awaited")
	assert.False(t, rep.Interrupted)
}

func TestRunRejectsBadConfig(t *testing.T) {
	t.Parallel()
	var sink collect
	_, err := Run(context.Background(), everyMs(1, 1, 1), Config{Endpoint: Endpoint{Type: "x"}}, sink.add)
	require.Error(t, err)
	_, err = Run(context.Background(), &traces.Workload{Requests: make([]traces.Request, 2)}, Config{Endpoint: chatEndpoint("h")}, sink.add)
	require.ErrorContains(t, err, "pacer: requests without timestamps need a concurrency")
}

// TestRunGraceOnlyAfterDurationLimit: without a duration limit the grace
// period never cancels requests; every stream runs to completion.
func TestRunGraceOnlyAfterDurationLimit(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(&openaitest.Server{TTFT: 10 * time.Millisecond, ITL: 10 * time.Millisecond})
	defer ts.Close()
	var sink collect
	rep, err := Run(context.Background(), everyMs(3, 1, 20), Config{Endpoint: chatEndpoint(ts.URL),
		Grace: 20 * time.Millisecond}, sink.add)
	require.NoError(t, err)
	assert.Equal(t, 3, rep.Sent)
	assert.Equal(t, 0, rep.Cancelled, "200 ms streams outlive the 20 ms grace but no duration limit applies")
}

// TestRunOnProfilingStart: the hook runs once, after every warmup request
// completed and before the first profiling send; never without warmup.
func TestRunOnProfilingStart(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(&openaitest.Server{TTFT: 5 * time.Millisecond, ITL: time.Millisecond})
	defer ts.Close()
	for _, warmups := range []int{0, 2} {
		wl := everyMs(6, 2, 3)
		for i := 0; i < warmups; i++ {
			wl.Requests[i].Warmup = true
		}
		var calls []int64
		var sink collect
		_, err := Run(context.Background(), wl, Config{Endpoint: chatEndpoint(ts.URL),
			OnProfilingStart: func(at int64) { calls = append(calls, at) }}, sink.add)
		require.NoError(t, err)
		require.Len(t, sink.recs, 6)
		if warmups == 0 {
			assert.Empty(t, calls)
			continue
		}
		require.Len(t, calls, 1)
		for _, r := range sink.recs {
			if r.Warmup {
				assert.LessOrEqual(t, r.EndNs, calls[0], "warmup done before the hook")
			} else {
				assert.GreaterOrEqual(t, r.StartNs, calls[0], "profiling sends after the hook")
			}
		}
	}
}

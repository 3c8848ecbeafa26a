package compare

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/simbench/simbench/results"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// update rewrites the golden files: go test ./compare/ -run Multi -update
var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// testdataDir is absolute: some tests change the working directory.
var testdataDir, _ = filepath.Abs("testdata")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join(testdataDir, name)
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file %s: run go test -update", path)
	assert.Equal(t, string(want), string(got), "output differs from %s (go test -update if intended)", path)
}

// writeSmallRun writes a run of 6 sequential requests with the given TTFT
// and 5 one-token chunks gapMs apart.
func writeSmallRun(t *testing.T, dir string, ttftMs, gapMs float64) {
	t.Helper()
	rw, err := results.CreateRun(dir, results.RunOptions{Buffered: true})
	require.NoError(t, err)
	start := int64(1_700_000_000_000_000_000)
	for i := range 6 {
		r := &results.Record{ID: "r", SessionNum: i, TraceRow: i, StartNs: start, AckNs: start + 1e6,
			InputTokens: 100, OutputTokens: 5}
		at := start + int64(ttftMs*1e6)
		for c := range 5 {
			if c > 0 {
				at += int64(gapMs * 1e6)
			}
			r.Chunks = append(r.Chunks, results.Chunk{AtNs: at, Tokens: 1})
		}
		r.EndNs = at
		start = at + 1e6
		_, err := rw.Add(r)
		require.NoError(t, err)
	}
	_, err = rw.Close(results.RunMeta{BenchmarkID: "multi"})
	require.NoError(t, err)
}

// multiRuns writes reference runs with TTFT 30 ms + jitter and candidate
// runs 20 % slower to first token; the token gaps are 10 ms on both.
func multiRuns(t *testing.T, n int) (refs, cands []*Input) {
	t.Chdir(t.TempDir()) // relative, stable paths in the golden output
	jitter := []float64{0, 1, -1, 0.5, -0.5}
	for i := range n {
		for _, side := range []struct {
			name string
			ttft float64
			ins  *[]*Input
		}{{"real", 30, &refs}, {"sim", 36, &cands}} {
			dir := filepath.Join(side.name, fmt.Sprintf("run_%04d", i+1))
			writeSmallRun(t, dir, side.ttft+jitter[i%len(jitter)], 10)
			in, err := Open(dir)
			require.NoError(t, err)
			*side.ins = append(*side.ins, in)
		}
	}
	return refs, cands
}

var multiGate = []Threshold{
	{"time_to_first_token", "avg", 10}, {"inter_token_latency", "avg", 10},
	{"request_latency", "avg", 1}, {"no_such_metric", "avg", 10},
}

func TestCompareRunsSignificance(t *testing.T) {
	refs, cands := multiRuns(t, 4)
	rep, err := Compare(refs, cands, Options{Stall: DefaultStallOptions, Thresholds: multiGate})
	require.NoError(t, err)
	ttft, ok := rep.Row("time_to_first_token", "avg")
	require.True(t, ok)
	assert.Equal(t, []float64{30, 31, 29, 30.5}, ttft.RefRuns.Values)
	assert.Equal(t, 30.25, ttft.Reference)
	assert.Equal(t, 29.0, ttft.RefRuns.Min)
	assert.Equal(t, 36.25, ttft.Candidate)
	assert.InDelta(t, 600.0/30.25, *ttft.ErrorPct, 1e-9)
	assert.InDelta(t, 2.0/70, ttft.Test.P, 1e-12) // completely apart: the smallest p of 4 vs 4
	assert.True(t, ttft.Significant)
	itl, _ := rep.Row("inter_token_latency", "avg")
	assert.Equal(t, 1.0, itl.Test.P) // every run identical
	assert.False(t, itl.Significant)
	status := map[string]string{}
	for _, v := range rep.Verdicts {
		status[v.Field()] = v.Status
	}
	assert.Equal(t, map[string]string{"time_to_first_token.avg": Breach, "inter_token_latency.avg": Pass,
		"request_latency.avg": Breach, "no_such_metric.avg": Missing}, status)
	for _, w := range rep.Warnings {
		assert.NotContains(t, w.Msg, "smallest possible p-value")
	}
}

func TestCompareRunsTooFewRunsIsNoise(t *testing.T) {
	refs, cands := multiRuns(t, 3)
	rep, err := Compare(refs, cands, Options{Stall: DefaultStallOptions, Thresholds: multiGate[:1]})
	require.NoError(t, err)
	require.Len(t, rep.Verdicts, 1)
	assert.Equal(t, NotSignificant, rep.Verdicts[0].Status)
	assert.Contains(t, rep.Verdicts[0].Reason, "p = 0.100 > α = 0.05")
	assert.Empty(t, rep.Breaches())
	assert.Contains(t, warningText(rep.Warnings), "smallest possible p-value is 0.100 > α = 0.05")
	assert.Contains(t, warningText(rep.Warnings), "use at least 4 runs per side")
}

func TestCompareRunsGolden(t *testing.T) {
	refs, cands := multiRuns(t, 4)
	rep, err := Compare(refs, cands, Options{Stall: DefaultStallOptions, Thresholds: multiGate})
	require.NoError(t, err)
	for _, f := range []struct {
		name  string
		write func(*bytes.Buffer) error
	}{
		{"multi_text.golden", func(b *bytes.Buffer) error { return WriteText(b, rep) }},
		{"multi_markdown.golden", func(b *bytes.Buffer) error { return WriteMarkdown(b, rep, []string{"plots/error_pct.png"}) }},
		{"multi_junit.golden", func(b *bytes.Buffer) error { return WriteJUnit(b, rep) }},
		{"multi_json.golden", func(b *bytes.Buffer) error { return WriteJSON(b, rep) }},
	} {
		var b bytes.Buffer
		require.NoError(t, f.write(&b))
		golden(t, f.name, b.Bytes())
	}
	var js map[string]any
	var b bytes.Buffer
	require.NoError(t, WriteJSON(&b, rep))
	require.NoError(t, json.Unmarshal(b.Bytes(), &js))
	assert.Equal(t, "multi-run", js["mode"])
}

func TestCompareRunsErrors(t *testing.T) {
	_, err := Compare(nil, nil, Options{})
	assert.Error(t, err)
	refs, cands := multiRuns(t, 1)
	_, err = Compare(refs, cands, Options{Alpha: 1.5})
	assert.ErrorContains(t, err, "alpha")
}

func TestMultiChartRowsAreMedians(t *testing.T) {
	refs, cands := multiRuns(t, 4)
	rep, err := Compare(refs, cands, Options{Stall: DefaultStallOptions, Thresholds: multiGate[:1]})
	require.NoError(t, err)
	var found bool
	for _, c := range rep.ChartRows() {
		if c.Metric == "time_to_first_token" && c.Stat == "avg" {
			found = true
			assert.Equal(t, 10.0, c.BoundPct)
			assert.Equal(t, 30.25, c.Reference)
			assert.Equal(t, 36.25, c.Candidate)
		}
	}
	assert.True(t, found)
}

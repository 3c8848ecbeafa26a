package compare

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/servermetrics"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	dynamoTTFT   = "dynamo_frontend_time_to_first_token_seconds"
	dynamoStages = "dynamo_frontend_ttft_stage_seconds"
	vllmTTFT     = "vllm:time_to_first_token_seconds"
	endpoint     = "http://127.0.0.1:8000/metrics"
)

// stage is one stage series: requests observed and their mean in ms.
type stage struct {
	name, phase string
	meanMs      float64
}

// hist is a histogram series with only count and sum (seconds).
func hist(labels map[string]string, count, meanMs float64) servermetrics.SeriesStats {
	return servermetrics.SeriesStats{EndpointURL: endpoint, Labels: labels,
		Stats: servermetrics.StatValues{{Name: "count", Value: count}, {Name: "sum", Value: count * meanMs / 1000}}}
}

// dynamo is an export of Dynamo's TTFT and stage histograms over n
// requests.
func dynamo(n, ttftMs float64, stages ...stage) *servermetrics.Export {
	e := &servermetrics.Export{SchemaVersion: servermetrics.SchemaVersion, Metrics: map[string]*servermetrics.Metric{
		dynamoTTFT:   {Type: servermetrics.KindHistogram, Series: []servermetrics.SeriesStats{hist(map[string]string{"model": "m"}, n, ttftMs)}},
		dynamoStages: {Type: servermetrics.KindHistogram},
	}}
	for _, s := range stages {
		m := e.Metrics[dynamoStages]
		m.Series = append(m.Series, hist(map[string]string{"model": "m", "stage": s.name, "phase": s.phase}, n, s.meanMs))
	}
	return e
}

// withVLLM adds vLLM's TTFT, queue and prefill histograms to e.
func withVLLM(e *servermetrics.Export, n, ttftMs, queueMs, prefillMs float64) *servermetrics.Export {
	for fam, mean := range map[string]float64{vllmTTFT: ttftMs, "vllm:request_queue_time_seconds": queueMs,
		"vllm:request_prefill_time_seconds": prefillMs} {
		e.Metrics[fam] = &servermetrics.Metric{Type: servermetrics.KindHistogram, Series: []servermetrics.SeriesStats{hist(nil, n, mean)}}
	}
	return e
}

func vllm(n, ttftMs, queueMs, prefillMs float64) *servermetrics.Export {
	return withVLLM(&servermetrics.Export{Metrics: map[string]*servermetrics.Metric{}}, n, ttftMs, queueMs, prefillMs)
}

// realStages add up to 100 ms; simStages lack tokenize, have an extra
// dispatch_prepare and add up to 110 ms.
var (
	realStages = []stage{{"tokenize", "none", 6}, {"route", "aggregated", 2}, {"backend", "aggregated", 75}, {"first_token", "none", 17}}
	simStages  = []stage{{"route", "aggregated", 3}, {"backend", "aggregated", 80}, {"first_token", "none", 17}, {"dispatch_prepare", "none", 10}}
)

// runDir writes e (when not nil) as the server metrics export of a new
// run directory and returns an input for it.
func runDir(t *testing.T, name string, e *servermetrics.Export) *Input {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	if e != nil {
		var buf bytes.Buffer
		require.NoError(t, servermetrics.WriteJSON(&buf, e))
		require.NoError(t, os.WriteFile(filepath.Join(dir, servermetrics.JSONName), buf.Bytes(), 0o644))
	}
	return &Input{Name: name, Path: dir}
}

// breakdownReport runs addServerSide on two inputs.
func breakdownReport(ref, cand *Input) *Report {
	r := &Report{References: []RunInfo{{Name: ref.Name}}, Candidates: []RunInfo{{Name: cand.Name}}}
	r.addServerSide(ref, cand)
	return r
}

func rowKeys(b *BreakdownComparison) []string {
	var keys []string
	for _, r := range b.Stages {
		keys = append(keys, BreakdownStageName(r.Stage, r.Phase))
	}
	return keys
}

func TestBreakdownSections(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		ref, cand  *servermetrics.Export
		wantNil    bool
		wantServer [2]string
		wantSame   bool
		wantKeys   []string
		warnings   []string // substrings, in order; none when empty
	}{
		{name: "same source", ref: dynamo(4, 100, realStages...), cand: dynamo(4, 110, simStages...),
			wantServer: [2]string{"dynamo", "dynamo"}, wantSame: true,
			wantKeys: []string{"tokenize/none", "route/aggregated", "backend/aggregated", "first_token/none", "dispatch_prepare/none"}},
		{name: "first shared source", ref: withVLLM(dynamo(4, 100, realStages...), 4, 100, 10, 80), cand: vllm(4, 90, 5, 80),
			wantServer: [2]string{"vllm", "vllm"}, wantSame: true, wantKeys: []string{"queue", "prefill"},
			warnings: []string{"TTFT breakdown of ref is not additive", "TTFT breakdown of cand is not additive"}},
		{name: "different sources", ref: dynamo(4, 100, realStages...), cand: vllm(4, 90, 5, 85),
			wantServer: [2]string{"dynamo", "vllm"},
			wantKeys:   []string{"tokenize/none", "route/aggregated", "backend/aggregated", "first_token/none", "queue", "prefill"},
			warnings:   []string{"different sources, ref's from dynamo and cand's from vllm: stage names may not line up"}},
		{name: "candidate missing", ref: dynamo(4, 100, realStages...), wantNil: true,
			warnings: []string{"TTFT breakdown not compared: ref has server-side TTFT stages, cand none"}},
		{name: "reference missing", cand: dynamo(4, 100, realStages...), wantNil: true,
			warnings: []string{"TTFT breakdown not compared: cand has server-side TTFT stages, ref none"}},
		{name: "neither", wantNil: true},
		{name: "export without a breakdown", ref: &servermetrics.Export{Metrics: map[string]*servermetrics.Metric{}},
			cand: dynamo(4, 100, realStages...), wantNil: true, warnings: []string{"ref none"}},
		{name: "candidate not additive", ref: dynamo(4, 100, realStages...), cand: dynamo(4, 130, realStages...),
			wantServer: [2]string{"dynamo", "dynamo"}, wantSame: true,
			wantKeys: []string{"tokenize/none", "route/aggregated", "backend/aggregated", "first_token/none"},
			warnings: []string{"TTFT breakdown of cand is not additive: stage means add up to 100.000 ms but the TTFT mean is 130.000 ms"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := breakdownReport(runDir(t, "ref", tt.ref), runDir(t, "cand", tt.cand))
			require.Len(t, r.Warnings, len(tt.warnings), warningText(r.Warnings))
			for i, w := range tt.warnings {
				assert.Contains(t, r.Warnings[i].Msg, w)
			}
			if tt.wantNil {
				assert.Nil(t, r.TTFTBreakdown)
				return
			}
			b := r.TTFTBreakdown
			require.NotNil(t, b)
			assert.Equal(t, tt.wantServer, [2]string{b.Reference.Server, b.Candidate.Server})
			assert.Equal(t, tt.wantSame, b.SameSource)
			assert.Equal(t, tt.wantKeys, rowKeys(b))
		})
	}
}

func TestBreakdownRows(t *testing.T) {
	t.Parallel()
	r := breakdownReport(runDir(t, "real", dynamo(4, 100, realStages...)), runDir(t, "sim", dynamo(4, 110, simStages...)))
	require.Empty(t, r.Warnings)
	b := r.TTFTBreakdown
	require.NotNil(t, b)
	type want struct {
		ref, cand *float64
		diff      float64
		err, gap  *float64
	}
	f := func(v float64) *float64 { return &v }
	wants := []want{
		{f(6), nil, -6, nil, f(-60)},                // only in the reference: no error %, counts as 0 ms
		{f(2), f(3), 1, f(50), f(10)},               // +1 ms of a 10 ms gap
		{f(75), f(80), 5, f(5.0 / 75 * 100), f(50)}, // half the gap
		{f(17), f(17), 0, f(0), f(0)},
		{nil, f(10), 10, nil, f(100)}, // only in the candidate
	}
	require.Len(t, b.Stages, len(wants))
	for i, w := range wants {
		row := b.Stages[i]
		name := BreakdownStageName(row.Stage, row.Phase)
		assertOptional(t, w.ref, row.Reference, name+" reference")
		assertOptional(t, w.cand, row.Candidate, name+" candidate")
		assert.InDelta(t, w.diff, row.DiffMs, 1e-9, name)
		assertOptional(t, w.err, row.ErrorPct, name+" error %")
		assertOptional(t, w.gap, row.GapSharePct, name+" gap share")
	}
	for _, row := range []BreakdownRow{b.Total, b.TTFT} {
		assertOptional(t, f(100), row.Reference, row.Stage)
		assertOptional(t, f(110), row.Candidate, row.Stage)
		assertOptional(t, f(10), row.ErrorPct, row.Stage)
		assertOptional(t, f(100), row.GapSharePct, row.Stage+": the stages explain the whole gap")
	}
	sum := 0.0
	for _, row := range b.Stages {
		sum += *row.GapSharePct
	}
	assert.InDelta(t, 100, sum, 1e-9, "additive runs: the stage shares of the gap add up to 100 %")
}

func assertOptional(t *testing.T, want, got *float64, msg string) {
	t.Helper()
	if want == nil {
		assert.Nil(t, got, msg)
		return
	}
	require.NotNil(t, got, msg)
	assert.InDelta(t, *want, *got, 1e-9, msg)
}

func TestBreakdownGapNearZero(t *testing.T) {
	t.Parallel()
	cand := []stage{{"tokenize", "none", 4}, {"route", "aggregated", 2}, {"backend", "aggregated", 77}, {"first_token", "none", 17.05}}
	b := breakdownReport(runDir(t, "real", dynamo(4, 100, realStages...)), runDir(t, "sim", dynamo(4, 100.05, cand...))).TTFTBreakdown
	require.NotNil(t, b)
	for _, row := range append(b.Stages, b.Total, b.TTFT) {
		assert.Nil(t, row.GapSharePct, "%s: a 0.05 ms gap on 100 ms is below the tolerance", row.Stage)
	}
	require.NotNil(t, b.Stages[2].ErrorPct)
	assert.InDelta(t, 2.0/75*100, *b.Stages[2].ErrorPct, 1e-9, "the error % is still shown")

	b = breakdownReport(runDir(t, "real", dynamo(4, 100, realStages...)), runDir(t, "sim", dynamo(4, 100.2, cand...))).TTFTBreakdown
	require.NotNil(t, b.TTFT.GapSharePct, "0.2 ms on 100 ms is above the tolerance")
	assert.InDelta(t, 100, *b.TTFT.GapSharePct, 1e-9)
}

// TestBreakdownFromFiles: ttft_breakdown.json when there is no export, a
// run given by a file inside its directory, AIPerf's own export (vLLM) and
// an unreadable export.
func TestBreakdownFromFiles(t *testing.T) {
	t.Parallel()
	sim := runDir(t, "sim", nil)
	bs := servermetrics.TTFTBreakdowns(vllm(20, 50, 5, 40))
	require.Len(t, bs, 1)
	var buf bytes.Buffer
	require.NoError(t, servermetrics.WriteTTFTBreakdownJSON(&buf, bs[0]))
	require.NoError(t, os.WriteFile(filepath.Join(sim.Path, servermetrics.TTFTBreakdownName), buf.Bytes(), 0o644))
	sim.Path = filepath.Join(sim.Path, results.ProfileJSONName) // a file inside the run directory

	aiperf := &Input{Name: "aiperf", Path: filepath.Join(testdataDir, "aiperf_vllm_server_metrics")}
	r := breakdownReport(aiperf, sim)
	b := r.TTFTBreakdown
	require.NotNil(t, b)
	assert.True(t, b.SameSource)
	assert.Equal(t, []string{"queue", "prefill"}, rowKeys(b))
	assert.InDelta(t, 50, b.Reference.TTFTMeanMs, 1e-9)
	assertOptional(t, ptr(40), b.Stages[1].Reference, "AIPerf's prefill mean: Δsum/Δcount")
	assert.Nil(t, b.TTFT.GapSharePct, "the same TTFT mean on both sides")
	assert.Len(t, r.Warnings, 2, "vLLM's stages do not cover tokenisation on either side")

	bad := runDir(t, "bad", nil)
	require.NoError(t, os.WriteFile(filepath.Join(bad.Path, servermetrics.JSONName), []byte(`{"schema_version": "1.0"}`), 0o644))
	r = breakdownReport(bad, aiperf)
	assert.Nil(t, r.TTFTBreakdown)
	assert.Contains(t, warningText(r.Warnings), "bad: server metrics not read")
	assert.Contains(t, warningText(r.Warnings), "TTFT breakdown not compared: aiperf has server-side TTFT stages, bad none")
}

// TestBreakdownSelfCompare: the same input on both sides is read once and
// compares to zero.
func TestBreakdownSelfCompare(t *testing.T) {
	t.Parallel()
	in := runDir(t, "real", dynamo(4, 100, realStages...))
	b := breakdownReport(in, in).TTFTBreakdown
	require.NotNil(t, b)
	for _, row := range append(b.Stages, b.Total, b.TTFT) {
		assert.Zero(t, row.DiffMs)
		assertOptional(t, ptr(0), row.ErrorPct, row.Stage)
		assert.Nil(t, row.GapSharePct)
	}
}

// TestBreakdownCompare runs the whole comparison on run directories with
// server metrics and pins the section in every format.
func TestBreakdownCompare(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	real, sim := filepath.Join(root, "real"), filepath.Join(root, "sim")
	writeSmallRun(t, real, 100, 10)
	writeSmallRun(t, sim, 110, 10)
	writeExport(t, real, dynamo(6, 100, realStages...))
	notAdditive := append([]stage{}, simStages[:3]...) // 100 ms of stages for a 110 ms TTFT
	writeExport(t, sim, dynamo(6, 110, notAdditive...))
	rep := compareDirs(t, real, sim, Options{Stall: DefaultStallOptions})
	require.NotNil(t, rep.TTFTBreakdown)
	assert.Contains(t, warningText(rep.Warnings), "TTFT breakdown of sim is not additive")

	var text, md, js bytes.Buffer
	require.NoError(t, WriteText(&text, rep))
	require.NoError(t, WriteMarkdown(&md, rep, nil))
	require.NoError(t, WriteJSON(&js, rep))
	assert.Contains(t, text.String(), "TTFT breakdown: server-side stage means")
	assert.Contains(t, md.String(), "#### TTFT breakdown")
	var got struct {
		TTFTBreakdown *struct {
			Reference struct {
				Server   string  `json:"server"`
				TTFTMean float64 `json:"ttft_mean_ms"`
				Additive bool    `json:"additive"`
			} `json:"reference"`
			Candidate struct {
				Additive bool   `json:"additive"`
				Reason   string `json:"reason"`
			} `json:"candidate"`
			Stages []struct {
				Stage       string   `json:"stage"`
				ReferenceMs *float64 `json:"reference_ms"`
			} `json:"stages"`
		} `json:"ttft_breakdown"`
	}
	require.NoError(t, json.Unmarshal(js.Bytes(), &got))
	require.NotNil(t, got.TTFTBreakdown)
	assert.Equal(t, "dynamo", got.TTFTBreakdown.Reference.Server)
	assert.InDelta(t, 100, got.TTFTBreakdown.Reference.TTFTMean, 1e-9)
	assert.True(t, got.TTFTBreakdown.Reference.Additive)
	assert.False(t, got.TTFTBreakdown.Candidate.Additive)
	assert.NotEmpty(t, got.TTFTBreakdown.Candidate.Reason)
	require.Len(t, got.TTFTBreakdown.Stages, 4)
	assert.Equal(t, "tokenize", got.TTFTBreakdown.Stages[0].Stage)

	// the section alone, in every format
	var sec bytes.Buffer
	ew := &errWriter{w: &sec}
	writeBreakdownText(ew, rep.TTFTBreakdown)
	require.NoError(t, ew.err)
	golden(t, "breakdown_text.golden", sec.Bytes())
	sec.Reset()
	writeBreakdownMarkdown(ew, rep.TTFTBreakdown)
	require.NoError(t, ew.err)
	golden(t, "breakdown_markdown.golden", sec.Bytes())
	sec.Reset()
	require.NoError(t, encodeJSON(&sec, breakdownJSON(rep.TTFTBreakdown)))
	golden(t, "breakdown_json.golden", sec.Bytes())
}

func writeExport(t *testing.T, dir string, e *servermetrics.Export) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, servermetrics.JSONName))
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, servermetrics.WriteJSON(f, e))
}

// TestNoBreakdownNoSection: without server metrics the report has no
// section and no warning about it, and the JSON says null.
func TestNoBreakdownNoSection(t *testing.T) {
	t.Parallel()
	rep := compareDirs(t, fixtureDir, fixtureDir, Options{Stall: DefaultStallOptions})
	assert.Nil(t, rep.TTFTBreakdown)
	assert.NotContains(t, warningText(rep.Warnings), "TTFT breakdown")
	var text, js bytes.Buffer
	require.NoError(t, WriteText(&text, rep))
	require.NoError(t, WriteJSON(&js, rep))
	assert.NotContains(t, text.String(), "TTFT breakdown")
	assert.Contains(t, js.String(), `"ttft_breakdown": null`)
}

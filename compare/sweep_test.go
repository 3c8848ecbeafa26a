package compare

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/simbench/simbench/capacity"
	"github.com/simbench/simbench/results"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sweepPoint is one load of a test sweep: its TTFT and its attainment.
type sweepPoint struct {
	load, ttftMs, attainment float64
}

// writeSweep writes a concurrency sweep of small runs under dir and its
// summary, with the attainments given (the runs have no goodput) and the
// capacity FindCapacity finds for target 0.9; goodput "" writes a sweep
// without SLOs.
func writeSweep(t *testing.T, dir, goodput string, pts []sweepPoint) {
	t.Helper()
	s := &capacity.Summary{Load: capacity.Concurrency, Goodput: goodput, AttainmentTarget: 0.9}
	for _, p := range pts {
		name := capacity.PointDir(capacity.Concurrency, p.load)
		writeSmallRun(t, filepath.Join(dir, name), p.ttftMs, 10)
		run, err := results.LoadRun(filepath.Join(dir, name))
		require.NoError(t, err)
		pt := capacity.NewPoint(p.load, name, run.Profile, capacity.PointOptions{Load: capacity.Concurrency, MaxErrorRate: -1})
		if goodput != "" {
			a, meets, good := p.attainment, p.attainment >= 0.9, int(p.attainment*float64(pt.RequestCount))
			pt.Attainment, pt.MeetsSLO, pt.GoodRequestCount = &a, &meets, &good
		}
		s.Loads = append(s.Loads, p.load)
		s.Points = append(s.Points, pt)
	}
	s.Capacity = capacity.FindCapacity(capacity.Concurrency, s.Points, 0.9)
	require.NoError(t, capacity.WriteSummary(dir, s))
}

// testSweeps writes a reference sweep at concurrency 1, 2, 4, 8 (capacity
// between 4 and 8) and a candidate at 1, 2, 4, 16 (between 4 and 16).
func testSweeps(t *testing.T) {
	t.Chdir(t.TempDir()) // relative, stable paths in the golden output
	writeSweep(t, "real", "time_to_first_token:100", []sweepPoint{{1, 30, 1}, {2, 35, 1}, {4, 50, 0.95}, {8, 120, 0.2}})
	writeSweep(t, "sim", "time_to_first_token:100", []sweepPoint{{1, 32, 1}, {2, 36, 1}, {4, 48, 1}, {16, 200, 0.1}})
}

var sweepGate = []Threshold{{CapacityField, "", 10}, {"time_to_first_token", "avg", 10}}

func TestCompareSweeps(t *testing.T) {
	testSweeps(t)
	rep, err := CompareSweepDirs("real", "sim", Options{Stall: DefaultStallOptions, Thresholds: sweepGate})
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 2, 4}, []float64{rep.Points[0].Load, rep.Points[1].Load, rep.Points[2].Load})
	assert.Equal(t, []float64{8}, rep.OnlyInReference)
	assert.Equal(t, []float64{16}, rep.OnlyInCandidate)
	c := rep.Capacity
	assert.InDelta(t, 4+0.05/0.75*4, *c.Reference.Estimate, 1e-12)
	assert.InDelta(t, 4+0.1/0.9*12, *c.Candidate.Estimate, 1e-12)
	assert.InDelta(t, (*c.Candidate.Estimate/(*c.Reference.Estimate)-1)*100, *c.ErrorPct, 1e-9)
	ttft, ok := rep.Points[0].Report.Row(results.TagTTFT, "avg")
	require.True(t, ok, "every aligned point is a full comparison")
	assert.InDelta(t, 200.0/30, *ttft.ErrorPct, 1e-9)
	var names []string
	for _, v := range rep.Verdicts {
		names = append(names, v.Name()+" "+v.Status)
	}
	assert.Equal(t, []string{"capacity breach", "concurrency 1: time_to_first_token.avg pass",
		"concurrency 2: time_to_first_token.avg pass", "concurrency 4: time_to_first_token.avg pass"}, names)
	assert.Len(t, rep.Points[0].Report.Verdicts, 1, "the capacity bound is judged once, not at every point")
	assert.Contains(t, warningText(rep.Warnings), "only the reference ran concurrency 8: not compared")
	assert.Contains(t, warningText(rep.Warnings), "only the candidate ran concurrency 16: not compared")
}

func TestCompareSweepsGolden(t *testing.T) {
	testSweeps(t)
	rep, err := CompareSweepDirs("real", "sim", Options{Stall: DefaultStallOptions, Thresholds: sweepGate})
	require.NoError(t, err)
	for _, f := range []struct{ name, format string }{
		{"sweep_text.golden", "text"}, {"sweep_markdown.golden", "markdown"},
		{"sweep_json.golden", "json"}, {"sweep_junit.golden", "junit"},
	} {
		var b bytes.Buffer
		require.NoError(t, WriteSweep(&b, f.format, rep, []string{"plots/" + "sweep_attainment.png"}))
		golden(t, f.name, b.Bytes())
	}
	var b bytes.Buffer
	require.NoError(t, WriteSweepJSON(&b, rep))
	var js struct {
		Capacity struct {
			Reference, Candidate struct {
				Concurrency int     `json:"concurrency"`
				Estimate    float64 `json:"estimate"`
			}
			ErrorPct float64 `json:"error_pct"`
		} `json:"capacity"`
		Points []struct {
			Comparison struct {
				Metrics []json.RawMessage `json:"metrics"`
			} `json:"comparison"`
		} `json:"points"`
	}
	require.NoError(t, json.Unmarshal(b.Bytes(), &js))
	assert.Equal(t, 4, js.Capacity.Reference.Concurrency)
	assert.Equal(t, 4, js.Capacity.Candidate.Concurrency)
	assert.Len(t, js.Points, 3)
	assert.NotEmpty(t, js.Points[0].Comparison.Metrics)
	assert.Error(t, WriteSweep(&b, "yaml", rep, nil))
}

func TestCompareSweepsRefusals(t *testing.T) {
	t.Chdir(t.TempDir())
	writeSweep(t, "a", "", []sweepPoint{{1, 30, 0}, {2, 40, 0}})
	writeSweep(t, "b", "", []sweepPoint{{4, 30, 0}})
	_, err := CompareSweepDirs("a", "b", Options{})
	assert.ErrorContains(t, err, "no load in common")
	s, err := capacity.ReadSummary("b")
	require.NoError(t, err)
	s.Load, s.Points[0].Concurrency, s.Points[0].RequestRate = capacity.RequestRate, 0, 4
	_, err = CompareSweeps(SweepSide{Path: "a", Summary: mustSummary(t, "a")}, SweepSide{Path: "b", Summary: s}, Options{})
	assert.ErrorContains(t, err, "a sweeps concurrency but b sweeps request_rate")
	_, err = CompareSweepDirs("a", "missing", Options{})
	assert.Error(t, err)
	assert.True(t, IsSweep("a"))
	assert.False(t, IsSweep("a/c1"), "a run directory is not a sweep")
}

func mustSummary(t *testing.T, dir string) *capacity.Summary {
	s, err := capacity.ReadSummary(dir)
	require.NoError(t, err)
	return s
}

func TestJudgeCapacity(t *testing.T) {
	t.Parallel()
	est := func(v float64) *float64 { return &v }
	found := func(e float64) *capacity.Capacity {
		return &capacity.Capacity{Status: capacity.StatusFound, Estimate: est(e)}
	}
	below := &capacity.Capacity{Status: capacity.StatusBelowTested}
	above := &capacity.Capacity{Status: capacity.StatusAboveTested, Estimate: est(8)}
	noSLO := &capacity.Summary{}
	tests := map[string]struct {
		ref, cand *capacity.Capacity
		status    string
		reason    string
	}{
		"within":         {found(4), found(4.2), Pass, "|+5.00%| ≤ 10%"},
		"beyond":         {found(4), found(5), Breach, "|+25.00%| > 10%"},
		"no SLO":         {nil, found(4), Missing, "capacity needs SLOs"},
		"both below":     {below, below, Pass, "both sweeps fail the SLO at their lowest load"},
		"one below":      {found(2), below, Breach, "one sweep fails the SLO at its lowest load"},
		"lower bound":    {above, found(8.4), Pass, "lower bound"},
		"zero reference": {found(0), found(1), Breach, "unbounded"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			r := &SweepReport{Load: capacity.Concurrency, Capacity: compareCapacity(tt.ref, tt.cand),
				Reference: SweepSide{Path: "a", Summary: &capacity.Summary{Capacity: tt.ref}}, Candidate: SweepSide{Path: "b", Summary: noSLO}}
			if tt.cand != nil {
				r.Candidate.Summary = &capacity.Summary{Capacity: tt.cand}
			}
			v := r.judgeCapacity(Threshold{Metric: CapacityField, MaxPct: 10})
			assert.Equal(t, tt.status, v.Status)
			assert.Contains(t, v.Reason, tt.reason)
		})
	}
}

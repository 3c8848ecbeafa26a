package capacity

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/results"
)

func sampleSummary() *Summary {
	pts := []Point{cpt(1, 1, 1), cpt(2, 2, 0.95), cpt(4, 2.02, 0.5)}
	return &Summary{Kind: Kind, Load: Concurrency, Loads: []float64{1, 2, 4, 8}, Goodput: "time_to_first_token:60",
		AttainmentTarget: 0.9, Points: pts, Capacity: FindCapacity(Concurrency, pts, 0.9),
		Stopped: ShouldStop(pts, []float64{8}, StopRule{Load: Concurrency, HasSLO: true, MaxErrorRate: -1})}
}

func TestSummaryRoundTrip(t *testing.T) {
	dir := t.TempDir()
	s := sampleSummary()
	require.NotNil(t, s.Stopped)
	require.NoError(t, WriteSummary(dir, s))
	got, err := ReadSummary(dir)
	require.NoError(t, err)
	assert.Equal(t, s, got)

	var raw map[string]any
	b, err := os.ReadFile(filepath.Join(dir, SummaryName))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &raw))
	assert.Equal(t, "load_sweep", raw["kind"])
	c := raw["capacity"].(map[string]any)
	assert.Equal(t, 2.0, c["concurrency"])
	assert.Equal(t, 4.0, c["failing_concurrency"])
	assert.Equal(t, true, c["interpolated"])
	p := raw["points"].([]any)[0].(map[string]any)
	assert.Equal(t, "c1", p["dir"])
	assert.NotContains(t, p, "request_rate")
}

func TestReadSummaryRefusesConfigGrid(t *testing.T) {
	for name, body := range map[string]string{
		"no kind (older grid)": `{"sweep": "grid.yaml", "results": []}`,
		"config grid":          `{"kind": "config_grid", "results": []}`,
	} {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, SummaryName), []byte(body), 0o644))
		_, err := ReadSummary(dir)
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), "a simulator config grid", name)
		assert.Contains(t, err.Error(), filepath.Join(dir, SummaryName), name)
	}
}

func TestSummaryValidate(t *testing.T) {
	tests := map[string]struct {
		edit func(*Summary)
		msg  string
	}{
		"kind":            {func(s *Summary) { s.Kind = "x" }, `kind "x"`},
		"load":            {func(s *Summary) { s.Load = "users" }, `load "users"`},
		"loads order":     {func(s *Summary) { s.Loads = []float64{1, 4, 2, 8} }, "loads[2] 2: loads must ascend"},
		"loads integer":   {func(s *Summary) { s.Loads[1] = 2.5 }, "loads[1] 2.5: want a positive concurrency"},
		"target":          {func(s *Summary) { s.AttainmentTarget = 1.5 }, "attainment_target 1.5"},
		"point load key":  {func(s *Summary) { s.Points[0].RequestRate = 1 }, "points[0]: want concurrency > 0 and no request_rate"},
		"point order":     {func(s *Summary) { s.Points[1].Concurrency = 3 }, "points[1]: concurrency 3 is not loads[1]"},
		"dir":             {func(s *Summary) { s.Points[2].Dir = "" }, "points[2]: dir: empty"},
		"error rate":      {func(s *Summary) { s.Points[0].ErrorRate = 2 }, "points[0]: error_rate 2"},
		"attainment":      {func(s *Summary) { s.Points[0].Attainment = ptr(1.5) }, "points[0]: attainment 1.5"},
		"verdict w/o SLO": {func(s *Summary) { s.Goodput = "" }, "points[0]: meets_slo and good_request_count"},
		"capacity wrong":  {func(s *Summary) { s.Capacity.Concurrency = 4 }, "capacity: status found, 4, failing 4: the points give found, 2, failing 4"},
		"capacity gone":   {func(s *Summary) { s.Capacity = nil }, "capacity: absent"},
		"stop after":      {func(s *Summary) { s.Stopped.After = 2 }, "stopped: after 2"},
		"stop skipped":    {func(s *Summary) { s.Stopped.Skipped = nil }, "stopped: skipped []"},
		"stop reason":     {func(s *Summary) { s.Stopped.Reason = "bored" }, `stopped: reason "bored"`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			s := sampleSummary()
			tt.edit(s)
			b, err := json.Marshal(s)
			require.NoError(t, err)
			_, err = ParseSummary(b)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.msg)
		})
	}
}

func TestPointDir(t *testing.T) {
	assert.Equal(t, "c4", PointDir(Concurrency, 4))
	assert.Equal(t, "r2.5", PointDir(RequestRate, 2.5))
	assert.Equal(t, "r0.125", PointDir(RequestRate, 0.125))
	assert.Equal(t, "r10", PointDir(RequestRate, 10))
}

func TestNewPoint(t *testing.T) {
	scalar := func(tag string, v float64) results.MetricResult {
		return results.MetricResult{Tag: tag, Stats: map[string]float64{"avg": v}}
	}
	p := &results.Profile{Metrics: []results.MetricResult{
		scalar(results.TagRequestCount, 36), scalar(results.TagErrorRequestCount, 4),
		scalar(results.TagRequestThroughput, 9), scalar(results.TagOutputThroughput, 180),
		scalar(results.TagGoodRequestCount, 27), scalar(results.TagGoodput, 6.75),
		{Tag: results.TagTTFT, Stats: map[string]float64{"p50": 40, "p99": 120}},
	}}
	pt := NewPoint(4, "c4", p, PointOptions{Load: Concurrency, HasSLO: true, Target: 0.9, MaxErrorRate: -1})
	assert.Equal(t, 4, pt.Concurrency)
	assert.Equal(t, 36, pt.RequestCount)
	assert.InDelta(t, 0.1, pt.ErrorRate, 1e-12)
	assert.InDelta(t, 0.675, *pt.Attainment, 1e-12, "good / (valid + failed) requests")
	assert.Equal(t, 27, *pt.GoodRequestCount)
	assert.Equal(t, 6.75, *pt.Goodput)
	assert.False(t, *pt.MeetsSLO)
	assert.Equal(t, 120.0, *pt.TTFTP99)
	assert.Nil(t, pt.ITLP50, "no ITL in the profile: absent")

	noSLO := NewPoint(2.5, "r2.5", p, PointOptions{Load: RequestRate, Target: 0.9, MaxErrorRate: -1})
	assert.Equal(t, 2.5, noSLO.RequestRate)
	assert.Nil(t, noSLO.MeetsSLO)
	assert.Nil(t, noSLO.Attainment)
}

// TestNewPointCountsFailuresAgainstAttainment: a load whose requests failed
// 60 % met the SLO (every valid request was good) and became the capacity
// when --max-error-rate was off; failures count against attainment now, as
// in AIPerf's goodput (good requests over all).
func TestNewPointCountsFailuresAgainstAttainment(t *testing.T) {
	scalar := func(tag string, v float64) results.MetricResult {
		return results.MetricResult{Tag: tag, Stats: map[string]float64{"avg": v}}
	}
	for _, tc := range []struct {
		name    string
		metrics []results.MetricResult
	}{
		{"counts only (an AIPerf file)", nil},
		{"with a stored slo_attainment of good / valid", []results.MetricResult{scalar(results.TagAttainment, 1)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &results.Profile{Metrics: append([]results.MetricResult{scalar(results.TagRequestCount, 4),
				scalar(results.TagErrorRequestCount, 6), scalar(results.TagGoodRequestCount, 4)}, tc.metrics...)}
			pt := NewPoint(8, "c8", p, PointOptions{Load: Concurrency, HasSLO: true, Target: 0.9, MaxErrorRate: -1})
			require.NotNil(t, pt.Attainment)
			assert.InDelta(t, 0.4, *pt.Attainment, 1e-12, "good / (valid + failed) requests")
			assert.False(t, *pt.MeetsSLO)
		})
	}
}

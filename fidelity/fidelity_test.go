package fidelity

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/results"
)

func profile(ttft, itl float64) *results.Profile {
	return &results.Profile{Metrics: []results.MetricResult{
		{Tag: results.TagTTFT, Stats: map[string]float64{"avg": ttft, "p50": ttft}},
		{Tag: results.TagITL, Stats: map[string]float64{"avg": itl}},
	}}
}

func runs(ps ...*results.Profile) []*results.Profile { return ps }

func TestBuild(t *testing.T) {
	fields := []Field{{results.TagTTFT, "avg"}, {results.TagTTFT, "p50"}, {results.TagITL, "avg"}}
	ws := []Workload{
		{Name: "c1", Real: profile(100, 10), Repeat: profile(104, 10.2),
			Candidates: []Candidate{{"calibrated", runs(profile(103, 10.1))}, {"uncalibrated", runs(profile(150, 8))}}},
		{Name: "c4", Real: profile(200, 20),
			Candidates: []Candidate{{"calibrated", runs(profile(180, 21))}, {"uncalibrated", runs(profile(100, 30))}}},
	}
	tab := Build(ws, fields)
	require.Len(t, tab.Cells, 6)
	assert.Equal(t, []string{"calibrated", "uncalibrated"}, tab.Candidates)
	assert.InDelta(t, 3, tab.Cells[0].ErrorPct["calibrated"], 1e-9)
	assert.InDelta(t, 4, *tab.Cells[0].SpreadPct, 1e-9)
	assert.Nil(t, tab.Cells[3].SpreadPct)
	// Spreads 4, 4, 2 → median 4, floored at 5.
	assert.Equal(t, 3, tab.Repeats)
	assert.Equal(t, 4.0, tab.SpreadMedianPct)
	assert.Equal(t, 5.0, tab.NoiseFloorPct)
	cal, uncal := tab.Summaries[0], tab.Summaries[1]
	// |errors| 3, 3, 1, 10, 10, 5 → median 4; worst avg 10.
	assert.InDelta(t, 4, cal.MedianAbsPct, 1e-9)
	assert.InDelta(t, 10, cal.WorstAvgAbsPct, 1e-9)
	assert.True(t, cal.WithinNoiseRule)
	assert.False(t, uncal.WithinNoiseRule)
	// uncalibrated's worst avg: c4 ITL +50 %.
	assert.True(t, cal.WithinAvgLimit)
	assert.False(t, uncal.WithinAvgLimit)

	var buf bytes.Buffer
	require.NoError(t, tab.WriteText(&buf))
	assert.Contains(t, buf.String(), "noise floor 5.00 %: median |real-vs-real| 4.00 % over 3 repeated cells, at least 5 %")
	assert.Contains(t, buf.String(), "calibrated: median |error| 4.00 % over 6 cells, worst avg field 10.00 % (median within the noise rule; every avg field within 25 %)")
	assert.Contains(t, buf.String(), "uncalibrated: median |error| 50.00 % over 6 cells, worst avg field 50.00 % (median outside the noise rule; an avg field beyond 25 %)")
	buf.Reset()
	require.NoError(t, tab.WriteJSON(&buf))
	assert.Contains(t, buf.String(), `"noise_floor_pct": 5`)
	assert.Contains(t, buf.String(), `"real_vs_real_median_pct": 4`)
}

func TestBuildWithoutRepeats(t *testing.T) {
	tab := Build([]Workload{{Name: "a", Real: profile(10, 1), Candidates: []Candidate{{"x", runs(profile(11, 1))}}}}, nil)
	assert.Zero(t, tab.NoiseFloorPct)
	assert.False(t, tab.Summaries[0].WithinNoiseRule)
	var buf bytes.Buffer
	require.NoError(t, tab.WriteText(&buf))
	assert.Contains(t, buf.String(), "no workload was run twice")
	assert.Contains(t, buf.String(), "x: median |error| 10.00 % over 3 cells, worst avg field 10.00 % (median: no noise floor; every avg field within 25 %)")
}

func TestSummaryWithoutCells(t *testing.T) {
	tab := Build([]Workload{{Name: "a", Real: profile(10, 1), Candidates: []Candidate{{"x", runs(&results.Profile{})}}}},
		[]Field{{results.TagTTFT, "avg"}})
	s := tab.Summaries[0]
	assert.Zero(t, s.Cells)
	assert.False(t, s.WithinAvgLimit)
	var buf bytes.Buffer
	require.NoError(t, tab.WriteText(&buf))
	assert.Contains(t, buf.String(), "(no cells)")
}

func TestCapacityRow(t *testing.T) {
	four, zero := 4.0, 0.0
	tab := Build([]Workload{{Name: "c1", Real: profile(10, 1), Candidates: []Candidate{{"calibrated", runs(profile(11, 1))}, {"uncalibrated", runs(profile(12, 1))}}}}, nil)
	require.NoError(t, tab.AddCapacity(CapacitySweep{Workload: "load-sweep", Load: "concurrency", SLO: "time_to_first_token:300, attainment ≥ 0.9",
		Real: &four, Candidates: map[string]float64{"calibrated": 5}}))
	assert.Error(t, tab.AddCapacity(CapacitySweep{Workload: "x", Real: &zero}))
	require.NoError(t, tab.AddCapacity(CapacitySweep{Workload: "overloaded", Load: "concurrency", RealStatus: "the lowest load already fails the SLO",
		Candidates: map[string]float64{"calibrated": 5}}))
	require.Len(t, tab.Capacities, 2)
	assert.Empty(t, tab.Capacities[1].ErrorPct, "no real estimate: no error")
	assert.InDelta(t, 25, tab.Capacities[0].ErrorPct["calibrated"], 1e-9)
	assert.Equal(t, 3, tab.Summaries[0].Cells, "capacity stays out of the summaries")
	var buf bytes.Buffer
	require.NoError(t, tab.WriteText(&buf))
	assert.Regexp(t, `load-sweep\s+capacity\s+concurrency\s+4\.000\s+\+25\.00\s+–\s+–`, buf.String())
	assert.Contains(t, buf.String(), "load-sweep capacity: the SLO capacity estimate of the load sweep (time_to_first_token:300, attainment ≥ 0.9)")
	assert.Regexp(t, `overloaded\s+capacity\s+concurrency\s+–\s+–\s+–\s+–`, buf.String())
	assert.Contains(t, buf.String(), "no estimate on silicon: the lowest load already fails the SLO")
	buf.Reset()
	require.NoError(t, tab.WriteJSON(&buf))
	assert.Contains(t, buf.String(), `"capacity": [`)
}

// Several simulated runs (seeds) per candidate: the prediction is their
// median, the cell keeps their range of errors, and the text says so.
func TestCandidateRunsMedian(t *testing.T) {
	fields := []Field{{results.TagTTFT, "avg"}, {results.TagITL, "avg"}}
	ws := []Workload{
		{Name: "trace", Real: profile(100, 10), Repeat: profile(110, 11),
			Candidates: []Candidate{
				{"calibrated", runs(profile(90, 8), profile(120, 9), profile(104, 30))},
				{"uncalibrated", runs(profile(50, 5))},
			}},
	}
	tab := Build(ws, fields)
	require.Len(t, tab.Cells, 2)
	ttft, itl := tab.Cells[0], tab.Cells[1]
	assert.InDelta(t, 4, ttft.ErrorPct["calibrated"], 1e-9, "median of 90, 120, 104")
	assert.InDelta(t, -10, itl.ErrorPct["calibrated"], 1e-9, "median of 8, 9, 30: the outlier seed does not move it")
	assert.Equal(t, [2]float64{-10, 20}, ttft.ErrorRangePct["calibrated"])
	assert.NotContains(t, ttft.ErrorRangePct, "uncalibrated", "one run has no range")
	assert.Equal(t, 3, tab.Summaries[0].Runs)
	assert.Equal(t, 1, tab.Summaries[1].Runs)
	var buf bytes.Buffer
	require.NoError(t, tab.WriteText(&buf))
	assert.Regexp(t, `trace\s+time_to_first_token\s+avg\s+100\.000\s+\+4\.00\s+-10\.0…\+20\.0\s+-50\.00\s+\+10\.00`, buf.String())
	assert.Contains(t, buf.String(), "calibrated: median |error| 7.00 % over 2 cells, of the median of 3 simulated runs (seeds) per workload")
	assert.Contains(t, buf.String(), "uncalibrated: median |error| 50.00 % over 2 cells, worst avg field")
}

// The host drift: the same runs before and after the predicted workloads,
// their differences beside the table and out of its noise floor.
func TestDrift(t *testing.T) {
	fields := []Field{{results.TagTTFT, "avg"}, {results.TagTTFT, "p50"}, {results.TagITL, "avg"}}
	tab := Build([]Workload{{Name: "c4", Real: profile(200, 20), Repeat: profile(210, 20),
		Candidates: []Candidate{{"calibrated", runs(profile(190, 21))}}}}, fields)
	tab.AddDrift([]DriftRun{
		{Name: "c1-short", Before: profile(40, 5), After: profile(44, 6.5)},
		{Name: "c1-long", Before: profile(700, 5), After: profile(665, 5.25)},
		{Name: "no-itl", Before: profile(10, 0), After: profile(12, 1)},
	}, fields)
	require.NotNil(t, tab.Drift)
	d := tab.Drift
	// Differences +10, +10, +30, −5, −5, +5, and no-itl's +20, +20 (its
	// ITL of 0 has no difference).
	require.Len(t, d.Cells, 8)
	assert.InDelta(t, 30, *d.Cells[2].SpreadPct, 1e-9)
	assert.InDelta(t, 10, d.MedianAbsPct, 1e-9)
	assert.InDelta(t, 30, d.WorstAvgAbsPct, 1e-9)
	assert.Equal(t, "c1-short inter_token_latency", d.WorstAvg)
	assert.Equal(t, 5.0, tab.NoiseFloorPct, "drift stays out of the noise floor")
	assert.Equal(t, 3, tab.Repeats)

	var buf bytes.Buffer
	require.NoError(t, tab.WriteText(&buf))
	assert.Regexp(t, `c1-short\s+time_to_first_token\s+avg \+10\.00\s+p50 \+10\.00`, buf.String())
	assert.Regexp(t, `c1-long\s+inter_token_latency\s+avg \+5\.00`, buf.String())
	assert.Contains(t, buf.String(), "host drift: median |after − before| 10.00 % over 8 cells, worst avg field 30.00 % (c1-short inter_token_latency)")
	buf.Reset()
	require.NoError(t, tab.WriteJSON(&buf))
	assert.Contains(t, buf.String(), `"host_drift": {`)

	empty := Build(nil, fields)
	empty.AddDrift([]DriftRun{{Name: "x", Before: profile(10, 1), After: &results.Profile{}}}, fields)
	assert.Nil(t, empty.Drift, "nothing on both sides: no drift section")
}

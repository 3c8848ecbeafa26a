package loadsweep

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/capacity"
	"github.com/simbench/simbench/internal/usage"
	"github.com/simbench/simbench/realrun"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/sim"
	"github.com/simbench/simbench/traces"
)

func ptr[T any](v T) *T { return &v }

func TestNewPlan(t *testing.T) {
	p, err := NewPlan(Flags{Attainment: 0.9})
	require.NoError(t, err)
	assert.Nil(t, p, "no sweep flag: no sweep")

	p, err = NewPlan(Flags{Rate: "0.5..4x2", Goodput: "time_to_first_token:60", Attainment: 0.95, MaxErrorRate: -1})
	require.NoError(t, err)
	assert.Equal(t, capacity.RequestRate, p.Load)
	assert.Equal(t, []float64{0.5, 1, 2, 4}, p.Loads)
	assert.Equal(t, []results.SLO{{Tag: "time_to_first_token", Threshold: 60}}, p.SLOs)

	spec := traces.Spec{Concurrency: ptr(8), ArrivalPattern: ptr("poisson")}
	pt := p.PointSpec(spec, 2)
	assert.Equal(t, 2.0, *pt.RequestRate)
	assert.Equal(t, 8, *pt.Concurrency, "a rate sweep keeps the concurrency cap")
	assert.Nil(t, spec.RequestRate, "the base spec is not changed")

	for _, f := range []Flags{
		{Concurrency: "1", Rate: "1", Attainment: 0.9},
		{Concurrency: "0", Attainment: 0.9},
		{Rate: "1", Attainment: 0},
		{Rate: "1", Attainment: 0.9, Goodput: "nope:1"},
	} {
		_, err := NewPlan(f)
		require.Error(t, err, f)
		assert.True(t, usage.Is(err), "%v: a usage error", f)
	}
}

// TestRunOnTheSimulator sweeps the rate of an open loop on the simulator:
// every point is a run directory, the summary is written and valid.
func TestRunOnTheSimulator(t *testing.T) {
	dir := t.TempDir()
	p, err := NewPlan(Flags{Rate: "5,10", Goodput: "time_to_first_token:1000", Attainment: 0.9, MaxErrorRate: -1})
	require.NoError(t, err)
	spec := traces.Spec{RequestCount: ptr(20), ISL: ptr(32), OSL: ptr(8), ArrivalPattern: ptr("constant")}
	s, err := Run(context.Background(), dir, p, spec, Sim(sim.DefaultConfig(), nil, sim.WithSLOs(p.SLOs)), io.Discard)
	require.NoError(t, err)
	require.Len(t, s.Points, 2)
	assert.Equal(t, "r5", s.Points[0].Dir)
	assert.InDelta(t, 5, s.Points[0].RequestThroughput, 0.5, "an open loop at 5 req/s")
	assert.Equal(t, capacity.StatusAboveTested, s.Capacity.Status)
	again, err := capacity.ReadSummary(dir)
	require.NoError(t, err)
	assert.Equal(t, s, again)
	for _, d := range []string{"r5", "r10"} {
		_, err := results.LoadRun(filepath.Join(dir, d))
		assert.NoError(t, err, d)
	}
}

func TestRunInterrupted(t *testing.T) {
	dir := t.TempDir()
	p, err := NewPlan(Flags{Concurrency: "1,2,4", Attainment: 0.9, MaxErrorRate: -1})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	runner := Sim(sim.DefaultConfig(), nil)
	cancelAfterFirst := func(ctx context.Context, d string, spec traces.Spec) (*results.Profile, error) {
		defer cancel()
		return runner(ctx, d, spec)
	}
	spec := traces.Spec{RequestCount: ptr(4), ISL: ptr(16), OSL: ptr(4)}
	s, err := Run(ctx, dir, p, spec, cancelAfterFirst, io.Discard)
	require.ErrorIs(t, err, realrun.ErrInterrupted, "exit 130, as an interrupted run")
	again, err := capacity.ReadSummary(dir)
	require.NoError(t, err, "the summary of the points run is written")
	assert.Equal(t, s, again)
	require.Len(t, s.Points, 1)
	require.NotNil(t, s.Stopped)
	assert.Equal(t, capacity.StopInterrupted, s.Stopped.Reason)
	assert.Equal(t, []float64{2, 4}, s.Stopped.Skipped)
	assert.Nil(t, s.Capacity, "no SLO: no capacity")
}

func TestRunRefusesATrace(t *testing.T) {
	p, err := NewPlan(Flags{Concurrency: "1", Attainment: 0.9, MaxErrorRate: -1})
	require.NoError(t, err)
	_, err = Run(context.Background(), t.TempDir(), p, traces.Spec{Trace: ptr("t.jsonl")}, nil, io.Discard)
	assert.ErrorContains(t, err, "needs a synthetic workload")
}

// A sweep in which no request succeeded at any load (a server that is down
// or refuses everything) is an error after its summary is written: there is
// no capacity to report, and the exit status must say so.
func TestRunNoSuccessIsAnError(t *testing.T) {
	dir := t.TempDir()
	p, err := NewPlan(Flags{Concurrency: "1,2", Goodput: "time_to_first_token:100", Attainment: 0.9, MaxErrorRate: -1})
	require.NoError(t, err)
	allFailed := func(context.Context, string, traces.Spec) (*results.Profile, error) {
		return &results.Profile{Metrics: []results.MetricResult{
			{Tag: results.TagErrorRequestCount, Stats: map[string]float64{"avg": 4}}}}, nil
	}
	s, err := Run(context.Background(), dir, p, traces.Spec{RequestCount: ptr(4), ISL: ptr(16), OSL: ptr(4)}, allFailed, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no request succeeded at any load")
	require.NotNil(t, s)
	assert.Len(t, s.Points, 2)
	_, err = capacity.ReadSummary(dir)
	assert.NoError(t, err, "the summary is written")
}

// A point whose run fails outright ends the sweep with an error; the points
// run before it keep their summary, which says why it stopped.
func TestRunPointFailureKeepsTheSummary(t *testing.T) {
	dir := t.TempDir()
	p, err := NewPlan(Flags{Concurrency: "1,2,4", Attainment: 0.9, MaxErrorRate: -1})
	require.NoError(t, err)
	runner := Sim(sim.DefaultConfig(), nil)
	failSecond := func(ctx context.Context, d string, spec traces.Spec) (*results.Profile, error) {
		if *spec.Concurrency == 2 {
			return nil, errors.New("disk full")
		}
		return runner(ctx, d, spec)
	}
	_, err = Run(context.Background(), dir, p, traces.Spec{RequestCount: ptr(4), ISL: ptr(16), OSL: ptr(4)}, failSecond, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "sweep point c2: disk full")
	s, err := capacity.ReadSummary(dir)
	require.NoError(t, err)
	require.Len(t, s.Points, 1)
	require.NotNil(t, s.Stopped)
	assert.Equal(t, capacity.StopFailed, s.Stopped.Reason)
	assert.Equal(t, []float64{2, 4}, s.Stopped.Skipped)
	assert.Equal(t, 1.0, s.Stopped.After)
}

func TestBuildHandsTheWorkloadsWarningsToWarn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl")
	rows := `{"timestamp": 10, "input_length": 8, "output_length": 2, "hash_ids": [1]}` + "\n" +
		`{"timestamp": 5, "input_length": 8, "output_length": 2, "hash_ids": [2]}` + "\n"
	require.NoError(t, os.WriteFile(path, []byte(rows), 0o644))
	var got []error
	wl, err := build(traces.Spec{Trace: &path}, 0, func(ws []error) { got = append(got, ws...) })
	require.NoError(t, err)
	assert.Len(t, wl.Requests, 2)
	require.Len(t, got, 1)
	assert.Contains(t, got[0].Error(), path+":2: timestamps go backwards")

	_, err = build(traces.Spec{Trace: &path}, 0, nil)
	assert.NoError(t, err, "a nil warn drops them")
}

package compare

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseThresholds(t *testing.T) {
	t.Parallel()
	got, err := ParseThresholds([]string{"time_to_first_token.avg=10%", "inter_token_latency.p99=20, token_gap.p99.9=50%", "stalls.stall_count=0%", "capacity=10%"})
	require.NoError(t, err)
	assert.Equal(t, []Threshold{
		{"time_to_first_token", "avg", 10}, {"inter_token_latency", "p99", 20},
		{"token_gap", "p99.9", 50}, {"stalls", "stall_count", 0}, {CapacityField, "", 10},
	}, got)
	assert.Equal(t, "capacity", got[4].Field())
	for _, bad := range []string{"time_to_first_token=10%", "time_to_first_token.avg", "ttft.p42=1%", ".avg=3%",
		"request_latency.avg=-1%", "request_latency.avg=ten%", "request_latency.avg=NaN", "capacity.avg=10%", "capacity=-1%"} {
		_, err := ParseThresholds([]string{bad})
		assert.Error(t, err, bad)
	}
}

func TestEvaluate(t *testing.T) {
	t.Parallel()
	a := Align(
		profile(metric("time_to_first_token", "ms", map[string]float64{"avg": 100, "p99": 0}),
			metric("only_ref", "ms", map[string]float64{"avg": 1})),
		profile(metric("time_to_first_token", "ms", map[string]float64{"avg": 111, "p99": 3})))
	th, err := ParseThresholds([]string{"time_to_first_token.avg=12%,time_to_first_token.avg=10%,time_to_first_token.p99=50%,only_ref.avg=5%,nope.avg=1%"})
	require.NoError(t, err)
	r := &Report{References: []RunInfo{{}}, Candidates: []RunInfo{{}}, Options: Options{Thresholds: th},
		Rows: a.Rows, OnlyInReference: a.OnlyInReference, OnlyInCandidate: a.OnlyInCandidate}
	vs := r.evaluate()
	status := func(i int) string { return vs[i].Status }
	assert.Equal(t, Pass, status(0))
	assert.Equal(t, Breach, status(1))
	assert.Equal(t, Breach, status(2), "zero reference, non-zero candidate: unbounded")
	assert.Equal(t, Missing, status(3))
	assert.Equal(t, "only_ref is missing from the candidate", vs[3].Reason)
	assert.Equal(t, Missing, status(4))
}

func TestWithDefaultGate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		th   []Threshold
		want []Threshold
	}{
		{"defaults alone", nil, DefaultGate},
		{"an explicit bound replaces the default", []Threshold{{"time_to_first_token", "avg", 5}, {"stalls", "stall_count", 0}},
			append(append([]Threshold(nil), DefaultGate[1:]...), Threshold{"time_to_first_token", "avg", 5}, Threshold{"stalls", "stall_count", 0})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, WithDefaultGate(tc.th))
		})
	}
}

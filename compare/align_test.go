package compare

import (
	"testing"

	"github.com/simbench/simbench/results"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func profile(ms ...results.MetricResult) *results.Profile { return &results.Profile{Metrics: ms} }

func metric(tag, unit string, stats map[string]float64) results.MetricResult {
	return results.MetricResult{Tag: tag, Unit: unit, Stats: stats}
}

func findRow(t *testing.T, rows []Row, metric, stat string) Row {
	t.Helper()
	for _, r := range rows {
		if r.Metric == metric && r.Stat == stat {
			return r
		}
	}
	require.Failf(t, "row not found", "%s.%s", metric, stat)
	return Row{}
}

func TestAlignErrorPercent(t *testing.T) {
	t.Parallel()
	a := profile(metric("time_to_first_token", "ms", map[string]float64{"avg": 40, "p99": 80, "min": 0, "std": 0, "count": 10}))
	b := profile(metric("time_to_first_token", "ms", map[string]float64{"avg": 44, "p99": 60, "min": 5, "std": 0, "count": 12}))
	al := Align(a, b)
	avg := findRow(t, al.Rows, "time_to_first_token", "avg")
	require.NotNil(t, avg.ErrorPct)
	assert.InDelta(t, 10, *avg.ErrorPct, 1e-12)
	assert.InDelta(t, 4, avg.Diff, 1e-12)
	p99 := findRow(t, al.Rows, "time_to_first_token", "p99")
	assert.InDelta(t, -25, *p99.ErrorPct, 1e-12)
	assert.Nil(t, findRow(t, al.Rows, "time_to_first_token", "min").ErrorPct, "zero reference: no percentage")
	std := findRow(t, al.Rows, "time_to_first_token", "std")
	require.NotNil(t, std.ErrorPct, "equal zeros are 0 %")
	assert.Zero(t, *std.ErrorPct)
	count := findRow(t, al.Rows, "time_to_first_token", "count")
	assert.True(t, count.Informational)
	assert.InDelta(t, 20, *count.ErrorPct, 1e-12)
}

func TestAlignOneSidedAndUnits(t *testing.T) {
	t.Parallel()
	a := profile(
		metric("benchmark_duration", "sec", map[string]float64{"avg": 2}),
		metric("request_latency", "ms", map[string]float64{"avg": 100, "p1": 10}),
		metric("only_a", "ms", map[string]float64{"avg": 1}),
		metric("output_sequence_length", "tokens", map[string]float64{"avg": 5}),
		metric("min_request_timestamp", "ns", map[string]float64{"avg": 1e18}))
	b := profile(
		metric("benchmark_duration", "ms", map[string]float64{"avg": 2500}),
		metric("request_latency", "ms", map[string]float64{"avg": 110}),
		metric("only_b", "ms", map[string]float64{"avg": 1}),
		metric("output_sequence_length", "ms", map[string]float64{"avg": 5}),
		metric("min_request_timestamp", "ns", map[string]float64{"avg": 2e18}))
	al := Align(a, b)
	dur := findRow(t, al.Rows, "benchmark_duration", "avg")
	assert.InDelta(t, 2.5, dur.Candidate, 1e-12, "ms converted into the reference's sec")
	assert.InDelta(t, 25, *dur.ErrorPct, 1e-9)
	assert.Equal(t, []string{"only_a"}, al.OnlyInReference)
	assert.Equal(t, []string{"only_b"}, al.OnlyInCandidate)
	for _, r := range al.Rows {
		assert.NotEqual(t, "output_sequence_length", r.Metric, "tokens vs ms must be refused")
		assert.NotEqual(t, "min_request_timestamp", r.Metric, "timestamps are not compared")
	}
	msgs := warningText(al.Warnings)
	assert.Contains(t, msgs, "output_sequence_length not compared")
	assert.Contains(t, msgs, "benchmark_duration: candidate values converted from ms to sec")
	assert.Contains(t, msgs, "statistics only in the reference were not compared, with the number of metrics: p1 (1)")
}

func warningText(ws []Warning) string {
	s := ""
	for _, w := range ws {
		s += w.Msg + "\n"
	}
	return s
}

// TestAlignAIPerfAggregates is the acceptance check: for every metric and
// statistic of two AIPerf aggregate files, error % = (b − a)/a × 100.
func TestAlignAIPerfAggregates(t *testing.T) {
	t.Parallel()
	a, err := results.LoadProfileJSON(fixtureDir + "/profile_export_aiperf.json")
	require.NoError(t, err)
	b := scaledProfile(a)
	al := Align(a, b)
	n := 0
	for _, m := range a.Metrics {
		if skippedMetrics[m.Tag] {
			continue
		}
		for st, va := range m.Stats {
			vb, _ := b.Value(m.Tag, st)
			r := findRow(t, al.Rows, m.Tag, st)
			assert.Equal(t, va, r.Reference)
			assert.Equal(t, vb, r.Candidate)
			if va == 0 {
				continue
			}
			require.NotNil(t, r.ErrorPct, "%s.%s", m.Tag, st)
			assert.InDelta(t, (vb-va)/va*100, *r.ErrorPct, 1e-9, "%s.%s", m.Tag, st)
			n++
		}
	}
	assert.Greater(t, n, 100)
}

// scaledProfile multiplies every statistic by a factor that depends on the
// metric and the statistic, so every error % differs.
func scaledProfile(p *results.Profile) *results.Profile {
	out := &results.Profile{}
	for i, m := range p.Metrics {
		stats := map[string]float64{}
		j := 0
		for _, st := range statOrder {
			if v, ok := m.Stats[st]; ok {
				stats[st] = v * (0.8 + 0.01*float64(i) + 0.003*float64(j))
				j++
			}
		}
		out.Metrics = append(out.Metrics, metric(m.Tag, m.Unit, stats))
	}
	return out
}

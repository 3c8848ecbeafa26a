package capacity

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func ptr[T any](v T) *T { return &v }

// cpt is a concurrency point with its throughput and attainment; the
// verdict is Meets at target 0.9 with no error limit.
func cpt(c int, thr, att float64) Point {
	p := Point{Concurrency: c, Dir: PointDir(Concurrency, float64(c)), RequestThroughput: thr, Attainment: ptr(att),
		GoodRequestCount: ptr(0)}
	p.MeetsSLO = ptr(Meets(p, 0.9, -1))
	return p
}

func TestMeets(t *testing.T) {
	p := Point{Attainment: ptr(0.9), ErrorRate: 0.1}
	assert.True(t, Meets(p, 0.9, -1), "attainment equal to the target meets")
	assert.True(t, Meets(p, 0.9, 0.1))
	assert.False(t, Meets(p, 0.9, 0.05), "error rate above --max-error-rate fails")
	assert.False(t, Meets(p, 0.91, -1))
	assert.False(t, Meets(Point{}, 0.5, -1), "no valid request: no attainment, fails")
}

func TestFindCapacity(t *testing.T) {
	tests := map[string]struct {
		points       []Point
		status       string
		pass, fail   float64
		estimate     *float64
		interpolated bool
		nonMonotone  bool
	}{
		"found, interpolated": {
			points: []Point{cpt(1, 1, 1), cpt(2, 2, 1), cpt(4, 4, 0.95), cpt(8, 4, 0.5)},
			status: StatusFound, pass: 4, fail: 8, estimate: ptr(4 + 0.05/0.45*4), interpolated: true,
		},
		"all meet": {
			points: []Point{cpt(1, 1, 1), cpt(2, 2, 0.95)},
			status: StatusAboveTested, pass: 2, estimate: ptr(2.0),
		},
		"lowest fails": {
			points: []Point{cpt(1, 1, 0.2), cpt(2, 2, 0.1)},
			status: StatusBelowTested, fail: 1,
		},
		"non-monotone: capacity below the first failure": {
			points: []Point{cpt(1, 1, 1), cpt(2, 2, 0.8), cpt(3, 3, 0.95), cpt(4, 3, 0.1)},
			status: StatusFound, pass: 1, fail: 2, estimate: ptr(1 + 0.1/0.2), interpolated: true, nonMonotone: true,
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			c := FindCapacity(Concurrency, tt.points, 0.9)
			require.NotNil(t, c)
			assert.Equal(t, tt.status, c.Status)
			assert.Equal(t, tt.pass, c.Passing())
			assert.Equal(t, tt.fail, c.Failing())
			if tt.estimate == nil {
				assert.Nil(t, c.Estimate)
			} else {
				require.NotNil(t, c.Estimate)
				assert.InDelta(t, *tt.estimate, *c.Estimate, 1e-12)
			}
			assert.Equal(t, tt.interpolated, c.Interpolated)
			assert.Equal(t, tt.nonMonotone, c.NonMonotone)
			assert.NotEmpty(t, c.Method)
		})
	}
	assert.Nil(t, FindCapacity(Concurrency, []Point{{Concurrency: 1}}, 0.9), "no SLO verdicts: no capacity")
	assert.Nil(t, FindCapacity(Concurrency, nil, 0.9))
}

func TestFindCapacityErrorFailure(t *testing.T) {
	fail := Point{RequestRate: 4, Attainment: ptr(1.0), ErrorRate: 0.5, MeetsSLO: ptr(false)}
	pass := Point{RequestRate: 2, Attainment: ptr(1.0), MeetsSLO: ptr(true)}
	c := FindCapacity(RequestRate, []Point{pass, fail}, 0.9)
	require.NotNil(t, c)
	assert.Equal(t, 2.0, c.RequestRate)
	assert.Equal(t, 4.0, c.FailingRequestRate)
	assert.False(t, c.Interpolated)
	assert.Equal(t, 2.0, *c.Estimate)
	assert.Contains(t, c.Method, "error rate")
}

func TestShouldStop(t *testing.T) {
	slo := StopRule{Load: Concurrency, HasSLO: true, MaxErrorRate: -1}
	noSLO := StopRule{Load: Concurrency, MaxErrorRate: -1}
	// A 4-slot server: throughput grows to 4 req/s and stays.
	slots := func(c int, att float64) Point { return cpt(c, float64(min(c, 4)), att) }
	tests := map[string]struct {
		points []Point
		rule   StopRule
		reason string // "" = go on
	}{
		"small steps: 6 is saturated against the best at <= 4": {
			points: []Point{slots(1, 1), slots(2, 1), slots(3, 1), slots(4, 1), slots(5, 0.5), slots(6, 0.3)},
			rule:   noSLO, reason: StopSaturation,
		},
		"small steps: 5 against the best at <= 3.33 still grows 33%": {
			points: []Point{slots(1, 1), slots(2, 1), slots(3, 1), slots(4, 1), slots(5, 0.5)},
			rule:   noSLO,
		},
		"step 4 to 5 is < 1.5x: no base, no stop": {
			points: []Point{cpt(4, 4, 1), cpt(5, 4, 1)},
			rule:   noSLO,
		},
		"doubling steps: flat throughput stops": {
			points: []Point{cpt(1, 1, 1), cpt(2, 2, 1), cpt(4, 2.05, 1)},
			rule:   noSLO, reason: StopSaturation,
		},
		"saturated but no SLO failure yet: go on": {
			points: []Point{cpt(1, 1, 1), cpt(2, 2, 1), cpt(4, 2, 1)},
			rule:   slo,
		},
		"saturated after a failure: stop": {
			points: []Point{cpt(1, 1, 1), cpt(2, 2, 0.5), cpt(4, 2, 0.95)},
			rule:   slo, reason: StopSaturation,
		},
		"two failures in a row": {
			points: []Point{cpt(1, 1, 1), cpt(2, 2, 0.5), cpt(3, 3, 0.4)},
			rule:   slo, reason: StopSLO,
		},
		"one failure, throughput still grows": {
			points: []Point{cpt(1, 1, 1), cpt(2, 2, 0.5)},
			rule:   slo,
		},
		"error rate above the limit": {
			points: []Point{{Concurrency: 1, RequestThroughput: 1, ErrorRate: 0.2}},
			rule:   StopRule{Load: Concurrency, MaxErrorRate: 0.1}, reason: StopErrorRate,
		},
		"error rate at the limit": {
			points: []Point{{Concurrency: 1, RequestThroughput: 1, ErrorRate: 0.1}},
			rule:   StopRule{Load: Concurrency, MaxErrorRate: 0.1},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			st := ShouldStop(tt.points, []float64{100, 200}, tt.rule)
			if tt.reason == "" {
				assert.Nil(t, st)
				return
			}
			require.NotNil(t, st)
			assert.Equal(t, tt.reason, st.Reason, st.Detail)
			assert.Equal(t, tt.points[len(tt.points)-1].Value(), st.After)
			assert.Equal(t, []float64{100, 200}, st.Skipped)
		})
	}
	assert.Nil(t, ShouldStop([]Point{cpt(1, 0, 0)}, nil, noSLO), "nothing left to skip")
}

func TestShouldStopDetail(t *testing.T) {
	pts := []Point{cpt(1, 1, 1), cpt(2, 2, 1), cpt(3, 3, 1), cpt(4, 4, 1), cpt(5, 4, 1), cpt(6, 4.1, 1)}
	st := ShouldStop(pts, []float64{8}, StopRule{Load: Concurrency, MaxErrorRate: -1})
	require.NotNil(t, st)
	assert.Equal(t, "request_throughput 4.1 req/s at concurrency 6 is less than 5% above 4 at concurrency 4 (load ×1.5)", st.Detail)
}

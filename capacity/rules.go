package capacity

import (
	"fmt"
	"strconv"
)

// The saturation rule's constants: a load at least LoadGrowth times a
// lower one whose request throughput is less than ThroughputGain above the
// best of those lower loads has saturated the server.
const (
	LoadGrowth     = 1.5
	ThroughputGain = 0.05
)

// Meets reports whether a point meets the SLO: its attainment is at least
// target and, when maxErrorRate >= 0, its error rate is at most that. A
// point without valid requests has no attainment and fails.
func Meets(p Point, target, maxErrorRate float64) bool {
	if p.Attainment == nil || *p.Attainment < target {
		return false
	}
	return maxErrorRate < 0 || p.ErrorRate <= maxErrorRate
}

// FindCapacity is the SLO capacity of points (ascending loads with their
// meets_slo verdicts): the last load before the first that fails, and that
// failing load. The estimate interpolates attainment linearly in load
// between the two, to target; when the failing load failed on its error
// rate, not its attainment, the estimate is the passing load. It is nil
// when the points carry no verdicts.
func FindCapacity(load Load, points []Point, target float64) *Capacity {
	if len(points) == 0 || points[0].MeetsSLO == nil {
		return nil
	}
	first := len(points)
	for i, p := range points {
		if !*p.MeetsSLO {
			first = i
			break
		}
	}
	c := &Capacity{}
	switch first {
	case 0:
		c.Status = StatusBelowTested
		c.setFailing(load, points[0].Value())
		c.Method = fmt.Sprintf("the lowest load, %s, already fails the SLO", loadText(load, points[0].Value()))
	case len(points):
		hi := points[len(points)-1].Value()
		c.Status, c.Estimate = StatusAboveTested, &hi
		c.setPassing(load, hi)
		c.Method = fmt.Sprintf("every load met the SLO: capacity is at least %s", loadText(load, hi))
	default:
		c.Status = StatusFound
		c.setPassing(load, points[first-1].Value())
		c.setFailing(load, points[first].Value())
		c.Estimate, c.Interpolated, c.Method = estimate(load, points[first-1], points[first], target)
	}
	for _, p := range points[first:] {
		c.NonMonotone = c.NonMonotone || *p.MeetsSLO
	}
	return c
}

// estimate interpolates between a passing and a failing point.
func estimate(load Load, pass, fail Point, target float64) (*float64, bool, string) {
	lo, hi := pass.Value(), fail.Value()
	if pass.Attainment == nil || fail.Attainment == nil || *fail.Attainment >= target || *pass.Attainment <= *fail.Attainment {
		return &lo, false, fmt.Sprintf("%s fails on its error rate, not its attainment: the estimate is the passing load", loadText(load, hi))
	}
	ap, af := *pass.Attainment, *fail.Attainment
	v := lo + (ap-target)/(ap-af)*(hi-lo)
	return &v, true, fmt.Sprintf("attainment interpolated linearly between %s (%.4g) and %s (%.4g) to the target %.4g",
		loadText(load, lo), ap, loadText(load, hi), af, target)
}

func (c *Capacity) setPassing(load Load, v float64) {
	if load == Concurrency {
		c.Concurrency = int(v)
	} else {
		c.RequestRate = v
	}
}

func (c *Capacity) setFailing(load Load, v float64) {
	if load == Concurrency {
		c.FailingConcurrency = int(v)
	} else {
		c.FailingRequestRate = v
	}
}

// StopRule is --stop-on-saturation's configuration.
type StopRule struct {
	Load Load
	// HasSLO: with SLOs, the sweep does not stop before a load fails.
	HasSLO bool
	// MaxErrorRate is --max-error-rate; < 0 is off.
	MaxErrorRate float64
}

// StopHelp states the stop rule, for --help.
const StopHelp = "stop the sweep early once the last load run shows: saturation (its request throughput is less than 5% above " +
	"the best throughput of the loads at most 1/1.5 of it), an error rate above --max-error-rate, or a second " +
	"failing load in a row with --goodput. With --goodput the sweep never stops before a load has failed the SLO."

// ShouldStop applies the stop rule after the last of points (ascending
// loads run so far); remaining is the loads not yet run. It returns nil to
// go on.
func ShouldStop(points []Point, remaining []float64, r StopRule) *Stop {
	n := len(points)
	if n == 0 || len(remaining) == 0 {
		return nil
	}
	cur := points[n-1]
	if r.HasSLO && !anyFails(points) {
		return nil
	}
	stop := func(reason, detail string) *Stop {
		return &Stop{Reason: reason, After: cur.Value(), Detail: detail, Skipped: append([]float64(nil), remaining...)}
	}
	if r.MaxErrorRate >= 0 && cur.ErrorRate > r.MaxErrorRate {
		return stop(StopErrorRate, fmt.Sprintf("error rate %.4g at %s is above --max-error-rate %.4g",
			cur.ErrorRate, loadText(r.Load, cur.Value()), r.MaxErrorRate))
	}
	if best, ok := bestBelow(points[:n-1], cur.Value()/LoadGrowth); ok && cur.RequestThroughput < best.RequestThroughput*(1+ThroughputGain) {
		return stop(StopSaturation, fmt.Sprintf("request_throughput %.4g req/s at %s is less than %g%% above %.4g at %s (load ×%.3g)",
			cur.RequestThroughput, loadText(r.Load, cur.Value()), ThroughputGain*100, best.RequestThroughput,
			loadText(r.Load, best.Value()), cur.Value()/best.Value()))
	}
	if r.HasSLO && n >= 2 && !*cur.MeetsSLO && !*points[n-2].MeetsSLO {
		return stop(StopSLO, fmt.Sprintf("%s and %s both fail the SLO: attainment stays below the target after capacity was passed",
			loadText(r.Load, points[n-2].Value()), loadText(r.Load, cur.Value())))
	}
	return nil
}

func anyFails(points []Point) bool {
	for _, p := range points {
		if p.MeetsSLO != nil && !*p.MeetsSLO {
			return true
		}
	}
	return false
}

// bestBelow is the point of highest request throughput among those with
// load <= limit.
func bestBelow(points []Point, limit float64) (Point, bool) {
	var best Point
	found := false
	for _, p := range points {
		if p.Value() <= limit && (!found || p.RequestThroughput > best.RequestThroughput) {
			best, found = p, true
		}
	}
	return best, found
}

func loadText(load Load, v float64) string {
	return string(load) + " " + strconv.FormatFloat(v, 'g', -1, 64)
}

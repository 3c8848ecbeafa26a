package capacity

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// Validate checks a summary: its kind and load, ascending positive loads,
// each point's load key and figures, and the capacity and stop against the
// points. Errors name the field.
func (s *Summary) Validate() error {
	if s.Kind != Kind {
		return fmt.Errorf("kind %q: want %q", s.Kind, Kind)
	}
	if s.Load != Concurrency && s.Load != RequestRate {
		return fmt.Errorf("load %q: want %q or %q", s.Load, Concurrency, RequestRate)
	}
	if err := checkLoads("loads", s.Loads, s.Load); err != nil {
		return err
	}
	if !(s.AttainmentTarget > 0 && s.AttainmentTarget <= 1) {
		return fmt.Errorf("attainment_target %v: want a fraction in (0, 1]", s.AttainmentTarget)
	}
	if s.MaxErrorRate != nil && !(*s.MaxErrorRate >= 0 && *s.MaxErrorRate <= 1) {
		return fmt.Errorf("max_error_rate %v: want a fraction in [0, 1]", *s.MaxErrorRate)
	}
	for i := range s.Points {
		if err := s.checkPoint(i); err != nil {
			return fmt.Errorf("points[%d]: %w", i, err)
		}
	}
	if err := s.checkCapacity(); err != nil {
		return fmt.Errorf("capacity: %w", err)
	}
	if s.Stopped != nil {
		if err := s.checkStop(); err != nil {
			return fmt.Errorf("stopped: %w", err)
		}
	}
	return nil
}

func checkLoads(field string, loads []float64, load Load) error {
	if len(loads) == 0 {
		return fmt.Errorf("%s: empty", field)
	}
	for i, v := range loads {
		if !finite(v) || v <= 0 || load == Concurrency && v != math.Trunc(v) {
			return fmt.Errorf("%s[%d] %v: want a positive %s", field, i, v, load)
		}
		if i > 0 && v <= loads[i-1] {
			return fmt.Errorf("%s[%d] %v: loads must ascend", field, i, v)
		}
	}
	return nil
}

func (s *Summary) checkPoint(i int) error {
	p := s.Points[i]
	switch {
	case s.Load == Concurrency && (p.Concurrency <= 0 || p.RequestRate != 0):
		return errors.New("want concurrency > 0 and no request_rate in a concurrency sweep")
	case s.Load == RequestRate && (!(p.RequestRate > 0) || !finite(p.RequestRate) || p.Concurrency != 0):
		return errors.New("want request_rate > 0 and no concurrency in a request-rate sweep")
	case i >= len(s.Loads) || s.Loads[i] != p.Value():
		return fmt.Errorf("%s %v is not loads[%d]: points are the loads run, in order", s.Load, p.Value(), i)
	case p.Dir == "":
		return errors.New("dir: empty")
	case p.RequestCount < 0 || p.ErrorRequestCount < 0:
		return errors.New("request_count and error_request_count must be >= 0")
	case !(p.ErrorRate >= 0 && p.ErrorRate <= 1):
		return fmt.Errorf("error_rate %v: want a fraction in [0, 1]", p.ErrorRate)
	}
	for name, v := range map[string]float64{"request_throughput": p.RequestThroughput, "output_token_throughput": p.OutputTokenThroughput} {
		if !finite(v) || v < 0 {
			return fmt.Errorf("%s %v: want a finite number >= 0", name, v)
		}
	}
	for name, v := range map[string]*float64{"goodput": p.Goodput, "attainment": p.Attainment,
		"time_to_first_token_p50": p.TTFTP50, "time_to_first_token_p99": p.TTFTP99,
		"inter_token_latency_p50": p.ITLP50, "inter_token_latency_p99": p.ITLP99} {
		if v != nil && (!finite(*v) || *v < 0) {
			return fmt.Errorf("%s %v: want a finite number >= 0", name, *v)
		}
	}
	hasSLO := s.Goodput != ""
	if (p.MeetsSLO != nil) != hasSLO || (p.GoodRequestCount != nil) != hasSLO {
		return errors.New("meets_slo and good_request_count are present exactly when the summary has goodput SLOs")
	}
	if p.Attainment != nil && *p.Attainment > 1 {
		return fmt.Errorf("attainment %v: want a fraction in [0, 1]", *p.Attainment)
	}
	return nil
}

// checkCapacity checks the capacity is the one the points give.
func (s *Summary) checkCapacity() error {
	want := FindCapacity(s.Load, s.Points, s.AttainmentTarget)
	switch {
	case s.Capacity == nil && want == nil:
		return nil
	case s.Capacity == nil:
		return errors.New("absent, but the points have SLO verdicts")
	case want == nil:
		return errors.New("present without SLO verdicts on the points")
	case s.Capacity.Status != want.Status || s.Capacity.Passing() != want.Passing() || s.Capacity.Failing() != want.Failing():
		return fmt.Errorf("status %s, %v, failing %v: the points give %s, %v, failing %v",
			s.Capacity.Status, s.Capacity.Passing(), s.Capacity.Failing(), want.Status, want.Passing(), want.Failing())
	case s.Capacity.Estimate != nil && !finite(*s.Capacity.Estimate):
		return errors.New("estimate: not a finite number")
	}
	return nil
}

func (s *Summary) checkStop() error {
	st := s.Stopped
	if !slices.Contains([]string{StopSaturation, StopErrorRate, StopSLO, StopInterrupted, StopFailed}, st.Reason) {
		return fmt.Errorf("reason %q: want %s, %s, %s, %s or %s", st.Reason, StopSaturation, StopErrorRate, StopSLO, StopInterrupted, StopFailed)
	}
	n := len(s.Points)
	if n == 0 || s.Points[n-1].Value() != st.After {
		return fmt.Errorf("after %v: not the last point's load", st.After)
	}
	if !slices.Equal(st.Skipped, s.Loads[n:]) || len(st.Skipped) == 0 {
		return fmt.Errorf("skipped %v: want the loads not run, %v", st.Skipped, s.Loads[n:])
	}
	return nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

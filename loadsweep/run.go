package loadsweep

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/simbench/simbench/capacity"
	"github.com/simbench/simbench/realrun"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/traces"
)

// Runner runs one point: the workload spec (with the point's load) into
// the run directory dir, and returns the profile it wrote.
type Runner func(ctx context.Context, dir string, spec traces.Spec) (*results.Profile, error)

// Run runs the plan's loads in ascending order, each with runner into
// DIR/c4, DIR/r2.5, …, applies the stop rule after each point when asked,
// and writes DIR/sweep_summary.json. A cancelled ctx ends the sweep after
// the point in flight (its files written); the summary then says
// "interrupted" and Run returns it with realrun.ErrInterrupted. log gets
// one line per point unless the plan is quiet.
func Run(ctx context.Context, dir string, p *Plan, spec traces.Spec, runner Runner, log io.Writer) (*capacity.Summary, error) {
	if err := p.CheckSpec(spec); err != nil {
		return nil, err
	}
	if p.Quiet {
		log = io.Discard
	}
	s := &capacity.Summary{Kind: capacity.Kind, Load: p.Load, Loads: p.Loads, Goodput: p.Goodput,
		AttainmentTarget: p.Target, Points: []capacity.Point{}}
	if p.MaxErrorRate >= 0 {
		s.MaxErrorRate = &p.MaxErrorRate
	}
	po := capacity.PointOptions{Load: p.Load, HasSLO: len(p.SLOs) > 0, Target: p.Target, MaxErrorRate: p.MaxErrorRate}
	rule := capacity.StopRule{Load: p.Load, HasSLO: po.HasSLO, MaxErrorRate: p.MaxErrorRate}
	for i, load := range p.Loads {
		name := capacity.PointDir(p.Load, load)
		prof, err := runner(ctx, filepath.Join(dir, name), p.PointSpec(spec, load))
		if err == nil && prof == nil {
			err = errNoProfile
		}
		if err != nil {
			return s, failed(dir, s, p, i, pointErr(p.Load, load, err))
		}
		pt := capacity.NewPoint(load, name, prof, po)
		s.Points = append(s.Points, pt)
		fmt.Fprintln(log, pointLine(p.Load, pt))
		if ctx.Err() != nil && i+1 < len(p.Loads) {
			s.Stopped = &capacity.Stop{Reason: capacity.StopInterrupted, After: load,
				Detail: "interrupted (SIGINT/SIGTERM)", Skipped: p.Loads[i+1:]}
			break
		}
		if p.StopOnSaturation {
			if s.Stopped = capacity.ShouldStop(s.Points, p.Loads[i+1:], rule); s.Stopped != nil {
				break
			}
		}
	}
	s.Capacity = capacity.FindCapacity(p.Load, s.Points, p.Target)
	if err := capacity.WriteSummary(dir, s); err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return s, realrun.ErrInterrupted
	}
	if noSuccess(s.Points) {
		return s, fmt.Errorf("no request succeeded at any load (%d points; their errors are in each point's error_summary)", len(s.Points))
	}
	return s, nil
}

// failed ends the sweep at point i, whose run failed with err: the points
// run before it keep their summary (stopped: failed), and err is returned.
func failed(dir string, s *capacity.Summary, p *Plan, i int, err error) error {
	if len(s.Points) == 0 {
		return err
	}
	s.Stopped = &capacity.Stop{Reason: capacity.StopFailed, After: p.Loads[i-1], Detail: err.Error(), Skipped: p.Loads[i:]}
	s.Capacity = capacity.FindCapacity(p.Load, s.Points, p.Target)
	return errors.Join(err, capacity.WriteSummary(dir, s))
}

// noSuccess reports whether no point had a valid request: a server that
// is down, or refuses every request, has no capacity to report.
func noSuccess(points []capacity.Point) bool {
	for _, pt := range points {
		if pt.RequestCount > 0 {
			return false
		}
	}
	return len(points) > 0
}

// pointLine is the progress line of a finished point.
func pointLine(load capacity.Load, pt capacity.Point) string {
	line := fmt.Sprintf("sweep %s: %.4g req/s, %.4g output tokens/s, error rate %.3g", pt.Dir, pt.RequestThroughput,
		pt.OutputTokenThroughput, pt.ErrorRate)
	if pt.MeetsSLO == nil {
		return line
	}
	verdict := "fails the SLO"
	if *pt.MeetsSLO {
		verdict = "meets the SLO"
	}
	att := "no valid request"
	if pt.Attainment != nil {
		att = fmt.Sprintf("attainment %.3g", *pt.Attainment)
	}
	return fmt.Sprintf("%s, %s: %s", line, att, verdict)
}

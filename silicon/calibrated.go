package silicon

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/simbench/simbench/internal/warning"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/sim"
	"github.com/simbench/simbench/sim/calibrate"
)

// Calibration is what the calibrated prediction did with one deployment:
// the stage it was calibrated on and the stages it predicted, or why it
// has none.
type Calibration struct {
	Deployment string `json:"deployment"`
	// On is the lightest stage (lowest rate), calibrated on from its
	// aggregates; empty when the deployment has one stage.
	On       string   `json:"calibrated_on,omitempty"`
	Predicts []string `json:"predicts,omitempty"`
	// Params are the calibration's parameters: which the stage's figures
	// pinned and which stayed at their prior.
	Params   []sim.CalibratedParam `json:"params,omitempty"`
	Warnings warning.List          `json:"warnings,omitempty"`
	Note     string                `json:"note,omitempty"`
}

// noCalibration is the note of a deployment with one stage.
const noCalibration = "one stage: no calibrated prediction (nothing heavier to predict)"

// CalibratedName and calibratedKey name the calibrated prediction.
const (
	CalibratedName = "calibrated on the deployment's lightest stage"
	calibratedKey  = "calibrated"
)

// Calibrated is the prediction calibrated on each deployment's lightest
// stage: for every deployment with two or more stages, calibrate.Fit on
// that stage's aggregates, as `simbench calibrate --real` would fit it on
// base with the stage's hardware and engine and prior(stage)'s timing
// (calibrate's priors centre on the configuration's physics timing: pass
// the leave-one-deployment-out prior, aPriori, so that no figure of the
// deployment enters but its lightest stage's), then the fitted
// configuration replays its heavier stages. The lightest stage itself, and
// every stage of a one-stage deployment, have no calibrated figures (zero
// Figures).
func Calibrated(ctx context.Context, stages []*Stage, base sim.Config, prior func(*Stage) sim.GPUPrior, opt Options) (Prediction, []Calibration, error) {
	pred := Prediction{Name: CalibratedName, Key: calibratedKey, Figures: make([]Figures, len(stages))}
	var cals []Calibration
	for _, d := range Deployments(stages) {
		idx := stagesOf(stages, d)
		if len(idx) < 2 {
			cals = append(cals, Calibration{Deployment: d, Note: noCalibration})
			continue
		}
		light := idx[0]
		b := base
		sim.ApplyPrior(prior(stages[light]), &b)
		res, err := calibrateOn(ctx, stages[light], b, opt)
		if err != nil {
			return Prediction{}, nil, err
		}
		c := Calibration{Deployment: d, On: stages[light].ID, Params: res.Params, Warnings: res.Warnings}
		for _, i := range idx[1:] {
			cfg, err := stages[i].Config(res.Config)
			if err != nil {
				return Prediction{}, nil, err
			}
			if pred.Figures[i], err = stages[i].Simulate(ctx, cfg, opt.MaxRequests); err != nil {
				return Prediction{}, nil, err
			}
			c.Predicts = append(c.Predicts, stages[i].ID)
		}
		cals = append(cals, c)
	}
	return pred, cals, nil
}

// stagesOf are the indices of deployment d's stages, lightest (lowest
// rate) first.
func stagesOf(stages []*Stage, d string) []int {
	var idx []int
	for i, s := range stages {
		if s.Deployment == d {
			idx = append(idx, i)
		}
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(stages[a].Workload.Rate, stages[b].Workload.Rate) })
	return idx
}

// calibrateOn fits the simulator on stage s's aggregates.
func calibrateOn(ctx context.Context, s *Stage, base sim.Config, opt Options) (*calibrate.Result, error) {
	cfg, err := s.Config(base)
	if err != nil {
		return nil, err
	}
	t, err := s.Target(opt.MaxRequests)
	if err != nil {
		return nil, err
	}
	res, err := calibrate.Fit(ctx, []calibrate.Target{t}, calibrate.Options{Base: cfg, Seeds: opt.Seeds, MaxEvals: opt.MaxEvals})
	if err != nil {
		return nil, fmt.Errorf("%s: calibrate: %w", s.ID, err)
	}
	return res, nil
}

// Target is the stage as a calibration target: its published figures as
// an aggregate-only AIPerf profile and the workload it replays (Replay's,
// capped at maxRequests). calibrate measures every request but AIPerf's
// warmup, so the lead-in is marked warmup: the measured requests then
// start after it, on a server emptied of it (a ramp the steady state has
// not; Simulate's replays measure past the lead-in instead).
func (s *Stage) Target(maxRequests int) (calibrate.Target, error) {
	wl, err := s.Replay(maxRequests)
	if err != nil {
		return calibrate.Target{}, err
	}
	for i := range s.LeadIn(maxRequests) {
		wl.Requests[i].Warmup = true
	}
	p := s.Profile()
	return calibrate.Target{Name: s.ID, Profile: p, Workload: wl, ClientGapMs: calibrate.ClientGap(p, wl)}, nil
}

// Profile is the stage's published figures as an AIPerf profile: TTFT and
// request latency statistics, the mean ITL (the corpus's ITL is AIPerf's
// average at a fixed OSL: (E2E − TTFT)/(OSL − 1) per request, averaged),
// ISL, OSL, the request count and the request throughput. A stage that
// does not publish its throughput and is not flagged saturated is taken
// at its offered rate: a server that held a constant-rate load completes
// requests at that rate (the rate Little's law needs).
func (s *Stage) Profile() *results.Profile {
	p := &results.Profile{SchemaVersion: results.SchemaVersion}
	dist := func(tag string, stats map[string]*float64) {
		out := map[string]float64{}
		for k, v := range stats {
			if v != nil {
				out[k] = *v
			}
		}
		if len(out) > 0 {
			d, _ := results.Lookup(tag)
			p.Metrics = append(p.Metrics, results.MetricResult{Tag: tag, Unit: d.Unit, Stats: out})
		}
	}
	a := s.Actual
	dist(results.TagTTFT, map[string]*float64{"avg": a.TTFTMean, "p50": a.TTFTP50, "p90": a.TTFTP90, "p99": a.TTFTP99})
	dist(results.TagRequestLatency, map[string]*float64{"avg": a.E2EMean, "p50": a.E2EP50, "p90": a.E2EP90, "p99": a.E2EP99})
	dist(results.TagITL, map[string]*float64{"avg": a.ITLMean})
	isl, osl := float64(s.Workload.ISL), float64(s.Workload.OSL)
	dist(results.TagISL, map[string]*float64{"avg": &isl})
	dist(results.TagOSL, map[string]*float64{"avg": &osl})
	n := float64(s.Workload.Requests)
	if s.Workload.MeasuredRequests != nil {
		n = float64(*s.Workload.MeasuredRequests)
	}
	thr := a.RequestThroughput
	if thr == nil && !s.Flags.Saturated {
		thr = &s.Workload.Rate
	}
	dist(results.TagRequestCount, map[string]*float64{"avg": &n})
	dist(results.TagRequestThroughput, map[string]*float64{"avg": thr})
	return p
}

package calibrate

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/sim"
)

// specParamPrefix names the calibrated acceptance of each draft position:
// spec_acceptance_rate[0], ….
const specParamPrefix = "spec_acceptance_rate"

// Where the acceptance of speculative decoding came from (the Source of
// its parameters).
const (
	specFromRuns   = "spec-decode counters"
	specFromConfig = "config (no spec-decode counters in the runs' server metrics)"
)

// acceptance sets engine.speculative_config.acceptance_rate per position
// from the runs' speculative decoding counters (their aggregates' simbench
// section, pooled over the runs) when some run has them, and otherwise
// leaves the config's; the parameters say which. The stages after it
// simulate with the result.
func (f *fitter) acceptance(context.Context) error {
	sc := f.opts.Base.Engine.SpeculativeConfig
	pooled, runs := pooledSpec(f.targets)
	switch {
	case sc == nil && runs > 0:
		f.res.Warnings = append(f.res.Warnings, fmt.Errorf("%d run(s) drafted (spec-decode counters) but the config has no "+
			"engine.speculative_config: the acceptance is not fitted; set its method and num_speculative_tokens", runs))
		return nil
	case sc == nil:
		return nil
	}
	prior := sc.Rates()
	if runs == 0 {
		for i, a := range prior {
			f.res.Params = append(f.res.Params, sim.CalibratedParam{Name: specParamName(i), Value: a, Prior: a, Source: specFromConfig})
		}
		return nil
	}
	measured := pooled.ConditionalRates()
	rates := make(sim.AcceptanceRate, len(prior))
	for i := range rates {
		rates[i] = measured[min(i, len(measured)-1)] // positions the runs did not draft take the last one's
		f.res.Params = append(f.res.Params, sim.CalibratedParam{Name: specParamName(i), Value: rates[i], Prior: prior[i],
			SD: binomialSD(rates[i], trials(pooled, i)), Pinned: i < len(measured), Source: specFromRuns})
	}
	c := *sc
	c.AcceptanceRate = rates
	f.opts.Base.Engine.SpeculativeConfig = &c
	return nil
}

// pooledSpec adds up the targets' speculative decoding counters; runs is
// how many had them.
func pooledSpec(targets []Target) (s results.SpecDecode, runs int) {
	for _, t := range targets {
		ts, ok := t.Profile.SpecDecode()
		if !ok {
			continue
		}
		runs++
		s.Drafts += ts.Drafts
		s.DraftTokens += ts.DraftTokens
		s.AcceptedTokens += ts.AcceptedTokens
		for len(s.AcceptedPerPos) < len(ts.AcceptedPerPos) {
			s.AcceptedPerPos = append(s.AcceptedPerPos, 0)
		}
		for i, v := range ts.AcceptedPerPos {
			s.AcceptedPerPos[i] += v
		}
	}
	if len(s.AcceptedPerPos) == 0 && s.Valid() { // no per-position counter: one rate for all
		s.AcceptedPerPos = []float64{s.AcceptedTokens / s.DraftTokens * s.Drafts}
	}
	return s, runs
}

// trials is how many drafts reached position i (every one for position 0).
func trials(s results.SpecDecode, i int) float64 {
	if i == 0 || i > len(s.AcceptedPerPos) {
		return s.Drafts
	}
	return s.AcceptedPerPos[i-1]
}

// binomialSD is the standard deviation of a rate a measured on n trials.
func binomialSD(a, n float64) float64 {
	if n <= 0 {
		return 0
	}
	return math.Sqrt(a * (1 - a) / n)
}

func specParamName(i int) string { return fmt.Sprintf("%s[%d]", specParamPrefix, i) }

func isSpecParam(name string) bool { return strings.HasPrefix(name, specParamPrefix+"[") }

// specParams are the acceptance stage's parameters among ps.
func specParams(ps []sim.CalibratedParam) []sim.CalibratedParam {
	var out []sim.CalibratedParam
	for _, p := range ps {
		if isSpecParam(p.Name) {
			out = append(out, p)
		}
	}
	return out
}

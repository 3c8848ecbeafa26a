package sim

import (
	"fmt"

	"github.com/simbench/simbench/traces"
)

// Calibration is what `simbench calibrate` records about a fitted config:
// the runs it was fitted on, the range of workload those runs covered, and
// each fitted parameter with its uncertainty and whether the data pinned it
// or its physics prior decided it. sim uses Range to warn when a workload
// leaves what the fit has seen.
type Calibration struct {
	Model      string            `yaml:"model" json:"model"` // the fitted timing model: physics | linear
	FittedOn   []string          `yaml:"fitted_on" json:"fitted_on"`
	Range      CalibrationRange  `yaml:"range" json:"range"`
	Parameters []CalibratedParam `yaml:"parameters" json:"parameters"`
}

// CalibrationRange is the workload range the calibration runs covered, each
// as [min, max].
type CalibrationRange struct {
	ISL           [2]int     `yaml:"isl,flow" json:"isl"`
	OSL           [2]int     `yaml:"osl,flow" json:"osl"`
	Concurrency   [2]int     `yaml:"concurrency,flow" json:"concurrency"` // closed-loop concurrency; 0 = open loop
	Batch         [2]int     `yaml:"batch,flow" json:"batch"`             // sequences per engine step seen in the token gaps
	PrefixHitRate [2]float64 `yaml:"prefix_hit_rate,flow" json:"prefix_hit_rate"`
}

// CalibratedParam is one fitted parameter.
type CalibratedParam struct {
	Name   string  `yaml:"name" json:"name"`
	Value  float64 `yaml:"value" json:"value"`
	SD     float64 `yaml:"sd" json:"sd"`         // posterior standard deviation
	Prior  float64 `yaml:"prior" json:"prior"`   // the physics prior's value
	Pinned bool    `yaml:"pinned" json:"pinned"` // the data decided it (posterior sd < half the prior's)
	Source string  `yaml:"source" json:"source"` // what decided it: token gaps, TTFT, prior
	// NoCost is an efficiency whose cost the runs do not show at all: its
	// term is off (timing.physics writes the largest efficiency) and Value
	// is 0, not a number to read.
	NoCost bool   `yaml:"no_cost,omitempty" json:"no_cost,omitempty"`
	Layer  string `yaml:"layer,omitempty" json:"layer,omitempty"` // model | server | noise (see calibrate.Layers)
}

// RangeWarnings says where wl leaves the range cfg was calibrated on; nil
// when cfg has no calibration record or wl stays inside it.
func (c Config) RangeWarnings(wl *traces.Workload) []error {
	if c.Calibration == nil {
		return nil
	}
	r := c.Calibration.Range
	isl, osl := [2]int{-1, -1}, [2]int{-1, -1}
	for i := range wl.Requests {
		q := &wl.Requests[i]
		if q.Warmup {
			continue
		}
		isl = widen(isl, q.InputLength)
		if q.OutputLength > 0 {
			osl = widen(osl, q.OutputLength)
		}
	}
	var out []error
	out = appendOutside(out, "ISL", isl, r.ISL)
	out = appendOutside(out, "OSL", osl, r.OSL)
	if wl.Concurrency > 0 && r.Concurrency[1] > 0 {
		out = appendOutside(out, "concurrency", [2]int{wl.Concurrency, wl.Concurrency}, r.Concurrency)
	}
	if hit := traces.Describe(wl).PrefixReuseRatio; hit > r.PrefixHitRate[1]+0.05 {
		out = append(out, fmt.Errorf("prefix hit rate %.2f is above the calibrated range [%.2f, %.2f]",
			hit, r.PrefixHitRate[0], r.PrefixHitRate[1]))
	}
	return out
}

func widen(r [2]int, v int) [2]int {
	if r[0] < 0 || v < r[0] {
		r[0] = v
	}
	if v > r[1] {
		r[1] = v
	}
	return r
}

// appendOutside warns when got reaches more than 10 % beyond the
// calibrated [lo, hi].
func appendOutside(out []error, name string, got, cal [2]int) []error {
	if got[0] < 0 || cal[1] <= 0 {
		return out
	}
	if float64(got[0]) < 0.9*float64(cal[0]) || float64(got[1]) > 1.1*float64(cal[1]) {
		out = append(out, fmt.Errorf("%s %d–%d leaves the calibrated range %d–%d: the fit extrapolates",
			name, got[0], got[1], cal[0], cal[1]))
	}
	return out
}

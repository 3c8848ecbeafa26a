package validate

import (
	"fmt"
	"io"

	"github.com/simbench/simbench/compare"
)

// inSample says why the comparison is in-sample, "" when it is not: the
// simulator was calibrated on a silicon run the comparison then scores,
// so its errors measure a fit, not a prediction. That is the case with
// sim.calibrate_from: silicon and one round (the calibration run is the
// scored run), and for a load sweep (its lowest load calibrates and is
// compared too); with repeat > 1 the warm-up round calibrates and the
// measured rounds are held out, and a live plan or another run directory
// is none of the scored runs.
func (p *Pipeline) inSample() string {
	if !p.Sim.Calibrate || p.Sim.CalibrateFrom != CalibrateFromSilicon {
		return ""
	}
	const holdOut = "hold a run out with calibrate_from: live, a run directory, or repeat: 4 or more (the warm-up round calibrates)"
	if p.Sweep != nil {
		plan, err := p.sweepPlan()
		if err != nil || len(plan.Loads) == 0 {
			return ""
		}
		return fmt.Sprintf("the simulator was calibrated on the silicon sweep's lowest load (%s %g), which is compared too: "+
			"that load's errors are in-sample, a fit, not a prediction; the other loads are held out", plan.Load, plan.Loads[0])
	}
	if p.Repeat <= 1 {
		return "the simulator was calibrated on the scored silicon run (sim.calibrate_from: silicon, repeat: 1): " +
			"its errors are in-sample, a fit, not a prediction; " + holdOut
	}
	return ""
}

// markInSample adds the in-sample reason to the report's warnings (the
// JSON's "warnings", every format's footnotes); "" leaves them as they are.
func markInSample(ws []compare.Warning, reason string) []compare.Warning {
	if reason == "" {
		return ws
	}
	return append(ws, compare.Warning{Msg: "in-sample: " + reason})
}

// withBanner writes the in-sample banner on top of a text or markdown
// report, then the report; "" writes the report alone.
func withBanner(reason string, markdown bool, write func(io.Writer) error) func(io.Writer) error {
	if reason == "" {
		return write
	}
	return func(w io.Writer) error {
		format := "IN-SAMPLE: %s\n\n"
		if markdown {
			format = "> **In-sample:** %s\n\n"
		}
		if _, err := fmt.Fprintf(w, format, reason); err != nil {
			return err
		}
		return write(w)
	}
}

package validate

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/simbench/simbench/compare"
)

// The arms of a validation are the silicon run and the simulated run.
// With repeat: N > 1 they run the way seed 004's overhead measurement ran
// its arms: one process at a time, first a warm-up round (one run per arm,
// discarded), then N measured rounds whose arm order rotates by one each
// round (real, sim; sim, real; …), so that neither arm always runs first,
// right after the other, or on a machine in the same state.
const (
	armReal = 0
	armSim  = 1
)

var armNames = []string{"real", "sim"}

// warmupRound is the round number of the discarded warm-up round.
const warmupRound = -1

// scheduledRun is one run of a validation.
type scheduledRun struct {
	Arm   int
	Round int // warmupRound, or 0 … repeat-1
}

// roundOrder is the order of n arms in measured round r: the base order
// rotated left by r (arms[r%n:] + arms[:r%n]).
func roundOrder(n, r int) []int {
	out := make([]int, 0, n)
	for i := range n {
		out = append(out, (r+i)%n)
	}
	return out
}

// schedule lists every run of a validation with repeat rounds: a single
// round when repeat is 1, else a warm-up round in base order and repeat
// rotated rounds.
func schedule(arms, repeat int) []scheduledRun {
	if repeat <= 1 {
		return []scheduledRun{{armReal, 0}, {armSim, 0}}[:arms]
	}
	var out []scheduledRun
	for _, a := range roundOrder(arms, 0) {
		out = append(out, scheduledRun{a, warmupRound})
	}
	for r := range repeat {
		for _, a := range roundOrder(arms, r) {
			out = append(out, scheduledRun{a, r})
		}
	}
	return out
}

// runDir is where a scheduled run writes: OUTPUT/ARM for a single round,
// OUTPUT/warmup/ARM for the warm-up, OUTPUT/ARM/run_000K for round K-1.
func (v *validation) runDir(s scheduledRun) string {
	switch {
	case v.p.Repeat <= 1:
		return filepath.Join(v.out, armNames[s.Arm])
	case s.Round == warmupRound:
		return filepath.Join(v.out, "warmup", armNames[s.Arm])
	}
	return filepath.Join(v.out, armNames[s.Arm], compare.RepeatDirName(s.Round))
}

// runArms runs the schedule. The first silicon run (the single one, or
// the warm-up round's, which always runs first) is the calibration run
// when the simulator is calibrated on this pipeline's silicon.
func (v *validation) runArms(ctx context.Context) error {
	for i, s := range schedule(len(armNames), v.p.Repeat) {
		dir := v.runDir(s)
		v.logf("%s run%s → %s", armNames[s.Arm], v.roundLabel(s.Round), dir)
		if err := v.runOne(ctx, s, dir); err != nil {
			return err
		}
		if i == 0 && v.p.Sim.Calibrate && v.p.Sim.CalibrateFrom == CalibrateFromSilicon {
			if err := v.calibrateOn(ctx, dir); err != nil {
				return err
			}
		}
	}
	return nil
}

func (v *validation) roundLabel(r int) string {
	switch {
	case v.p.Repeat <= 1:
		return ""
	case r == warmupRound:
		return " (warm-up, discarded)"
	}
	return fmt.Sprintf(" (round %d of %d)", r+1, v.p.Repeat)
}

// logName names a run's log: real and sim for a single round, else
// real_warmup, sim_run_0002, ….
func (v *validation) logName(s scheduledRun) string {
	arm := armNames[s.Arm]
	switch {
	case v.p.Repeat <= 1:
		return arm
	case s.Round == warmupRound:
		return arm + "_warmup"
	}
	return arm + "_" + compare.RepeatDirName(s.Round)
}

package validate

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/simbench/simbench/compare"
	"github.com/simbench/simbench/results"
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
// While the arms run, OUTPUT/NAME is its staging directory.
func (v *validation) runDir(s scheduledRun) string {
	switch {
	case v.p.Repeat <= 1:
		return v.armRoot(armNames[s.Arm])
	case s.Round == warmupRound:
		return filepath.Join(v.armRoot(warmupDir), armNames[s.Arm])
	}
	return filepath.Join(v.armRoot(armNames[s.Arm]), compare.RepeatDirName(s.Round))
}

// warmupDir holds the warm-up round's runs.
const warmupDir = "warmup"

// armRoot is OUTPUT/name, or its staging directory while the arms run.
func (v *validation) armRoot(name string) string {
	if d, ok := v.staged[name]; ok {
		return d
	}
	return filepath.Join(v.out, name)
}

// runArms runs the schedule, each arm directory written whole. The first
// silicon run (the single one, or the warm-up round's, which always runs
// first) is the calibration run when the simulator is calibrated on this
// pipeline's silicon.
func (v *validation) runArms(ctx context.Context) error {
	names := armNames
	if v.p.Repeat > 1 {
		names = append(names[:len(names):len(names)], warmupDir)
	}
	return v.writeArms(names, func() error {
		for i, s := range schedule(len(armNames), v.p.Repeat) {
			dir := v.runDir(s)
			v.logf("%s run%s → %s", armNames[s.Arm], v.roundLabel(s.Round), results.PublishedPath(dir))
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
	})
}

// writeArms runs write with the arm directories OUTPUT/NAME open through
// results.OpenOutputDir (locked, staged: nothing of an earlier validation
// stays in them) and commits them when it returns, also after a failure:
// the silicon runs' records are never lost.
func (v *validation) writeArms(names []string, write func() error) error {
	var dirs []*results.OutputDir
	var err error
	v.staged = map[string]string{}
	for _, n := range names {
		d, oerr := results.OpenOutputDir(filepath.Join(v.out, n))
		if oerr != nil {
			err = oerr
			break
		}
		v.warn(d.Warnings())
		dirs, v.staged[n] = append(dirs, d), d.Dir()
	}
	if err == nil {
		err = write()
	}
	for _, d := range dirs {
		err = errors.Join(err, d.Commit())
	}
	v.staged = nil
	return err
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

package main

import (
	"fmt"
	"io"

	"github.com/simbench/simbench/internal/warning"
	"github.com/simbench/simbench/peerruns"
	"github.com/simbench/simbench/sim/calibrate"
)

// loadTargets opens the --real runs: simbench's and AIPerf's run
// directories with calibrate.LoadTargets, and other tools' runs (an
// inference-perf report stage) with the workload rebuilt from their
// configuration; their warnings go to log.
func loadTargets(paths []string, log io.Writer) ([]calibrate.Target, error) {
	var own []string
	for _, p := range paths {
		if peerruns.Detect(p) == "" {
			own = append(own, p)
		}
	}
	ownTargets, err := calibrate.LoadTargets(own)
	if err != nil {
		return nil, err
	}
	out := make([]calibrate.Target, 0, len(paths))
	for _, p := range paths {
		if peerruns.Detect(p) == "" {
			out, ownTargets = append(out, ownTargets[0]), ownTargets[1:]
			continue
		}
		t, err := peerTarget(p, log)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// peerTarget opens another tool's run as a calibration target: its
// aggregates and the workload its configuration describes.
func peerTarget(path string, log io.Writer) (calibrate.Target, error) {
	run, err := peerruns.Open(path)
	if err != nil {
		return calibrate.Target{}, err
	}
	if run.Workload == nil {
		return calibrate.Target{}, fmt.Errorf("%s: calibrate needs the workload the run replayed, and %s", path, run.NoWorkload)
	}
	warning.Print(log, append(run.Warnings, run.WorkloadNotes...))
	return calibrate.Target{Name: run.Name, Profile: run.Profile, Workload: run.Workload,
		ClientGapMs: calibrate.ClientGap(run.Profile, run.Workload)}, nil
}

package main

import (
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/simbench/simbench/compare"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/sim"
	"github.com/simbench/simbench/traces"
)

// simRepeat simulates the workload --repeat times into DIR/run_0001, …,
// the i-th run (0-based) with simulator seed cfg.Seed+i: the workload stays
// the same (its seed is --random-seed), only the simulator's own random
// choices (kv/random router, step jitter) change, as a real engine's
// run-to-run noise would. `simbench compare` takes DIR as the list of runs.
func simRepeat(c *cli.Context, cfg sim.Config, wl *traces.Workload, input *results.InputConfig, dir string) error {
	n := c.Int("repeat")
	if n < 1 {
		return usagef("--repeat must be >= 1, got %d", n)
	}
	base := cfg.Seed
	return writeOutputDir(c, dir, results.DropPartial, func(stage string) error { // DIR is the unit: no run_NNNN of an earlier --repeat stays
		for i := range n {
			cfg.Seed = base + int64(i)
			if err := simRun(c, cfg, wl, input, filepath.Join(stage, compare.RepeatDirName(i))); err != nil {
				return err
			}
		}
		return nil
	})
}

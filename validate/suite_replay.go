package validate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/simbench/simbench/results"
)

// replay takes the target's runs from an earlier artifact directory of the
// pipeline instead of the target: both plans' runs and every workload's
// real and real-repeat (not the links to sweep points, made again). The
// plan before the workloads is fitted anew on the base that run's live
// calibration discovered (its calibrated-first.yaml: the same fit byte for
// byte when the simulator is unchanged).
func (r *suiteRun) replay(ctx context.Context) error {
	src := r.o.Replay
	first := filepath.Join(src, fitFiles[FitFirst])
	if !exists(first) {
		return fmt.Errorf("--replay %s: no %s, not the artifacts of a pipeline with a calibration plan", src, fitFiles[FitFirst])
	}
	r.logf("replaying the real runs of %s", src)
	if err := copyRealRuns(src, r.out); err != nil {
		return fmt.Errorf("--replay %s: %w", src, err)
	}
	dirs, err := runDirs(filepath.Join(r.out, PlanBeforeDir))
	if err != nil {
		return err
	}
	if err := byStartTime(dirs); err != nil {
		return err
	}
	return r.fit(ctx, dirs, first, FitFirst, PlanBeforeDir+".txt")
}

// copyRealRuns copies src's plans and every DIR/<workload>/real and
// real-repeat that is a directory, not a link, into dst.
func copyRealRuns(src, dst string) error {
	for _, sub := range []string{PlanBeforeDir, PlanAfterDir} {
		if exists(filepath.Join(src, sub)) {
			if err := os.CopyFS(filepath.Join(dst, sub), os.DirFS(filepath.Join(src, sub))); err != nil {
				return err
			}
		}
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range entries {
		for _, side := range []string{RealDir, RealRepeatDir} {
			from := filepath.Join(src, e.Name(), side)
			if fi, err := os.Lstat(from); err != nil || !fi.IsDir() {
				continue
			}
			if err := os.CopyFS(filepath.Join(dst, e.Name(), side), os.DirFS(from)); err != nil {
				return err
			}
		}
	}
	return nil
}

// byStartTime orders run directories as they ran (the fit takes the
// client's gap from the first).
func byStartTime(dirs []string) error {
	start := map[string]string{}
	for _, d := range dirs {
		run, err := results.LoadRun(d)
		if err != nil {
			return err
		}
		start[d] = run.Profile.StartTime
	}
	sort.SliceStable(dirs, func(i, j int) bool { return start[dirs[i]] < start[dirs[j]] })
	return nil
}

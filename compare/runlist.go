package compare

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/simbench/simbench/results"
)

// repeatDirPattern names the run directories of repeated runs.
var repeatDirPattern = regexp.MustCompile(`^run_[0-9]{4,}$`)

// RepeatDirName is the directory of the i-th (0-based) repeated run:
// run_0001, run_0002, … as `simbench sim --repeat` and `simbench validate`
// write them and ExpandRuns reads them.
func RepeatDirName(i int) string { return fmt.Sprintf("run_%04d", i+1) }

// ErrEmptyRunListElement is ExpandRuns' error for a list such as "a,,b".
var ErrEmptyRunListElement = errors.New("empty element")

// ExpandRuns turns one side's argument into run paths: a comma-separated
// list, each element a run, or a directory holding only repeated runs
// (run_0001, run_0002, …), which stands for all of them.
func ExpandRuns(arg string) ([]string, error) {
	var out []string
	for _, p := range strings.Split(arg, ",") {
		if p = strings.TrimSpace(p); p == "" {
			return nil, fmt.Errorf("run list %q has an %w", arg, ErrEmptyRunListElement)
		}
		runs, err := repeatedRuns(p)
		if err != nil {
			return nil, err
		}
		out = append(out, runs...)
	}
	return out, nil
}

// repeatedRuns lists dir's run_NNNN subdirectories when dir is not a run
// itself; otherwise it returns the path alone.
func repeatedRuns(path string) ([]string, error) {
	st, err := os.Stat(path)
	if err != nil || !st.IsDir() || isRunDir(path) {
		return []string{path}, nil // Open reports what is wrong with it
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, fmt.Errorf("listing runs: %w", err)
	}
	var runs []string
	for _, e := range entries {
		if e.IsDir() && repeatDirPattern.MatchString(e.Name()) {
			runs = append(runs, filepath.Join(path, e.Name()))
		}
	}
	if len(runs) == 0 {
		return []string{path}, nil
	}
	return runs, nil
}

func isRunDir(dir string) bool {
	for _, name := range []string{results.ProfileJSONName, results.RecordsName} {
		if isFile(filepath.Join(dir, name)) {
			return true
		}
	}
	return false
}

// OpenRuns opens every path (see Open).
func OpenRuns(paths []string) ([]*Input, error) {
	ins := make([]*Input, 0, len(paths))
	for _, p := range paths {
		in, err := Open(p)
		if err != nil {
			return nil, err
		}
		ins = append(ins, in)
	}
	return ins, nil
}

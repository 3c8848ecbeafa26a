package results

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// An output directory (a run directory, or a parent of runs: `sim
// --repeat`'s run_NNNN, a sweep's points) is written whole, by one writer
// at a time:
//
//   - OpenOutputDir takes an exclusive lock, the file .NAME.simbench.lock
//     beside the directory NAME (a second writer of the same directory is
//     refused with ErrOutputBusy; the lock of a writer that died is taken
//     over, with a warning naming what it left);
//   - it refuses a directory that is neither empty nor a simbench output
//     (ErrNotOutputDir): a simbench output holds profile_export_aiperf.json,
//     profile_export.jsonl, sweep_summary.json or grid_summary.json, or holds only
//     subdirectories that do (run_NNNN of --repeat);
//   - the writer writes into a staging directory beside it,
//     .NAME.simbench-DIGITS, and Commit swaps that in for the old output
//     (renamed aside, then removed): nothing of an earlier run stays, and a
//     reader sees the old output, none, or the new one, never a mix.
//     Abort removes the staging directory and leaves the old output as it
//     was.
const (
	lockSuffix   = ".simbench.lock"
	stagingInfix = ".simbench-"
)

// outputMarkers are the files that make a directory a simbench output.
var outputMarkers = []string{ProfileJSONName, RecordsName, "sweep_summary.json", "grid_summary.json"}

// ErrNotOutputDir is OpenOutputDir's error for a directory that is not
// empty and holds no simbench output: it is not replaced.
var ErrNotOutputDir = errors.New("not empty and not a simbench output")

// ErrOutputBusy is OpenOutputDir's error for a directory another process
// is writing.
var ErrOutputBusy = errors.New("another simbench process is writing it")

// OutputDir is an output directory being written: locked, with its
// staging directory. Commit or Abort ends it.
type OutputDir struct {
	path     string // the output directory as given
	clean    string
	staging  string
	lock     *lockFile
	warnings []error
}

// OpenOutputDir locks the output directory path (creating its parent),
// checks that it is absent, empty or a simbench output, and creates its
// staging directory.
func OpenOutputDir(path string) (*OutputDir, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if wd, err := os.Getwd(); err == nil && (wd == abs || isWithin(wd, abs)) {
		return nil, fmt.Errorf("%s: %w: it holds the working directory, which would be replaced", path, ErrNotOutputDir)
	}
	clean := filepath.Clean(path) // relative stays relative: the paths printed are the ones given
	parent, name := filepath.Dir(clean), filepath.Base(clean)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, err
	}
	lockPath := filepath.Join(parent, "."+name+lockSuffix)
	lock, prev, err := acquireLock(lockPath)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	d := &OutputDir{path: path, clean: clean, lock: lock}
	if err := checkOutputDir(path, clean); err != nil {
		return nil, errors.Join(err, lock.release())
	}
	if d.staging, err = os.MkdirTemp(parent, "."+name+stagingInfix+"*"); err != nil {
		return nil, errors.Join(fmt.Errorf("%s: %w", path, err), lock.release())
	}
	if err := lock.record(d.staging); err != nil {
		return nil, errors.Join(fmt.Errorf("%s: %w", lockPath, err), d.Abort())
	}
	if w := deadWriterWarning(path, prev); w != "" {
		d.warnings = append(d.warnings, errors.New(w))
	}
	return d, nil
}

// Dir is the staging directory: where the writer writes.
func (d *OutputDir) Dir() string { return d.staging }

// Path is the output directory as given.
func (d *OutputDir) Path() string { return d.path }

// Warnings are what the writer should print: a dead writer's lock taken
// over.
func (d *OutputDir) Warnings() []error { return d.warnings }

// Commit puts the staging directory in place of the output directory and
// releases the lock. A staging directory left empty (or removed) replaces
// nothing: the old output stays, as after Abort.
func (d *OutputDir) Commit() error {
	entries, err := os.ReadDir(d.staging)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return errors.Join(fmt.Errorf("%s: %w", d.path, err), d.lock.release())
	}
	if len(entries) == 0 {
		return d.Abort()
	}
	return errors.Join(d.swap(), d.lock.release())
}

// swap renames the old output aside, the staging directory into place,
// and removes the old output.
func (d *OutputDir) swap() error {
	old := d.staging + "-old"
	hadOld := true
	if err := os.Rename(d.clean, old); errors.Is(err, os.ErrNotExist) {
		hadOld = false
	} else if err != nil {
		return fmt.Errorf("%s: moving the previous output aside: %w", d.path, err)
	}
	if err := os.Rename(d.staging, d.clean); err != nil {
		if hadOld {
			err = errors.Join(err, os.Rename(old, d.clean))
		}
		return fmt.Errorf("%s: %w (the new files are in %s)", d.path, err, d.staging)
	}
	if hadOld {
		if err := os.RemoveAll(old); err != nil {
			return fmt.Errorf("%s: removing the previous output: %w", d.path, err)
		}
	}
	return nil
}

// Abort removes the staging directory and releases the lock; the output
// directory stays as it was.
func (d *OutputDir) Abort() error {
	err := os.RemoveAll(d.staging)
	if err != nil {
		err = fmt.Errorf("%s: %w", d.path, err)
	}
	return errors.Join(err, d.lock.release())
}

// Partial says what WriteOutput does with an output whose writer failed.
type Partial bool

const (
	// DropPartial keeps the old output (a simulated run is written whole or
	// not at all).
	DropPartial Partial = false
	// KeepPartial commits what was written (a real run never loses a
	// finished request; a sweep's summary says where it stopped).
	KeepPartial Partial = true
)

// WriteOutput writes the output directory path whole: write gets the
// staging directory, which is committed when write succeeds, or fails
// with partial KeepPartial, and aborted otherwise. The directory's
// warnings (OutputDir.Warnings) are handed as values to warn (nil: dropped)
// before write runs, so that the caller prints them before what write
// prints; the library prints nothing.
func WriteOutput(path string, warn func([]error), partial Partial, write func(dir string) error) error {
	d, err := OpenOutputDir(path)
	if err != nil {
		return err
	}
	if warn != nil {
		warn(d.Warnings())
	}
	err = write(d.Dir())
	if err == nil || partial == KeepPartial {
		return errors.Join(err, d.Commit())
	}
	return errors.Join(err, d.Abort())
}

// PublishedPath is path with every staging directory in it replaced by the
// output directory it stands for: the path a file written under a staging
// directory has once committed.
func PublishedPath(path string) string {
	parts := strings.Split(path, string(filepath.Separator))
	for i, p := range parts {
		if name, ok := stagingName(p); ok {
			parts[i] = name
		}
	}
	return strings.Join(parts, string(filepath.Separator))
}

// stagingName is the output directory name a staging directory's name
// .NAME.simbench-DIGITS stands for.
func stagingName(base string) (string, bool) {
	i := strings.LastIndex(base, stagingInfix)
	if !strings.HasPrefix(base, ".") || i < 2 {
		return "", false
	}
	if _, err := strconv.ParseUint(base[i+len(stagingInfix):], 10, 64); err != nil {
		return "", false
	}
	return base[1:i], true
}

// checkOutputDir accepts an absent or empty directory and a simbench
// output.
func checkOutputDir(path, clean string) error {
	st, err := os.Stat(clean)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return err
	case !st.IsDir():
		return fmt.Errorf("%s: not a directory", path)
	}
	entries, err := os.ReadDir(clean)
	if err != nil {
		return err
	}
	foreign := notOutput(clean, entries)
	if foreign == "" {
		return nil
	}
	n := len(outputMarkers)
	return fmt.Errorf("%s: %w: it holds %s and no %s or %s: write to a new or empty directory",
		path, ErrNotOutputDir, foreign, strings.Join(outputMarkers[:n-1], ", "), outputMarkers[n-1])
}

// notOutput is "" when the directory dir (its entries) is empty, holds an
// output marker, or holds only subdirectories that do; else the name of an
// entry that is not a run.
func notOutput(dir string, entries []os.DirEntry) string {
	if slices.ContainsFunc(entries, isMarkerFile) {
		return ""
	}
	for _, e := range entries {
		if !e.IsDir() {
			return e.Name()
		}
		sub, err := os.ReadDir(filepath.Join(dir, e.Name()))
		if err != nil || !slices.ContainsFunc(sub, isMarkerFile) {
			return e.Name()
		}
	}
	return ""
}

func isMarkerFile(e os.DirEntry) bool { return !e.IsDir() && slices.Contains(outputMarkers, e.Name()) }

// isWithin reports whether path lies under dir (both absolute, clean).
func isWithin(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && rel != "."
}

// deadWriterWarning names what a writer that died left, from its lock
// file's record ("" when the lock was fresh).
func deadWriterWarning(path, prev string) string {
	pid, staging, ok := strings.Cut(strings.TrimSpace(prev), " ")
	if !ok {
		return ""
	}
	msg := fmt.Sprintf("%s: the previous writer (pid %s) stopped without finishing: its lock was taken over", path, pid)
	if st, err := os.Stat(staging); err == nil && st.IsDir() {
		msg += fmt.Sprintf("; its partial files are in %s", staging)
	}
	return msg
}

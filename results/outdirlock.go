package results

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// lockFile is an output directory's lock: the file .NAME.simbench.lock,
// held while it exists and its holder lives. It records "PID STAGING" so
// a second writer can name the first, and a later one what a dead writer
// left.
type lockFile struct {
	path string
	f    *os.File
}

// record writes the holder's pid and staging directory into the lock file.
func (l *lockFile) record(staging string) error {
	if err := l.f.Truncate(0); err != nil {
		return err
	}
	_, err := l.f.WriteAt([]byte(fmt.Sprintf("%d %s\n", os.Getpid(), staging)), 0)
	return err
}

// release removes the lock file, then closes it (which unlocks it): a
// writer waiting on the removed file sees it is no longer the lock.
// Releasing twice is a no-op.
func (l *lockFile) release() error {
	if l.f == nil {
		return nil
	}
	err := os.Remove(l.path)
	if errors.Is(err, os.ErrNotExist) {
		err = nil
	}
	err = errors.Join(err, l.f.Close())
	l.f = nil
	if err != nil {
		return fmt.Errorf("%s: %w", l.path, err)
	}
	return nil
}

// holder is what a lock file says of its holder: its record, at most a
// line.
func holder(f *os.File) string {
	b := make([]byte, 4096)
	n, err := f.ReadAt(b, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return ""
	}
	line, _, _ := strings.Cut(string(b[:n]), "\n")
	return line
}

// busyError is ErrOutputBusy naming the holder's pid when its lock file
// says it.
func busyError(path, rec string) error {
	pid, _, _ := strings.Cut(rec, " ")
	if pid == "" {
		return fmt.Errorf("%w (lock %s)", ErrOutputBusy, path)
	}
	return fmt.Errorf("%w (pid %s, lock %s)", ErrOutputBusy, pid, path)
}

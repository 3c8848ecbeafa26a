//go:build unix

package results

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// acquireLock takes the lock file path with flock(2), which the kernel
// releases when its holder exits, however it exits: a lock file found
// unlocked is a dead writer's, taken over; prev is its record ("" for a
// new lock).
func acquireLock(path string) (l *lockFile, prev string, err error) {
	for {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, "", err
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			rec := holder(f)
			f.Close()
			if errors.Is(err, unix.EWOULDBLOCK) {
				return nil, "", busyError(path, rec)
			}
			return nil, "", fmt.Errorf("cannot lock %s (does its filesystem support flock?): %w", path, err)
		}
		// The holder before us may have removed the file between our open
		// and our lock: then what we hold is no longer the lock; again.
		fst, ferr := f.Stat()
		pst, perr := os.Stat(path)
		if ferr == nil && perr == nil && os.SameFile(fst, pst) {
			return &lockFile{path: path, f: f}, holder(f), nil
		}
		f.Close()
	}
}

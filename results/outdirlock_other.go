//go:build !unix

package results

import (
	"errors"
	"os"
)

// acquireLock creates the lock file path exclusively. Without flock(2) a
// dead writer's lock cannot be told from a live one's: the error names the
// file to remove.
func acquireLock(path string) (*lockFile, string, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		rec := ""
		if old, oerr := os.Open(path); oerr == nil {
			rec = holder(old)
			old.Close()
		}
		return nil, "", busyError(path, rec)
	}
	if err != nil {
		return nil, "", err
	}
	return &lockFile{path: path, f: f}, "", nil
}

//go:build windows

package cycle

import "os"

// holdLock creates the lock file at path and keeps it open: Windows does
// not delete a file another process holds open.
func holdLock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o600)
}

// claimDead reports whether dir is a channel directory whose run is gone:
// its lock file could be deleted, which Windows refuses while the run
// holds it open.
func claimDead(dir string) (release func(), dead bool) {
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() {
		return nil, false
	}
	if err := os.Remove(dir + string(os.PathSeparator) + lockName); err != nil {
		return nil, false
	}
	return func() {}, true
}

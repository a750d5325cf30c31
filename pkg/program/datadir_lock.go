//go:build unix

package program

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// lockDataDir takes the standalone's hold on dir, its DATA_DIR: an
// exclusive flock on dir/lock, which then holds this process's id. Two
// standalones on one data directory would share its broker's files and
// its key: the second is refused with one line naming the directory and
// the process that holds it. The kernel releases the lock when the file
// is closed or the process ends, however it ends, so a crash leaves no
// stale lock. With create false a missing directory or lock file takes
// nothing and refuses nothing (no standalone runs there, and nothing is
// created): the caller takes the lock again once it made the directory.
func lockDataDir(dir string, create bool) (*os.File, error) {
	flags := os.O_RDWR
	if create {
		flags |= os.O_CREATE
	}
	f, err := os.OpenFile(filepath.Join(dir, "lock"), flags, 0o600)
	if errors.Is(err, os.ErrNotExist) && !create {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("DATA_DIR: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := io.ReadAll(io.LimitReader(f, 32))
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			pid := strings.TrimSpace(string(holder))
			if _, err := strconv.Atoi(pid); err != nil {
				pid = "unknown" // it is writing it
			}
			return nil, fmt.Errorf("%s (DATA_DIR) is in use by another standalone, pid %s: stop that one first (Ctrl-C), "+
				"or set DATA_DIR to another directory", dir, pid)
		}
		return nil, fmt.Errorf("DATA_DIR: lock %s: %w", f.Name(), err)
	}
	// The id only tells the next one whom to stop: not writing it is no
	// failure.
	if f.Truncate(0) == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f, nil
}

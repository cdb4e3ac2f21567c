package oplog

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// ErrLocked is returned by Open when another process (or another Open in
// this one) holds the data dir.
var ErrLocked = errors.New("data dir is in use")

// lockDir takes an exclusive flock on dir/LOCK and writes our pid into it
// for the message another fanout gets. The kernel drops the lock when the
// process dies, so a kill -9 never leaves a stale lock behind.
func lockDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, lockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			who := "another fanout"
			if pid := strings.TrimSpace(string(holder)); pid != "" {
				who += " (pid " + pid + ")"
			}
			return nil, fmt.Errorf("%w: %s holds %s; stop it or use another data dir", ErrLocked, who, path)
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f, nil
}

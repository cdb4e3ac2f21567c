package oplog

import (
	"os"
	"syscall"
)

// dataFile syncs with fdatasync: a segment's data, not its times.
type dataFile struct{ *os.File }

func (f dataFile) Sync() error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			if err != nil {
				return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: err}
			}
			return nil
		}
	}
}

func openDataFile(path string) (SegmentFile, error) {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	return dataFile{f}, nil
}

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

// Reserve allocates the blocks of [off, off+n) and leaves the file's size
// as it is (FALLOC_FL_KEEP_SIZE): an append into reserved blocks skips
// ext4's delayed allocation, which cost more of a buffered write's CPU
// than copying the data did, and the file still ends where its data does.
func (f dataFile) Reserve(off, n int64) error { return reserveBlocks(f.File, off, n) }

// reserveBlocks is Reserve for any file: a snapshot reserves its blocks too.
func reserveBlocks(f *os.File, off, n int64) error {
	for {
		err := syscall.Fallocate(int(f.Fd()), fallocKeepSize, off, n)
		if err != syscall.EINTR {
			return err
		}
	}
}

const fallocKeepSize = 0x1 // FALLOC_FL_KEEP_SIZE

func openDataFile(path string) (SegmentFile, error) {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	return dataFile{f}, nil
}

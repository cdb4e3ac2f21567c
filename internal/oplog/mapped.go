package oplog

import (
	"fmt"
	"os"
	"syscall"
	"unsafe"
)

// mapped is a data file mapped read-only for recovery: frames are checked
// and parsed where they lie, with no copy into a read buffer, and a key
// read in the first pass is a view that costs no allocation. Pages
// recovery is done with are given back (release) so that they do not
// count in the process's memory while the engines fill theirs.
type mapped struct {
	data     []byte
	released int64 // data[:released] was given back
}

// mapFile maps the first size bytes of f.
func mapFile(f *os.File, size int64) (*mapped, error) {
	if size == 0 {
		return &mapped{}, nil
	}
	if size != int64(int(size)) {
		return nil, fmt.Errorf("%s is too big to map (%d bytes)", f.Name(), size)
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mapping %s: %w", f.Name(), err)
	}
	return &mapped{data: b}, nil
}

// releaseStep is how far recovery moves past released pages before it
// releases again: one call per few MiB, not per record.
const releaseStep = 1 << 20

// releaseTo gives back the whole pages below off, once releaseStep more
// of them are done with. The file's pages stay in the page cache; touching
// them again maps them again.
func (m *mapped) releaseTo(off int64) {
	page := int64(os.Getpagesize())
	off = off / page * page
	if off-m.released < releaseStep {
		return
	}
	dontNeed(m.data[m.released:off])
	m.released = off
}

// releaseAll gives back every page, and starts releasing from the start
// again.
func (m *mapped) releaseAll() {
	if len(m.data) > 0 {
		dontNeed(m.data)
	}
	m.released = 0
}

// close unmaps the file: no view of it may be used afterwards.
func (m *mapped) close() {
	if m.data != nil {
		_ = syscall.Munmap(m.data)
		m.data = nil
	}
}

// offset is where b, a non-empty view of m's bytes, starts in the file.
func (m *mapped) offset(b []byte) int64 {
	if len(b) == 0 {
		return 0 // an empty slice may not point into the file at all
	}
	return int64(uintptr(unsafe.Pointer(unsafe.SliceData(b))) - uintptr(unsafe.Pointer(unsafe.SliceData(m.data))))
}

// at is the n bytes at off.
func (m *mapped) at(off int64, n uint32) []byte {
	return m.data[off : off+int64(n) : off+int64(n)]
}

//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package sqs

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// mapRegion maps n bytes of anonymous memory, or returns nil.
func mapRegion(n int) []byte { return mapAnon(n, populate) }

// mapAnon maps n bytes with the extra flags. It maps by pointer rather than
// with syscall.Mmap, whose bookkeeping refuses to unmap part of a mapping,
// as mapHugeBlock does.
func mapAnon(n, flags int) []byte {
	p, err := unix.MmapPtr(-1, 0, nil, uintptr(n), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE|flags)
	if err != nil {
		return nil
	}
	return unsafe.Slice((*byte)(p), n)
}

// unmapRegion gives b, all of a mapping or a page-aligned part of one, back.
func unmapRegion(b []byte) bool {
	return unix.MunmapPtr(unsafe.Pointer(unsafe.SliceData(b)), uintptr(len(b))) == nil
}

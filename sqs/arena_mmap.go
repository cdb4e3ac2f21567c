//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package sqs

import "syscall"

// mapRegion maps n bytes of anonymous memory, or returns nil.
func mapRegion(n int) []byte {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE|populate)
	if err != nil {
		return nil
	}
	return b
}

func unmapRegion(b []byte) bool { return syscall.Munmap(b) == nil }

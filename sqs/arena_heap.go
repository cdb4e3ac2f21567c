//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package sqs

// Without mmap every region comes from Go's heap (still noscan).
func mapRegion(int) []byte      { return nil }
func unmapRegion(b []byte) bool { return false }

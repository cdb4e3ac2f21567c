package main

import "syscall"

// mapFloorRegion maps n bytes faulted in at once (MAP_POPULATE), as
// fanout maps its queues' regions on Linux.
func mapFloorRegion(n int) []byte {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE|syscall.MAP_POPULATE)
	if err != nil {
		return make([]byte, n) // the floor still keeps the bytes
	}
	return b
}

// unmapFloorRegion returns a region to the kernel. One that came from
// make, when mapping failed, is not a mapping: Munmap refuses it and the
// collector takes it instead.
func unmapFloorRegion(b []byte) {
	_ = syscall.Munmap(b)
}

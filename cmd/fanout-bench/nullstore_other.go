//go:build !linux

package main

// mapFloorRegion takes n bytes from Go's heap where fanout-bench does not
// map memory itself.
func mapFloorRegion(n int) []byte { return make([]byte, n) }

func unmapFloorRegion([]byte) {}

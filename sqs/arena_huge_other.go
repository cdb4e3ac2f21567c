//go:build !linux

package sqs

// Huge pages are used on Linux only (arena_huge_linux.go).
const hugeBlock = 2 << 20

var hugePages = false

func mapHugeBlock(n int) []byte { return mapRegion(n) }

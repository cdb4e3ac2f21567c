//go:build !linux

package durable

import "syscall"

// Elsewhere the process's time stands in for the thread's.
const rusageThread = syscall.RUSAGE_SELF

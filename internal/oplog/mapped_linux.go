package oplog

import "syscall"

// dontNeed unmaps b's pages; reading b again maps the file's pages anew.
// Advice only: a failure leaves them mapped, which costs memory until the
// mapping is closed, never correctness.
func dontNeed(b []byte) { _ = syscall.Madvise(b, syscall.MADV_DONTNEED) }

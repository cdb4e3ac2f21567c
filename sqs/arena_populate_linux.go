package sqs

import "syscall"

// populate asks the kernel to fault a new region in at once: one call
// instead of a trap per page as messages are appended. A region is mapped
// only when its queue has already grown to its size, so it fills soon.
const populate = syscall.MAP_POPULATE

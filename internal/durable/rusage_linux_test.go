package durable

// rusageThread is Linux's RUSAGE_THREAD: the calling thread alone.
const rusageThread = 1

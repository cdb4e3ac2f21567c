//go:build !fanout_lockcheck

package sqs

// lock and unlock take and release the queue's lock. Built with the
// fanout_lockcheck tag they also check the lock order (lockcheck.go).
func (q *Queue) lock()   { q.mu.Lock() }
func (q *Queue) unlock() { q.tidy(); q.mu.Unlock() }

// registryLocking is called before the engine's registry lock is taken.
func registryLocking() {}

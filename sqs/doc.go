// Package sqs is fanout's in-memory SQS engine: queues, messages, visibility,
// delays, retention, long polling and dead-letter queues. It knows nothing of
// HTTP, XML or JSON; sqs/api puts it on the wire.
//
// # Lock order
//
// Three kinds of lock guard the engine: the registry lock (Engine.mu, the
// queues by name), one lock per queue (Queue.mu, all of that queue's state)
// and the move-task locks (moveTasks.mu, then moveTask.mu). The rules:
//
//   - The registry lock may be held while one queue lock is taken, never the
//     other way round: no code takes the registry lock while it holds a queue
//     lock.
//   - At most one queue lock at a time, on any goroutine. Nothing that holds
//     a queue's lock touches another queue, not even to read its settings.
//   - A dead-letter move removes the message under the source's lock,
//     releases it, then enqueues into the target under the target's lock
//     (Engine.deadLetter). A target that is the source itself is no
//     exception: its lock is taken again, after it was released.
//   - Validating a RedrivePolicy reads what it needs of the target (its type
//     and RedriveAllowPolicy) before the source's lock is taken; when the
//     target is the queue itself, from the settings being applied.
//   - A move task takes messages out under the source's lock, releases it,
//     then enqueues each under its destination's lock. Move-task locks are
//     never held while a queue lock is taken, nor the other way round.
//   - The clock's lock is a leaf: clock.Manual runs due work outside it.
//
// # Memory
//
// A queued message is a fixed-size, pointer-free record (slab.go) and its
// bytes in the queue's append-only chunks (chunks.go): id, MD5s, body,
// encoded attributes, rare system attributes. The deque, heaps and handle
// map hold record indexes, so the collector's work does not grow with the
// backlog; regions of 256 KiB and more are mapped outside Go's heap
// (arena.go), so a store of a gigabyte costs a gigabyte of RSS. Nothing
// handed out of the engine points into this memory. To walk a queue's
// messages (a snapshot, say), go through its slots 0 to slab.n-1 and skip
// those in stateGone; the containers give their order.
//
// # Durability
//
// With Options.Journal every change of durable state is reported, under the
// lock of the queue it touches, as an engine-level Change (journal.go), and
// the call answers once it is stored; Dump and a Restorer (restore.go) write
// and read the whole state. The engine knows nothing of the store's format.
//
// Built with the fanout_lockcheck tag (go test -tags fanout_lockcheck), every
// queue lock checks these rules and panics on the goroutine that breaks them.
package sqs

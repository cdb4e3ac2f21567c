// Package persist is the contract between fanout's engines and a durable
// store. The engines describe their state as keys holding opaque values
// (they choose both encodings); a store keeps the latest value of each key
// on disk and hands the live keys back at start-up. Nothing here knows what
// a queue or a message is, and nothing in an engine knows how a store lays
// its bytes out, so a second backend (a key-value service, an existing
// distributed engine) can sit behind the same interface later.
//
// # The contract
//
// State: the store's state is a map from key to value. A Record changes it:
// OpPut sets a key to a value (the whole value, never a delta, so replaying
// a Put twice is harmless), OpDelete removes a key, OpDeletePrefix removes
// every key that starts with Key (a purged or deleted queue in one record).
//
// Atomicity: one batch (the records of one Enqueue or Commit call) is all
// or nothing on disk. After a crash, recovery sees either every record of a
// batch or none of them; so a SendMessageBatch or DeleteMessageBatch is one
// batch, and so is any change that touches several keys that must agree.
//
// Order: batches take effect in the order Enqueue was called. A caller that
// changes one key from several goroutines serialises those changes itself
// (the engines do: a key belongs to one queue or topic, and Enqueue is called
// under that object's lock, in the same critical section that applies the
// change in memory). There is no order between keys of different objects
// beyond that.
//
// Durability: Wait (or Commit) returns nil only when the batch is as durable
// as the store's mode promises: in the default mode it is on stable storage
// (fsync'd), and concurrent batches share one sync (group commit), so a
// caller enqueues under its lock and waits after releasing it. In a relaxed
// mode a store may return before the sync and say what a crash may lose.
// A non-nil error means the batch may or may not be on disk and must not
// be acknowledged to a client (the engines answer AWS's 500: InternalError
// in SNS, InternalFailure in SQS); a store that can no longer guarantee
// anything (a failed fsync) keeps failing every later call rather than
// pretend. Since Enqueue follows the change in memory, a failed Wait leaves memory ahead of the disk: the
// caller undoes the change (enqueueing nothing for the undo, as nothing of
// it is to be kept) or refuses writes from then on, so that what clients
// see does not differ from what a restart would bring back.
//
// Recovery: a store opens with a Loader, which it calls once for each live
// key, before the first Enqueue is accepted. Keys come roughly oldest write
// first (a log store hands over its snapshot's keys in the order they were
// emitted, then the keys written since, in the order of their last write);
// an order that matters, such as a FIFO group's, travels in the values. The
// key and value slices are the caller's to keep. If the open fails, even
// after Loader calls, the caller discards what it loaded. Recovery yields a
// state that existed at some moment: every batch whose Wait returned nil in
// the default mode, and a prefix of the later ones.
//
// Compaction: a store that keeps a log may call the Snapshotter the caller
// gave it, at any time and from its own goroutine, to rewrite the log as the
// current state; it emits every live key with its current value. It reads
// each key under the same lock that Enqueue for that key is called under, so
// the value it emits includes every batch already enqueued for that key; the
// store replays the batches enqueued after the snapshot began on top of it,
// which is why values are whole. It may run concurrently with Enqueue.
package persist

import "errors"

// Op is what a Record does to its key.
type Op uint8

// The operations a store applies; their numbers are part of on-disk formats.
const (
	OpPut          Op = 1 // set Key to Value
	OpDelete       Op = 2 // remove Key
	OpDeletePrefix Op = 3 // remove every key with the prefix Key
)

// Valid reports whether o is one of the operations above.
func (o Op) Valid() bool { return o >= OpPut && o <= OpDeletePrefix }

// Record is one change to the store's state. Key and Value are opaque to
// the store; a store copies what it needs before Enqueue returns, so the
// caller may reuse the slices afterwards.
type Record struct {
	Op    Op
	Key   []byte
	Value []byte // only for OpPut
}

// Put, Delete and DeletePrefix build Records.
func Put(key, value []byte) Record { return Record{Op: OpPut, Key: key, Value: value} }
func Delete(key []byte) Record     { return Record{Op: OpDelete, Key: key} }
func DeletePrefix(p []byte) Record { return Record{Op: OpDeletePrefix, Key: p} }

// Store keeps batches of Records durably; see the package comment for what
// it promises.
type Store interface {
	// Enqueue orders batch after every batch enqueued before it and starts
	// making it durable; it does not wait for the disk. Call it in the
	// critical section that applies the change in memory.
	Enqueue(batch []Record) Pending
	// Commit is Enqueue followed by Wait.
	Commit(batch []Record) error
	// Close makes everything enqueued durable, stops the store's goroutines
	// and releases the data directory.
	Close() error
}

// Pending is an enqueued batch on its way to disk.
type Pending interface {
	// Wait returns once the batch is durable (per the store's mode), or the
	// reason it cannot be.
	Wait() error
}

// Loader receives one live key and its value during recovery; an error
// stops recovery and fails the store's open.
type Loader func(key, value []byte) error

// Snapshotter writes the caller's current state through emit, one call per
// live key; an error from emit must be returned.
type Snapshotter func(emit func(key, value []byte) error) error

// ErrClosed is returned for batches enqueued after Close.
var ErrClosed = errors.New("persist: store is closed")

// Package durable turns the engines' state changes into a store's records
// and back: the engines report engine-level state (sns.Change), this package
// chooses the keys and the bytes (persist.Record), and at start-up it
// decodes what the store hands back into the state each engine restores.
// Neither the engines nor the store know the other's side.
//
// # Keys
//
// Every key starts with its service, account and region, so that a reset
// namespace is one DeletePrefix and recovery can tell which engine a key
// belongs to:
//
//	sns/<account>/<region>/topic/<name>                 sns.TopicState
//	sns/<account>/<region>/topic/<name>/seq             sns.TopicSequence (FIFO)
//	sns/<account>/<region>/topic/<name>/sub/<id>        sns.SubscriptionState (<id>: the ARN's last field)
//	sns/<account>/<region>/topic/<name>/dedup/<key>     sns.DedupState (FIFO; <key> may hold any byte)
//	sns/<account>/<region>/topic/<name>/archive/<seq>   sns.ArchivedState (FIFO with an ArchivePolicy)
//
// A deleted topic is a Delete of its key and a DeletePrefix of its key and
// "/" (names cannot hold a "/", so no other topic shares that prefix).
//
// # Values
//
// A format byte (1), then the JSON of the engine's state type. The JSON
// field names are the Go ones: renaming a field of those types changes the
// format, which the golden test of this package catches; add fields, never
// rename them. Dedup entries and archived messages that expire are not
// deleted one by one: recovery drops the expired ones and the next
// compaction (which writes the live state only) drops them from disk.
package durable

import (
	"errors"
	"fmt"
)

// formatV1 leads every value this package writes.
const formatV1 = 1

// ErrFormat is a value or key this version cannot read.
var ErrFormat = errors.New("durable: unknown record format")

func formatError(key []byte, why string) error {
	return fmt.Errorf("%w: key %q: %s", ErrFormat, key, why)
}

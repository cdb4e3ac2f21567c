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

	"github.com/fanout/fanout/internal/persist"
)

// formatV1 leads every value this package writes.
const formatV1 = 1

// ErrFormat is a value or key this version cannot read.
var ErrFormat = errors.New("durable: unknown record format")

func formatError(key []byte, why string) error {
	return fmt.Errorf("%w: key %q: %s", ErrFormat, key, why)
}

// storeJournal is what the engines' journals share: the store and the
// prefix of their namespace's keys.
type storeJournal struct {
	st     persist.Store
	prefix string
}

// enqueue makes the records of one change one batch.
func (j storeJournal) enqueue(recs []persist.Record, err error) persist.Pending {
	if err != nil {
		return failed{err}
	}
	return j.st.Enqueue(recs)
}

type failed struct{ err error }

func (f failed) Wait() error { return f.err }

// emitRecords is a Dump's callback for a Snapshotter: the puts of one
// change (a Dump's changes hold nothing else), through emit.
func emitRecords(recs []persist.Record, err error, emit func(key, value []byte) error) error {
	if err != nil {
		return err
	}
	for _, r := range recs {
		if err := emit(r.Key, r.Value); err != nil {
			return err
		}
	}
	return nil
}

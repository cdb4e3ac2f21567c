package main

import (
	"github.com/fanout/fanout/internal/oplog"
	"github.com/fanout/fanout/internal/persist"
)

type oplogStore struct{ l *oplog.Log }

func openOplog(dir string, snap persist.Snapshotter, load persist.Loader) (store, error) {
	l, _, err := oplog.Open(dir, oplog.Options{Snapshot: snap}, load)
	if err != nil {
		return nil, err
	}
	return oplogStore{l}, nil
}

func (s oplogStore) commit(b []persist.Record) error { return s.l.Commit(b) }
func (s oplogStore) syncs() int64                    { return s.l.Stats().Syncs }
func (s oplogStore) compact() error                  { return s.l.Compact() }
func (s oplogStore) close() error                    { return s.l.Close() }

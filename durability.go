package fanout

import (
	"errors"
	"fmt"

	"github.com/fanout/fanout/internal/durable"
	"github.com/fanout/fanout/internal/oplog"
	"github.com/fanout/fanout/sns"
)

// The data dir (issue 14) is not usable yet: SNS engines are persisted, SQS
// engines are not, so Options has no exported field for it and cmd/fanout
// refuses --data-dir. This is the plumbing the exported option will use:
// the op log is opened before the engines, each namespace's SNS engine
// journals to it, the namespaces it holds are made again at start (they are
// otherwise made lazily, on a first create) and restored, and a compaction
// dumps every namespace.

// openStore opens dir and returns what it recovered.
func (s *Server) openStore(dir string) (*durable.Recovered, error) {
	got := durable.NewRecovered()
	log, rec, err := oplog.Open(dir, oplog.Options{
		Snapshot: s.snapshot,
		Logf: func(format string, args ...any) {
			s.opts.Logger.Warn(fmt.Sprintf(format, args...))
		},
	}, got.Load)
	if err != nil {
		return nil, err
	}
	s.opts.Logger.Info("data dir opened", "dir", dir, "keys", rec.Keys, "bytes", rec.Bytes)
	s.store = log
	return got, nil
}

// snapshot is the op log's persist.Snapshotter: every namespace's state.
func (s *Server) snapshot(emit func(key, value []byte) error) error {
	if s.ns == nil {
		return errors.New("fanout: compaction before the engines exist")
	}
	for _, ns := range s.ns.all() {
		if err := durable.EmitSNS(ns.sns, durable.Namespace{Account: ns.account, Region: ns.region}, emit); err != nil {
			return err
		}
	}
	return nil
}

// snsJournal is the journal of a namespace's SNS engine, nil without a
// data dir.
func (s *Server) snsJournal(account, region string) sns.Journal {
	if s.store == nil {
		return nil
	}
	return durable.SNSJournal(s.store, durable.Namespace{Account: account, Region: region})
}

// restore makes every namespace the store holds and loads its state.
func (s *Server) restore(got *durable.Recovered) error {
	for _, n := range got.SNSNamespaces() {
		if err := s.ns.get(n.Account, n.Region).sns.Restore(got.SNS(n)); err != nil {
			return fmt.Errorf("data dir: namespace %s/%s: %w", n.Account, n.Region, err)
		}
	}
	return nil
}

// closeStore makes everything enqueued durable and releases the data dir.
func (s *Server) closeStore() {
	if s.store != nil {
		if err := s.store.Close(); err != nil {
			s.opts.Logger.Error("closing the data dir", "error", err)
		}
	}
}

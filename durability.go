package fanout

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/fanout/fanout/clock"
	"github.com/fanout/fanout/delivery"
	"github.com/fanout/fanout/internal/durable"
	"github.com/fanout/fanout/internal/oplog"
	"github.com/fanout/fanout/internal/persist"
	"github.com/fanout/fanout/sns"
	"github.com/fanout/fanout/sqs"
)

// Durability is what a 2xx reply promises when Options.DataDir is set.
type Durability int

const (
	// StrictDurability: a change is on disk (fsync'd) before its reply is
	// sent; concurrent calls share one fsync (group commit).
	StrictDurability Durability = iota
	// RelaxedDurability: a change is acknowledged at once and written and
	// fsync'd with the others of its Options.SyncInterval; a crash (of
	// fanout or of the machine) may lose the acknowledged changes of that
	// last interval, whole changes only, never part of one.
	RelaxedDurability
)

// String is the mode's flag value: strict or relaxed.
func (d Durability) String() string {
	switch d {
	case StrictDurability:
		return "strict"
	case RelaxedDurability:
		return "relaxed"
	}
	return fmt.Sprintf("Durability(%d)", int(d))
}

// ParseDurability reads strict or relaxed.
func ParseDurability(s string) (Durability, error) {
	switch s {
	case "strict":
		return StrictDurability, nil
	case "relaxed":
		return RelaxedDurability, nil
	}
	return 0, fmt.Errorf("durability %q: use strict or relaxed", s)
}

// The data dir (issue 14): the op log is opened before the engines, each
// namespace's SNS and SQS engines journal to it, the namespaces it holds are
// made again at start (they are otherwise made lazily, on a first create)
// and restored, and a compaction dumps every namespace.

// storeOptions are the op log's options for s's Durability.
func (s *Server) storeOptions() (oplog.Options, error) {
	o := oplog.Options{
		Snapshot:     s.snapshot,
		LoaderCopies: true, // durable.Recovered copies what it keeps
		Logf: func(format string, args ...any) {
			s.opts.Logger.Warn(fmt.Sprintf(format, args...))
		},
		OpenSegment: s.opts.openSegment,
	}
	switch s.opts.Durability {
	case StrictDurability:
	case RelaxedDurability:
		o.Mode, o.Interval = oplog.Relaxed, s.opts.SyncInterval
	default:
		return o, fmt.Errorf("data dir: unknown %v: use StrictDurability or RelaxedDurability", s.opts.Durability)
	}
	if s.opts.SyncInterval < 0 {
		return o, fmt.Errorf("data dir: sync interval %v: use a positive duration", s.opts.SyncInterval)
	}
	testCompaction(&o)
	return o, nil
}

// testCompaction lets the crash test (internal/crashtest) compact the log
// far more often than the 8 MiB floor allows, so that its kills land in the
// middle of snapshots: FANOUT_TEST_COMPACT_MIN (bytes) and
// FANOUT_TEST_COMPACT_RATIO. They are test hooks, not settings: unset (as
// everywhere but that test) they change nothing.
func testCompaction(o *oplog.Options) {
	if n, err := strconv.ParseInt(os.Getenv("FANOUT_TEST_COMPACT_MIN"), 10, 64); err == nil && n > 0 {
		o.CompactMin = n
	}
	if r, err := strconv.ParseFloat(os.Getenv("FANOUT_TEST_COMPACT_RATIO"), 64); err == nil && r > 0 {
		o.CompactRatio, o.CompactGrowth = r, r // whether the log mostly grows or not
	}
}

// openStore opens dir and returns what it recovered.
func (s *Server) openStore(dir string) (*durable.Recovered, error) {
	began := time.Now()
	got := durable.NewRecovered()
	o, err := s.storeOptions()
	if err != nil {
		got.Discard()
		return nil, err
	}
	log, rec, err := oplog.Open(dir, o, got.Load)
	var version *oplog.VersionError
	switch {
	case err == nil:
	case errors.Is(err, oplog.ErrLocked):
		return nil, err // it names the dir and its holder
	case errors.As(err, &version):
		return nil, fmt.Errorf("data dir %s: %w", dir, version)
	case errors.Is(err, syscall.EROFS), errors.Is(err, os.ErrPermission):
		// Serving reads from it while every write fails would look like
		// a working fanout that forgets: refuse, and say what to do.
		return nil, fmt.Errorf("data dir %s cannot be written, and fanout writes its log there from the start: make it writable, or start from a writable copy (%w)", dir, err)
	default:
		return nil, fmt.Errorf("data dir %s: %w", dir, err)
	}
	s.opened = opened{rec: rec, began: began}
	s.store = log
	s.restoreClock(got.ClockOffset())
	return got, nil
}

// snapshot is the op log's persist.Snapshotter: every namespace's state.
func (s *Server) snapshot(emit func(key, value []byte) error) error {
	if s.ns == nil {
		return errors.New("fanout: compaction before the engines exist")
	}
	for _, ns := range s.ns.all() {
		n := durable.Namespace{Account: ns.account, Region: ns.region}
		if err := durable.EmitSNS(ns.sns, n, emit); err != nil {
			return err
		}
		if err := durable.EmitSQS(ns.sqs, n, emit); err != nil {
			return err
		}
	}
	if err := durable.EmitDeliveries(s.deliveries, emit); err != nil {
		return err
	}
	if adj, ok := s.opts.Clock.(*clock.Adjustable); ok {
		return durable.EmitClock(adj.Offset(), emit)
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

// sqsJournal is the journal of a namespace's SQS engine, nil without a
// data dir.
func (s *Server) sqsJournal(account, region string) sqs.Journal {
	if s.store == nil {
		return nil
	}
	return durable.SQSJournal(s.store, durable.Namespace{Account: account, Region: region})
}

// restore makes every namespace the store holds and loads its state.
func (s *Server) restore(got *durable.Recovered) error {
	defer got.Discard() // what a failure leaves unrestored
	for _, n := range got.SQSNamespaces() {
		if err := got.SQS(n).Into(s.ns.get(n.Account, n.Region).sqs); err != nil {
			return fmt.Errorf("data dir: namespace %s/%s: %w", n.Account, n.Region, err)
		}
	}
	for _, n := range got.SNSNamespaces() {
		if err := s.ns.get(n.Account, n.Region).sns.Restore(got.SNS(n)); err != nil {
			return fmt.Errorf("data dir: namespace %s/%s: %w", n.Account, n.Region, err)
		}
	}
	// Last: a delivery's subscription and dead-letter queue are back.
	jobs, err := got.Deliveries()
	if err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	s.deliveries.Restore(jobs, s.bindSubscriber)
	return nil
}

// opened is what opening the data dir found, for the start-up line.
type opened struct {
	rec   oplog.Recovery
	began time.Time
}

// logRestored says, once the engines are restored, where the data lives,
// how much it holds and how long recovery took.
func (s *Server) logRestored() {
	var topics, subs, queues, messages int
	all := s.ns.all()
	for _, ns := range all {
		for _, t := range ns.sns.Summaries() {
			topics++
			subs += len(t.Subscriptions)
		}
		for _, name := range ns.sqs.ListQueues("") {
			q, err := ns.sqs.Queue(name)
			if err != nil {
				continue
			}
			queues++
			attrs, _ := q.Attributes([]string{sqs.AttrApproximateNumberOfMessages, sqs.AttrApproximateNotVisible, sqs.AttrApproximateDelayed})
			for _, a := range attrs {
				n, _ := strconv.Atoi(a.Value)
				messages += n
			}
		}
	}
	r := s.opened.rec
	s.opts.Logger.Info("data dir opened", "dir", s.store.Dir(), "durability", s.opts.Durability.String(),
		"keys", r.Keys, "bytes", r.Bytes, "namespaces", len(all), "topics", topics, "subscriptions", subs,
		"queues", queues, "messages", messages, "took", time.Since(s.opened.began).Round(time.Millisecond))
}

// deliveryJournal is the dispatcher's journal, nil without a data dir.
func (s *Server) deliveryJournal() delivery.Journal {
	if s.store == nil {
		return nil
	}
	return durable.DeliveryJournal(s.store)
}

// bindSubscriber finds the live subscription of a restored delivery.
func (s *Server) bindSubscriber(sub *delivery.Subscriber) bool {
	region, account, _, ok := splitArn(sub.Arn, "sns")
	if !ok {
		return false
	}
	ns := s.ns.lookup(account, region)
	return ns != nil && ns.sns.BindSubscriber(sub)
}

// The clock: an Adjustable clock's offset is stored each time
// /_fanout/clock moves it, before the call answers and before the clock
// moves, and it is restored when the data dir opens, before any engine
// exists, so that every timer restored after it (retries, visibility
// timeouts, delays) fires when it was due on the clock. A Manual clock (tests,
// embedding) is its owner's to set: nothing of it is stored.

// restoreClock moves an Adjustable clock to the offset the data dir holds.
func (s *Server) restoreClock(offset time.Duration) {
	if adj, ok := s.opts.Clock.(*clock.Adjustable); ok && offset > adj.Offset() {
		adj.Advance(offset - adj.Offset())
		s.opts.Logger.Info("clock offset restored", "offset", adj.Offset().String())
	}
}

// clockAdvancer is what moves the clock for /_fanout/clock with a data dir
// and an Adjustable clock: the new offset is durable first. Nil otherwise
// (the admin moves the clock itself).
func (s *Server) clockAdvancer() func(time.Duration) error {
	adj, ok := s.opts.Clock.(*clock.Adjustable)
	if s.store == nil || !ok {
		return nil
	}
	return func(d time.Duration) error {
		s.clockMu.Lock() // offsets are stored in the order they are reached
		defer s.clockMu.Unlock()
		recs, err := durable.ClockOffset(adj.Offset() + d)
		if err == nil {
			err = s.store.Commit(recs)
		}
		if err != nil {
			return err
		}
		adj.Advance(d)
		return nil
	}
}

// compactStore rewrites the data dir as the current state, at once, after
// what made most of it obsolete (why).
func (s *Server) compactStore(why string) {
	if s.store == nil {
		return
	}
	if err := s.store.Compact(); err != nil {
		s.opts.Logger.Warn("data dir: compacting after "+why+" failed; the next compaction frees the space", "dir", s.store.Dir(), "error", err)
	}
}

// closeStore makes everything enqueued durable and releases the data dir.
func (s *Server) closeStore() {
	if s.store != nil {
		if err := s.store.Close(); err != nil && !errors.Is(err, persist.ErrClosed) { // Close may run twice
			s.opts.Logger.Error("closing the data dir", "error", err)
		}
	}
}

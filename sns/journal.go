package sns

import (
	"maps"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/fanout/fanout/delivery"
)

// Durability: an engine with a Journal (Options.Journal) reports every
// change to its durable state as a Change, in the critical section that
// applies it in memory (under the lock that guards the object), and waits
// for the Waiter it gets back after releasing that lock, before the call
// answers. A Waiter that fails makes the call answer InternalError (500),
// and the change is undone in memory when nothing changed the object since
// (otherwise its current state is recorded again), so that memory never
// claims what the store may not hold. Without a Journal nothing of this
// runs: each mutation costs one nil check.
//
// The engine knows nothing of how a Change is stored: internal/durable
// encodes Changes into a store's records and decodes them back into a State
// for Restore.

// Journal receives an engine's state changes.
type Journal interface {
	// Record is called under the lock of the objects the change touches,
	// in the order the changes are applied; it must not block on the disk.
	Record(Change) Waiter
}

// Waiter is a recorded change on its way to durable storage.
type Waiter interface {
	// Wait returns nil once the change is durable, or why it cannot be.
	Wait() error
}

// Change is one atomic change of durable state: applied all or nothing.
// Deletions apply before the puts of the same Change.
type Change struct {
	Reset         bool     // every topic of the engine is gone (Engine.Reset)
	DeletedTopics []string // topic names, with their subscriptions, dedup windows and archives
	Topics        []TopicState
	// Unsubscribed subscriptions: Topic and Arn are set.
	Unsubscribed  []SubscriptionState
	Subscriptions []SubscriptionState
	Sequences     []TopicSequence
	Dedup         []DedupState
	// ForgottenDedup are dedup entries no longer remembered: Topic and Key are set.
	ForgottenDedup []DedupState
	Archived       []ArchivedState
	// Unarchived are archived messages dropped: Topic and SequenceNumber are set.
	Unarchived []ArchivedState
}

// TopicState is a topic's durable state.
type TopicState struct {
	Name string
	Fifo bool
	// Attributes are the attributes set, as SetTopicAttributes takes them
	// (Policy only once set, without the computed ones).
	Attributes           map[string]string
	BeginningArchiveTime time.Time `json:",omitzero"`
	Tags                 map[string]string
	SubscriptionsDeleted int
}

// SubscriptionState is a subscription's durable state.
type SubscriptionState struct {
	Topic    string // the topic's name
	Arn      string
	Protocol string
	Endpoint string
	Seq      uint64 // creation order among the engine's subscriptions
	Token    string // confirmation token, "" for subscriptions confirmed at once
	Pending  bool
	// ConfirmationWasAuthenticated and AuthenticateOnUnsubscribe.
	Authenticated, AuthenticateOnUnsubscribe bool
	// Attributes are the attributes set, as SetSubscriptionAttributes takes them.
	Attributes   map[string]string
	ReplayStatus string
}

// TopicSequence is the last SequenceNumber a FIFO topic handed out.
type TopicSequence struct {
	Topic    string
	Sequence uint64
}

// DedupState is one deduplication id a FIFO topic remembers.
type DedupState struct {
	Topic          string
	Key            string // the id, within its group under FifoThroughputScope MessageGroup
	MessageID      string
	SequenceNumber string
	At             time.Time
}

// ArchivedState is one message in a FIFO topic's archive.
type ArchivedState struct {
	Topic            string
	At               time.Time
	ID               string
	Subject          string
	Timestamp        time.Time
	Body             string
	PerProtocol      map[string]string
	Attributes       []delivery.Attribute
	GroupID          string
	DedupID          string
	SequenceNumber   string
	SignatureVersion string
	DisplayName      string
}

// State is everything an engine keeps durably, for Restore.
type State struct {
	Topics        []TopicState
	Subscriptions []SubscriptionState
	Sequences     []TopicSequence
	Dedup         []DedupState
	Archived      []ArchivedState
}

// record hands c to the journal; callers hold the locks of what c touches.
func (e *Engine) record(c Change) Waiter {
	if e.opts.Journal == nil {
		return nil
	}
	return e.opts.Journal.Record(c)
}

// durable waits for w; a failure is AWS's InternalError.
func durable(w Waiter) error {
	if w == nil {
		return nil
	}
	if err := w.Wait(); err != nil {
		return storeFailed()
	}
	return nil
}

func storeFailed() error { return ErrInternal.New("Internal error") }

// state is t's durable state. Callers hold t.mu.
func (t *Topic) state() TopicState {
	c := &t.cfg
	a := map[string]string{}
	put := func(n, v string) {
		if v != "" {
			a[n] = v
		}
	}
	put(AttrDisplayName, c.displayName)
	put(AttrPolicy, c.policy)
	if c.deliveryPolicy != nil {
		a[AttrDeliveryPolicy] = c.deliveryPolicy.JSON()
	}
	put(AttrKmsMasterKeyID, c.kmsKeyID)
	put(AttrSignatureVersion, c.signatureVersion)
	put(AttrTracingConfig, c.tracing)
	if t.fifo && c.contentDedup {
		a[AttrContentBasedDeduplication] = "true"
	}
	put(AttrFifoThroughputScope, c.throughputScope)
	if c.archive != nil {
		a[AttrArchivePolicy] = c.archive.json()
	}
	if c.maxSize != 0 {
		a[AttrMaximumMessageSize] = strconv.Itoa(c.maxSize)
	}
	maps.Copy(a, c.feedback)
	return TopicState{Name: t.name, Fifo: t.fifo, Attributes: a, BeginningArchiveTime: c.archiveSince,
		Tags: maps.Clone(t.tags), SubscriptionsDeleted: t.deleted}
}

// state is s's durable state. Callers hold the topic's mu.
func (s *Subscription) state() SubscriptionState {
	c := &s.cfg
	a := map[string]string{}
	put := func(n, v string) {
		if v != "" {
			a[n] = v
		}
	}
	if c.raw {
		a[AttrRawMessageDelivery] = "true"
	}
	put(AttrFilterPolicyScope, string(c.scope))
	put(AttrFilterPolicy, c.filterText)
	put(AttrRedrivePolicy, c.redrive)
	if c.deliveryPolicy != nil {
		a[AttrDeliveryPolicy] = c.deliveryPolicy.JSON()
	}
	put(AttrSubscriptionRoleArn, c.roleArn)
	put(AttrReplayPolicy, c.replayText)
	return SubscriptionState{Topic: s.topic.name, Arn: s.arn, Protocol: s.protocol, Endpoint: s.endpoint, Seq: s.seq,
		Token: s.token, Pending: s.pending, Authenticated: s.authenticated, AuthenticateOnUnsubscribe: s.authUnsub,
		Attributes: a, ReplayStatus: c.replayStatus}
}

func archivedState(topic string, a archived) ArchivedState {
	m := a.msg
	return ArchivedState{Topic: topic, At: a.at, ID: m.ID, Subject: m.Subject, Timestamp: m.Timestamp, Body: m.Body,
		PerProtocol: m.PerProtocol, Attributes: m.Attributes, GroupID: m.GroupID, DedupID: m.DedupID,
		SequenceNumber: m.SequenceNumber, SignatureVersion: m.SignatureVersion, DisplayName: m.DisplayName}
}

// dump is everything t keeps durably, as one Change. Callers hold t.mu.
func (t *Topic) dump() Change {
	c := Change{Topics: []TopicState{t.state()}}
	for _, s := range t.subs {
		c.Subscriptions = append(c.Subscriptions, s.state())
	}
	if t.fifo {
		c.Sequences = []TopicSequence{{t.name, t.sequence}}
		for _, k := range t.dedup.log {
			if d, ok := t.dedup.seen[k.key]; ok && d.at.Equal(k.at) && !d.unrecorded {
				c.Dedup = append(c.Dedup, DedupState{t.name, k.key, d.messageID, d.sequence, d.at})
			}
		}
		for _, a := range t.archive {
			if !a.unrecorded {
				c.Archived = append(c.Archived, archivedState(t.name, a))
			}
		}
	}
	return c
}

// Dump hands every topic's durable state to emit, one Change per topic: a
// store's compaction (persist.Snapshotter) writes them as its new base.
// Each topic is read under its lock, and emit is called after releasing it.
func (e *Engine) Dump(emit func(Change) error) error {
	e.mu.RLock()
	topics := make([]*Topic, 0, len(e.topics))
	for _, t := range e.topics {
		topics = append(topics, t)
	}
	e.mu.RUnlock()
	sort.Slice(topics, func(i, j int) bool { return topics[i].name < topics[j].name })
	for _, t := range topics {
		t.mu.Lock()
		if t.gone {
			t.mu.Unlock()
			continue
		}
		c := t.dump()
		t.mu.Unlock()
		if err := emit(c); err != nil {
			return err
		}
	}
	return nil
}

// restoreHorizon stands for "now" when a stored ReplayPolicy is applied
// again: it was valid when set, so its StartingPoint is not in the future.
var restoreHorizon = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// Restore loads a State recovered from a store into an engine that has no
// topics yet. Dedup entries and archived messages that expired meanwhile
// (on the engine's clock) are dropped; so are subscriptions, dedup entries
// and archived messages of a topic the State does not hold.
func (e *Engine) Restore(st State) error {
	now := e.clock.Now()
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, ts := range st.Topics {
		var cfg topicConfig
		if err := applyAll(&cfg, ts.Attributes, ts.Fifo, ts.BeginningArchiveTime); err != nil {
			return ErrInternal.New("restoring topic %s: %s", ts.Name, err.Message)
		}
		t := newTopic(e, ts.Name, ts.Fifo, cfg, maps.Clone(ts.Tags))
		t.deleted = ts.SubscriptionsDeleted
		e.topics[t.name] = t
	}
	subs := slices.Clone(st.Subscriptions)
	sort.Slice(subs, func(i, j int) bool { return subs[i].Seq < subs[j].Seq })
	for _, ss := range subs {
		t := e.topics[ss.Topic]
		if t == nil {
			continue
		}
		x := subContext{protocol: ss.Protocol, endpoint: ss.Endpoint, fifoTopic: t.fifo, archiving: true, now: restoreHorizon}
		var cfg subConfig
		for _, n := range subAttrOrder {
			if v, ok := ss.Attributes[n]; ok {
				if aerr := cfg.set(n, v, x); aerr != nil {
					return ErrInternal.New("restoring subscription %s: %s", ss.Arn, aerr.reason)
				}
			}
		}
		cfg.replayStatus = ss.ReplayStatus
		s := &Subscription{arn: ss.Arn, topic: t, protocol: ss.Protocol, endpoint: ss.Endpoint, seq: ss.Seq, token: ss.Token,
			pending: ss.Pending, authenticated: ss.Authenticated, authUnsub: ss.AuthenticateOnUnsubscribe, cfg: cfg}
		s.isGone = s.gone.Load
		t.subs = append(t.subs, s)
		if cfg.filter != nil {
			t.filtered++
		}
		e.subs[s.arn] = s
		if s.token != "" {
			e.tokens[s.token] = s
		}
		e.seq = max(e.seq, s.seq)
	}
	for _, q := range st.Sequences {
		if t := e.topics[q.Topic]; t != nil {
			t.sequence = max(t.sequence, q.Sequence)
		}
	}
	dedup := slices.Clone(st.Dedup)
	sort.SliceStable(dedup, func(i, j int) bool { return dedup[i].At.Before(dedup[j].At) })
	for _, d := range dedup {
		t := e.topics[d.Topic]
		if t == nil || !t.fifo || !now.Before(d.At.Add(DedupWindow)) {
			continue
		}
		t.dedup.remember(d.Key, dedupEntry{messageID: d.MessageID, sequence: d.SequenceNumber, at: d.At})
		t.sequence = max(t.sequence, sequenceOf(d.SequenceNumber))
	}
	archive := slices.Clone(st.Archived)
	sort.SliceStable(archive, func(i, j int) bool { return archive[i].SequenceNumber < archive[j].SequenceNumber })
	for _, a := range archive {
		t := e.topics[a.Topic]
		if t == nil || t.cfg.archive == nil {
			continue
		}
		m := &delivery.Message{ID: a.ID, TopicArn: t.arn, Subject: a.Subject, Timestamp: a.Timestamp, Body: a.Body,
			PerProtocol: a.PerProtocol, Attributes: a.Attributes, Fifo: true, GroupID: a.GroupID, DedupID: a.DedupID,
			SequenceNumber: a.SequenceNumber, SignatureVersion: a.SignatureVersion, DisplayName: a.DisplayName}
		t.archive = append(t.archive, archived{msg: m, at: a.At})
		t.sequence = max(t.sequence, sequenceOf(a.SequenceNumber))
	}
	for _, t := range e.topics {
		t.pruneArchive(now)
	}
	return nil
}

// BindSubscriber gives a delivery restored from a store what only the live
// subscription has: the Gone check that stops its retries once the
// subscription is deleted, and its counts. It reports false when the
// engine has no subscription of that ARN.
func (e *Engine) BindSubscriber(sub *delivery.Subscriber) bool {
	e.mu.RLock()
	s := e.subs[sub.Arn]
	e.mu.RUnlock()
	if s == nil {
		return false
	}
	sub.Gone, sub.Tally = s.isGone, &s.tally
	return true
}

// sequenceOf is the counter behind a SequenceNumber nextSequence made.
func sequenceOf(s string) uint64 {
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n < sequenceBase {
		return 0
	}
	return n - sequenceBase
}

// update runs change under t.mu and, with a journal, records t's new state
// in the same critical section, waits for it after unlocking and undoes the
// change when it cannot be stored (unless another change came since, whose
// state then is recorded again).
func (t *Topic) update(change func() error) error {
	e := t.engine
	t.mu.Lock()
	if e.opts.Journal == nil || t.gone { // a deleted topic's changes are not recorded
		defer t.mu.Unlock()
		return change()
	}
	cfg, tags, archive := t.cfg.clone(), maps.Clone(t.tags), slices.Clone(t.archive)
	if err := change(); err != nil {
		t.mu.Unlock()
		return err
	}
	t.rev++
	rev := t.rev
	w := e.record(Change{Topics: []TopicState{t.state()}})
	t.mu.Unlock()
	if err := durable(w); err != nil {
		t.mu.Lock()
		if t.rev == rev && !t.gone {
			t.cfg, t.tags, t.archive = cfg, tags, archive
		}
		t.resync()
		t.mu.Unlock()
		return err
	}
	return nil
}

// resync records t's current state again after a change that could not be
// stored, so that the store holds what memory does whichever way the failed
// write went. It does not wait: a store that keeps failing fails the next
// call too. Callers hold t.mu.
func (t *Topic) resync() {
	t.rev++
	if t.gone {
		return
	}
	t.engine.record(Change{Topics: []TopicState{t.state()}})
}

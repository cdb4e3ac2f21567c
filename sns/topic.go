package sns

import (
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fanout/fanout/awserr"
)

// Topic is one SNS topic. Its state is guarded by mu; a FIFO topic's
// publishing is serialised by publish (see the package's lock order).
type Topic struct {
	engine *Engine
	name   string
	arn    string
	fifo   bool

	publish sync.Mutex // FIFO topics: held from sequencing to the last delivery

	mu       sync.Mutex
	cfg      topicConfig
	tags     map[string]string
	subs     []*Subscription // in creation order
	deleted  int             // SubscriptionsDeleted
	filtered int             // subscriptions with a filter policy
	dedup    dedupWindow     // FIFO only
	sequence uint64          // FIFO only: last SequenceNumber handed out
	archive  []archived      // FIFO topics with an ArchivePolicy
	gone     bool
	rev      uint64 // counts journaled changes, so an undo can tell none came since
	// published counts messages published, for the dashboard.
	published atomic.Int64
}

// newTopic makes a topic in few objects, as the collector marks each one of
// each of many topics in every cycle: its name is the end of its ARN (a
// copy, where name is a slice of the request's form, which it would pin),
// and its tags map is made by the first tag.
func newTopic(e *Engine, name string, fifo bool, cfg topicConfig, tags map[string]string) *Topic {
	arn := e.TopicArn(name)
	if len(tags) == 0 {
		tags = nil
	}
	return &Topic{engine: e, name: arn[len(arn)-len(name):], arn: arn, fifo: fifo, cfg: cfg, tags: tags}
}

// Arn returns the topic's ARN.
func (t *Topic) Arn() string { return t.arn }

// Fifo reports whether the topic is a FIFO topic.
func (t *Topic) Fifo() bool { return t.fifo }

var topicNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,256}$`)

// Tag is one resource tag.
type Tag struct{ Key, Value string }

// CreateTopic creates a topic, or returns the existing one when the given
// attributes and tags equal its own.
// https://docs.aws.amazon.com/sns/latest/api/API_CreateTopic.html
func (e *Engine) CreateTopic(name string, attrs map[string]string, tags []Tag) (*Topic, error) {
	if name == "" {
		return nil, Missing("name")
	}
	fifo := false
	if v, ok := attrs[AttrFifoTopic]; ok {
		b, valid := parseBool(v)
		if !valid {
			return nil, invalid("Attributes Reason: %s", badValue(AttrFifoTopic, v, "true or false").reason)
		}
		fifo = b
	}
	if fifo {
		base, ok := strings.CutSuffix(name, ".fifo")
		if !ok || len(name) > 256 || !topicNameRE.MatchString(base) {
			return nil, ErrInvalidParameter.New("Fifo Topic names must end with .fifo and must be made up of only uppercase and lowercase ASCII letters, numbers, underscores, and hyphens, and must be between 1 and 256 characters long.")
		}
	} else if !topicNameRE.MatchString(name) {
		return nil, invalid("Topic Name")
	}
	tagMap, terr := checkTags(tags)
	if terr != nil {
		return nil, terr
	}
	now := e.clock.Now()
	cfg := topicConfig{}
	if err := applyAll(&cfg, attrs, fifo, now); err != nil {
		return nil, err
	}

	e.mu.Lock()
	if t := e.topics[name]; t != nil {
		e.mu.Unlock()
		return t, t.sameAs(attrs, tagMap, now)
	}
	t := newTopic(e, name, fifo, cfg, tagMap)
	e.topics[t.name] = t
	w := e.record(Change{Topics: []TopicState{t.state()}})
	e.mu.Unlock()
	if err := durable(w); err != nil {
		e.undoCreate(t)
		return nil, err
	}
	return t, nil
}

// undoCreate takes out a topic whose creation could not be stored, unless
// it changed since (then its state is recorded again).
func (e *Engine) undoCreate(t *Topic) {
	e.mu.Lock()
	defer e.mu.Unlock()
	t.mu.Lock()
	defer t.mu.Unlock()
	if e.topics[t.name] != t {
		return
	}
	if t.rev != 0 || len(t.subs) != 0 || t.deleted != 0 || t.sequence != 0 {
		t.resync()
		return
	}
	delete(e.topics, t.name)
	t.gone = true
	e.record(Change{DeletedTopics: []string{t.name}})
}

// applyAll applies CreateTopic's attributes in name order, so that a request
// always reports the same problem first.
func applyAll(cfg *topicConfig, attrs map[string]string, fifo bool, now time.Time) *awserr.Error {
	names := make([]string, 0, len(attrs))
	for n := range attrs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if n == AttrFifoTopic {
			continue
		}
		if err := cfg.set(n, attrs[n], fifo, now); err != nil {
			return invalid("Attributes Reason: %s", err.reason)
		}
	}
	return nil
}

// sameAs checks CreateTopic's attributes and tags against an existing topic.
func (t *Topic) sameAs(attrs, tags map[string]string, now time.Time) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for n, v := range attrs {
		if n == AttrFifoTopic {
			if b, _ := parseBool(v); b != t.fifo {
				return invalid("Attributes Reason: Topic already exists with different attributes")
			}
			continue
		}
		probe := t.cfg.clone()
		_ = probe.set(n, v, t.fifo, now) // valid: checked before
		cur, _ := t.cfg.render(n, t.arn, t.engine.opts.Account, t.fifo)
		next, _ := probe.render(n, t.arn, t.engine.opts.Account, t.fifo)
		if cur != next {
			return invalid("Attributes Reason: Topic already exists with different attributes")
		}
	}
	for k, v := range tags {
		if cur, ok := t.tags[k]; !ok || cur != v {
			return invalid("Tags Reason: Topic already exists with different tags")
		}
	}
	return nil
}

// DeleteTopic deletes a topic and its subscriptions. Deleting a topic that
// does not exist succeeds.
func (e *Engine) DeleteTopic(topicArn string) error {
	name, err := e.topicName(topicArn, "TopicArn", "DeleteTopic")
	if err != nil {
		return err
	}
	e.mu.Lock()
	t := e.topics[name]
	if t == nil {
		e.mu.Unlock()
		return nil
	}
	delete(e.topics, name)
	var subs []*Subscription
	var archive []archived
	if e.opts.Journal != nil {
		t.mu.Lock()
		subs, archive = slices.Clone(t.subs), t.archive
		t.mu.Unlock()
	}
	w := e.dropTopic(t)
	e.mu.Unlock()
	if err := durable(w); err != nil {
		e.undoDelete(t, subs, archive)
		return err
	}
	return nil
}

// undoDelete puts back a topic whose deletion could not be stored, with
// the subscriptions and archive it had, unless its name was taken since.
func (e *Engine) undoDelete(t *Topic, subs []*Subscription, archive []archived) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.topics[t.name] != nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.gone, t.subs, t.archive = false, subs, archive
	for _, s := range subs {
		s.removed = false
		s.gone.Store(false)
		e.subs[s.arn] = s
		if s.token != "" {
			e.tokens[s.token] = s
		}
	}
	e.topics[t.name] = t
	t.rev++
	e.record(t.dump())
}

// dropTopic ends a topic taken out of e.topics and its subscriptions, and
// records that it is gone. Callers hold e.mu.
func (e *Engine) dropTopic(t *Topic) Waiter {
	t.mu.Lock()
	defer t.mu.Unlock()
	// Recorded under t.mu with the drop, so that no change of the topic is
	// recorded after its deletion (each checks t.gone).
	w := e.record(Change{DeletedTopics: []string{t.name}})
	t.gone = true
	for _, s := range t.subs {
		s.remove()
		delete(e.subs, s.arn)
		if s.token != "" {
			delete(e.tokens, s.token)
		}
	}
	t.subs = nil
	t.archive = nil
	return w
}

// pageSize is how many items a List* call returns at most.
const pageSize = 100

// ListTopics returns a page of topic ARNs, in name order, and the token of
// the next page ("" on the last one).
func (e *Engine) ListTopics(token string) ([]string, string, error) {
	after, err := decodeToken(token)
	if err != nil {
		return nil, "", err
	}
	e.mu.RLock()
	names := make([]string, 0, len(e.topics))
	for n := range e.topics {
		if n > after {
			names = append(names, n)
		}
	}
	e.mu.RUnlock()
	sort.Strings(names)
	next := ""
	if len(names) > pageSize {
		names = names[:pageSize]
		next = encodeToken(names[pageSize-1])
	}
	arns := make([]string, len(names))
	for i, n := range names {
		arns[i] = e.TopicArn(n)
	}
	return arns, next, nil
}

// TopicAttributes returns every attribute GetTopicAttributes shows.
func (e *Engine) TopicAttributes(topicArn string) (map[string]string, error) {
	t, err := e.topicByArn(topicArn, "TopicArn", "GetTopicAttributes")
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	out := map[string]string{
		AttrTopicArn: t.arn,
		AttrOwner:    e.opts.Account,
	}
	for _, n := range settable {
		if v, ok := t.cfg.render(n, t.arn, e.opts.Account, t.fifo); ok {
			out[n] = v
		}
	}
	for n, v := range t.cfg.feedback {
		out[n] = v
	}
	if t.fifo {
		out[AttrFifoTopic] = "true"
	}
	confirmed, pending := 0, 0
	for _, s := range t.subs {
		if s.pending {
			pending++
		} else {
			confirmed++
		}
	}
	out[AttrSubscriptionsConfirmed] = strconv.Itoa(confirmed)
	out[AttrSubscriptionsPending] = strconv.Itoa(pending)
	out[AttrSubscriptionsDeleted] = strconv.Itoa(t.deleted)
	return out, nil
}

// SetTopicAttribute sets one attribute.
// https://docs.aws.amazon.com/sns/latest/api/API_SetTopicAttributes.html
func (e *Engine) SetTopicAttribute(topicArn, name, value string) error {
	t, err := e.topicByArn(topicArn, "TopicArn", "SetTopicAttributes")
	if err != nil {
		return err
	}
	if name == "" {
		return Missing("attributeName")
	}
	if name == AttrFifoTopic {
		return invalid("AttributeName")
	}
	return t.update(func() error {
		next := t.cfg.clone()
		now := e.clock.Now()
		if aerr := next.set(name, value, t.fifo, now); aerr != nil {
			return invalid("%s", aerr.reason)
		}
		t.cfg = next
		if name == AttrArchivePolicy {
			t.pruneArchive(now)
		}
		return nil
	})
}

package sns

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/fanout/fanout/awserr"
	"github.com/fanout/fanout/delivery"
	"github.com/fanout/fanout/filter"
	"github.com/fanout/fanout/internal/id"
)

type filterAttr = filter.Attribute

// PublishInput is a Publish call, or one PublishBatch entry. Pointers are
// nil for members the request did not carry.
type PublishInput struct {
	TopicArn         string
	TargetArn        string
	PhoneNumber      string
	Message          *string
	Subject          *string
	MessageStructure string
	Attributes       []MessageAttribute
	GroupID          string
	DedupID          string
}

// PublishResult is what Publish answers. SequenceNumber is set on FIFO topics.
type PublishResult struct {
	MessageID      string
	SequenceNumber string
}

// prepared is a validated message, ready to be numbered and delivered.
type prepared struct {
	msg  *delivery.Message
	size int
}

// Publish validates a message and delivers it to every confirmed
// subscription whose filter policy it passes. SQS subscriptions have it in
// their queues when Publish returns.
// https://docs.aws.amazon.com/sns/latest/api/API_Publish.html
func (e *Engine) Publish(in PublishInput) (PublishResult, error) {
	p, perr := checkMessage(in, "messageAttributes")
	if perr != nil {
		return PublishResult{}, perr
	}
	targets := 0
	for _, s := range []string{in.TopicArn, in.TargetArn, in.PhoneNumber} {
		if s != "" {
			targets++
		}
	}
	switch {
	case targets == 0:
		return PublishResult{}, invalid("TopicArn or TargetArn Reason: no value for required parameter")
	case targets > 1:
		return PublishResult{}, invalid("TopicArn Reason: Only one of TopicArn, TargetArn or PhoneNumber may be given")
	case in.PhoneNumber != "":
		if !phoneRE.MatchString(in.PhoneNumber) {
			return PublishResult{}, invalid("PhoneNumber Reason: %s is not valid to publish to", in.PhoneNumber)
		}
		// SMS is not sent anywhere; the message is accepted as AWS would.
		return PublishResult{MessageID: id.UUID()}, nil
	}
	param, arn := "TopicArn", in.TopicArn
	if in.TargetArn != "" {
		param, arn = "TargetArn", in.TargetArn
		if strings.Contains(arn, ":endpoint/") {
			return PublishResult{}, invalid("TargetArn Reason: No endpoint found for the target arn specified")
		}
	}
	t, err := e.topicByArn(arn, param, "Publish")
	if err != nil {
		return PublishResult{}, err
	}
	if err := t.checkSize(p); err != nil {
		return PublishResult{}, err
	}
	if err := t.checkIDs(p, in); err != nil {
		return PublishResult{}, err
	}
	out, err := t.publishAll([]*prepared{p})
	if err != nil {
		return PublishResult{}, err
	}
	return out[0], nil
}

// checkMessage validates what does not depend on the topic: subject, body,
// structure and attributes. field locates the attributes for AWS's
// ValidationError.
func checkMessage(in PublishInput, field string) (*prepared, *awserr.Error) {
	if in.Subject != nil {
		s := *in.Subject
		if s == "" || utf8.RuneCountInString(s) > 100 || !validSubject(s) {
			return nil, invalid("Subject")
		}
	}
	if in.Message == nil {
		return nil, Missing("message")
	}
	body := *in.Message
	if body == "" {
		return nil, invalid("Empty message")
	}
	if !validText(body) {
		return nil, invalid("Message Reason: Message contains invalid characters")
	}
	attrs, attrSize, aerr := checkAttributes(in.Attributes, field)
	if aerr != nil {
		return nil, aerr
	}
	// validText is SQS's rule for a message body too: raw deliveries of
	// this body to queues need not check it again. A MessageStructure's
	// entries are decoded JSON strings, never checked.
	m := &delivery.Message{Body: body, Attributes: attrs, BodyChecked: in.MessageStructure == ""}
	if in.Subject != nil {
		m.Subject = *in.Subject
	}
	switch in.MessageStructure {
	case "":
	case "json":
		var doc map[string]json.RawMessage
		if json.Unmarshal([]byte(body), &doc) != nil {
			return nil, invalid("Message Structure - JSON message body failed to parse")
		}
		// Keys whose values are not strings are ignored, as AWS does.
		per := map[string]string{}
		for k, raw := range doc {
			var s string
			if json.Unmarshal(raw, &s) == nil {
				per[k] = s
			}
		}
		def, ok := per["default"]
		if !ok {
			return nil, invalid("Message Structure - No default entry in JSON message body")
		}
		delete(per, "default")
		m.Body, m.PerProtocol = def, per
	default:
		return nil, invalid("MessageStructure")
	}
	return &prepared{msg: m, size: len(body) + attrSize}, nil
}

// validSubject: ASCII text without line breaks or control characters.
func validSubject(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

// checkSize applies the topic's message size limit.
func (t *Topic) checkSize(p *prepared) *awserr.Error {
	t.mu.Lock()
	limit := t.cfg.messageLimit()
	t.mu.Unlock()
	if p.size > limit {
		return invalid("Message too long")
	}
	return nil
}

// checkIDs validates MessageGroupId and MessageDeduplicationId for the
// topic's type and records them on the message.
func (t *Topic) checkIDs(p *prepared, in PublishInput) *awserr.Error {
	if in.GroupID != "" && !validID(in.GroupID) {
		return invalid("MessageGroupId Reason: MessageGroupId can only include alphanumeric and punctuation characters. 1 to 128 in length.")
	}
	if in.DedupID != "" && !validID(in.DedupID) {
		return invalid("MessageDeduplicationId Reason: MessageDeduplicationId can only include alphanumeric and punctuation characters. 1 to 128 in length.")
	}
	if !t.fifo {
		if in.DedupID != "" {
			return invalid("MessageDeduplicationId Reason: The request includes MessageDeduplicationId parameter that is not valid for this topic type")
		}
		// MessageGroupId is accepted and passed on to standard (fair) queues.
		p.msg.GroupID = in.GroupID
		return nil
	}
	t.mu.Lock()
	contentDedup := t.cfg.contentDedup
	t.mu.Unlock()
	if in.GroupID == "" {
		return invalid("The MessageGroupId parameter is required for FIFO topics")
	}
	if in.DedupID == "" && !contentDedup {
		return invalid("The topic should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly")
	}
	p.msg.GroupID, p.msg.DedupID = in.GroupID, in.DedupID
	if p.msg.DedupID == "" {
		p.msg.DedupID = contentDedupID(*in.Message)
	}
	return nil
}

// validID checks a MessageGroupId or MessageDeduplicationId: 1 to 128
// alphanumeric or punctuation characters.
func validID(s string) bool {
	if len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c > 0x7e {
			return false
		}
	}
	return true
}

// target is a subscription as one publish sees it.
type target struct {
	sub    delivery.Subscriber
	filter *filter.Policy
	counts *Subscription // its matched and filtered counters
}

// target snapshots the subscription for delivery. Callers hold the topic's mu.
func (s *Subscription) target() target {
	return target{sub: s.subscriber(), filter: s.cfg.filter, counts: s}
}

// deliver hands m to the subscription if it passes the filter policy, and
// returns what to wait for before the publish answers (nil: nothing). fan,
// when not nil, is the dispatcher's for m.
func (tg target) deliver(e *Engine, m *delivery.Message, attrs map[string]filterAttr, fan *delivery.Fan) delivery.Waiter {
	if tg.filter != nil {
		fm := filter.Message{Body: m.For(tg.sub.Protocol), Attributes: attrs}
		if !tg.filter.Match(fm) {
			tg.counts.filtered.Add(1)
			if fan != nil {
				fan.Filtered(tg.sub, tg.filter, fm)
			} else if r, ok := e.deliver.(FilterRecorder); ok {
				r.Filtered(m, tg.sub, tg.filter, fm)
			}
			return nil
		}
	}
	tg.counts.matched.Add(1)
	// Failures are the dispatcher's to log and count; the publisher has
	// its MessageId either way, as on AWS.
	if fan != nil {
		w, _ := fan.Deliver(tg.sub)
		return w
	}
	if e.journaled != nil {
		w, _ := e.journaled.DeliverJournaled(m, tg.sub)
		return w
	}
	_ = e.deliver.Deliver(m, tg.sub)
	return nil
}

// publishAll stamps, numbers and delivers validated messages in order. A
// FIFO topic holds its publish lock throughout, so that its subscribers'
// queues receive messages in SequenceNumber order; a duplicate within the
// deduplication window gets the first message's id and is not delivered.
func (t *Topic) publishAll(ps []*prepared) ([]PublishResult, error) {
	if t.fifo {
		t.publish.Lock()
		defer t.publish.Unlock()
		if t.engine.opts.Journal != nil {
			return t.publishDurable(ps)
		}
	}
	out := make([]PublishResult, len(ps))
	var waits []delivery.Waiter
	for i, p := range ps {
		r, targets, fresh := t.stamp(p, nil)
		out[i] = r
		if fresh {
			waits = t.fanOut(p.msg, targets, waits)
			targets.release()
		}
	}
	if err := deliveriesDurable(waits); err != nil {
		return nil, err
	}
	return out, nil
}

// deliveriesDurable waits for the deliveries a publish journaled.
func deliveriesDurable(waits []delivery.Waiter) error {
	for _, w := range waits {
		if err := durable(w); err != nil {
			return err
		}
	}
	return nil
}

// stamp gives a message its id, timestamp and, on a FIFO topic, its
// sequence number, remembering its deduplication id and archiving it; it
// reports false for a duplicate, which is not delivered. It returns the
// subscriptions to deliver to. With waits non-nil (a FIFO topic with a
// journal) the sequence is recorded and its Waiter appended; the
// deduplication id and the archived copy are recorded by confirm, once
// the deliveries are.
func (t *Topic) stamp(p *prepared, waits *[]Waiter) (PublishResult, *targetList, bool) {
	e := t.engine
	m := p.msg
	m.ID = id.UUID()
	m.TopicArn = t.arn
	m.Fifo = t.fifo
	now := e.clock.Now()
	m.Timestamp = now

	t.mu.Lock()
	defer t.mu.Unlock()
	m.SignatureVersion = t.cfg.sigVersion()
	m.DisplayName = t.cfg.displayName
	if t.fifo {
		key := t.dedupKey(m.GroupID, m.DedupID)
		if first, dup := t.dedup.check(key, now); dup {
			return PublishResult{MessageID: first.messageID, SequenceNumber: first.sequence}, nil, false
		}
		m.SequenceNumber = t.nextSequence()
		t.dedup.remember(key, dedupEntry{messageID: m.ID, sequence: m.SequenceNumber, at: now, unrecorded: waits != nil})
		if t.cfg.archive != nil {
			t.pruneArchive(now)
			t.archive = append(t.archive, archived{msg: m, at: now, unrecorded: waits != nil})
		}
		if waits != nil && !t.gone {
			*waits = append(*waits, e.record(Change{Sequences: []TopicSequence{{t.name, t.sequence}}}))
		}
	}
	targets := targetLists.Get().(*targetList)
	for _, s := range t.subs {
		if !s.pending {
			targets.ts = append(targets.ts, s.target())
		}
	}
	return PublishResult{MessageID: m.ID, SequenceNumber: m.SequenceNumber}, targets, true
}

// targetList is the subscriptions one publish delivers to. The lists are
// recycled: one for ten subscriptions is a kilobyte, which every publish
// would allocate.
type targetList struct{ ts []target }

var targetLists = sync.Pool{New: func() any { return &targetList{} }}

// release returns the list once its message is delivered: nothing keeps a
// target (Deliver takes the Subscriber by value).
func (l *targetList) release() {
	if cap(l.ts) > 256 {
		return
	}
	clear(l.ts)
	l.ts = l.ts[:0]
	targetLists.Put(l)
}

// fanOut delivers a stamped message to the subscriptions stamp returned,
// appending to waits what the publish waits for before it answers.
func (t *Topic) fanOut(m *delivery.Message, targets *targetList, waits []delivery.Waiter) []delivery.Waiter {
	attrs := attributeMap(m.Attributes)
	var fan *delivery.Fan
	if f, ok := t.engine.deliver.(FanDeliverer); ok {
		fl := f.Fan(m)
		fl.Targets(len(targets.ts))
		fan = &fl
	}
	for _, tg := range targets.ts {
		if w := tg.deliver(t.engine, m, attrs, fan); w != nil {
			waits = append(waits, w)
		}
	}
	if fan != nil {
		fan.Close()
	}
	t.published.Add(1)
	return waits
}

// publishDurable is publishAll on a FIFO topic with a journal: the
// messages' sequence is durable before anything is delivered (a failure
// delivers nothing, forgets the messages and answers InternalError), and
// their dedup entries and archived copies are recorded after their
// deliveries, so that a crash never keeps a deduplication id without the
// deliveries of its message: a retry of a publish whose reply the crash
// cut off would be dropped as a duplicate of a message nobody got (the
// store keeps the order of records; a queue that has the delivery has its
// deduplication id too and drops the retry's copy). Callers hold t.publish.
func (t *Topic) publishDurable(ps []*prepared) ([]PublishResult, error) {
	out := make([]PublishResult, len(ps))
	targets := make([]*targetList, len(ps))
	fresh := make([]bool, len(ps))
	waits := make([]Waiter, 0, len(ps))
	for i, p := range ps {
		out[i], targets[i], fresh[i] = t.stamp(p, &waits)
	}
	var failed error
	for _, w := range waits {
		if err := durable(w); err != nil {
			failed = err
		}
	}
	if failed != nil {
		t.forget(ps, fresh)
		return nil, failed
	}
	var delivered []delivery.Waiter
	for i, p := range ps {
		if fresh[i] {
			delivered = t.fanOut(p.msg, targets[i], delivered)
			targets[i].release()
		}
	}
	confirmed := t.confirm(ps, fresh)
	if err := deliveriesDurable(delivered); err != nil {
		t.forget(ps, fresh) // a retry publishes again; queues that have it drop the copy
		return nil, err
	}
	if err := durable(confirmed); err != nil {
		return nil, err
	}
	return out, nil
}

// confirm records the dedup entries and archived copies of the fresh
// messages of ps, after their deliveries were recorded.
func (t *Topic) confirm(ps []*prepared, fresh []bool) Waiter {
	t.mu.Lock()
	defer t.mu.Unlock()
	var c Change
	for i, p := range ps {
		if !fresh[i] {
			continue
		}
		m := p.msg
		key := t.dedupKey(m.GroupID, m.DedupID)
		if d, ok := t.dedup.seen[key]; ok && d.messageID == m.ID && d.unrecorded {
			d.unrecorded = false
			t.dedup.seen[key] = d
			c.Dedup = append(c.Dedup, DedupState{t.name, key, m.ID, m.SequenceNumber, d.at})
		}
		for j := range t.archive {
			if a := &t.archive[j]; a.msg == m && a.unrecorded {
				a.unrecorded = false
				c.Archived = append(c.Archived, archivedState(t.name, *a))
				break
			}
		}
	}
	if t.gone || (len(c.Dedup) == 0 && len(c.Archived) == 0) {
		return nil
	}
	return t.engine.record(c)
}

// forget drops the dedup entries and archived copies of messages whose
// publish could not be stored, and records that they are gone. Callers
// hold t.publish, so nothing was published after them.
func (t *Topic) forget(ps []*prepared, fresh []bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var c Change
	for i, p := range ps {
		if !fresh[i] {
			continue
		}
		m := p.msg
		key := t.dedupKey(m.GroupID, m.DedupID)
		if d, ok := t.dedup.seen[key]; ok && d.messageID == m.ID {
			delete(t.dedup.seen, key)
			c.ForgottenDedup = append(c.ForgottenDedup, DedupState{Topic: t.name, Key: key})
		}
		for j, a := range t.archive {
			if a.msg == m {
				t.archive = slices.Delete(t.archive, j, j+1)
				c.Unarchived = append(c.Unarchived, ArchivedState{Topic: t.name, SequenceNumber: m.SequenceNumber})
				break
			}
		}
	}
	if !t.gone {
		t.engine.record(c)
	}
}

// BatchEntry is one PublishBatch entry.
type BatchEntry struct {
	ID string
	PublishInput
}

// BatchFailure is an entry PublishBatch did not publish.
type BatchFailure struct {
	ID, Code, Message string
	SenderFault       bool
}

// BatchResult is an entry PublishBatch published.
type BatchResult struct {
	ID string
	PublishResult
}

const maxBatchEntries = 10

// CheckBatchSize refuses an empty batch or one of more than ten entries;
// the wire layer calls it with the count alone, before decoding any entry.
func CheckBatchSize(n int) error {
	if n == 0 {
		return ErrEmptyBatchRequest.New("The batch request doesn't contain any entries.")
	}
	if n > maxBatchEntries {
		return ErrTooManyEntries.New("The batch request contains more entries than permissible.")
	}
	return nil
}

// PublishBatch publishes up to ten messages to a topic, in order. Problems
// with the request as a whole, malformed message attributes and FIFO ids
// (which AWS rejects the whole batch for) fail the call; an entry whose
// message is empty, too long or has a bad subject is reported in the
// failures and the others are published.
// https://docs.aws.amazon.com/sns/latest/api/API_PublishBatch.html
func (e *Engine) PublishBatch(topicArn string, entries []BatchEntry) ([]BatchResult, []BatchFailure, error) {
	if err := CheckBatchSize(len(entries)); err != nil {
		return nil, nil, err
	}
	t, err := e.topicByArn(topicArn, "TopicArn", "Publish")
	if err != nil {
		return nil, nil, err
	}
	seen := map[string]bool{}
	for _, en := range entries {
		if seen[en.ID] {
			return nil, nil, ErrBatchEntryIdsNotDistinct.New("Two or more batch entries in the request have the same Id.")
		}
		seen[en.ID] = true
	}
	for _, en := range entries {
		if len(en.ID) > 80 {
			return nil, nil, ErrInvalidBatchEntryID.New("The Id of a batch entry in the batch request is too long: %s", en.ID)
		}
		if !validEntryID(en.ID) {
			return nil, nil, ErrInvalidBatchEntryID.New("The Id of a batch entry in the batch request contains an impermissible character: %s", en.ID)
		}
	}
	var (
		failed []BatchFailure
		ok     []*prepared
		okIDs  []string
		total  int
	)
	for i, en := range entries {
		p, perr := checkMessage(en.PublishInput, "publishBatchRequestEntries."+strconv.Itoa(i+1)+".member.messageAttributes")
		if perr != nil && perr.Code != ErrInvalidParameter.Code {
			return nil, nil, perr // attribute errors fail the whole batch, as on AWS
		}
		if perr == nil {
			perr = t.checkSize(p)
		}
		if perr != nil {
			failed = append(failed, BatchFailure{ID: en.ID, Code: perr.Code, Message: perr.Message, SenderFault: true})
			continue
		}
		// So do missing or invalid FIFO ids.
		if err := t.checkIDs(p, en.PublishInput); err != nil {
			return nil, nil, err
		}
		total += p.size
		ok = append(ok, p)
		okIDs = append(okIDs, en.ID)
	}
	t.mu.Lock()
	limit := t.cfg.messageLimit()
	t.mu.Unlock()
	if total > limit {
		return nil, nil, ErrBatchRequestTooLong.New("The length of all the messages put together is more than the limit.")
	}
	results, err := t.publishAll(ok)
	if err != nil {
		return nil, nil, err
	}
	out := make([]BatchResult, len(results))
	for i, r := range results {
		out[i] = BatchResult{ID: okIDs[i], PublishResult: r}
	}
	return out, failed, nil
}

// validEntryID: up to 80 alphanumerics, hyphens and underscores.
func validEntryID(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

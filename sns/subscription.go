package sns

import (
	"crypto/rand"
	"encoding/hex"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/fanout/fanout/awserr"
	"github.com/fanout/fanout/delivery"
	"github.com/fanout/fanout/internal/id"
	"github.com/fanout/fanout/retrypolicy"
)

// Subscription is one subscription of a topic. Fields below the line are
// guarded by the topic's mu.
type Subscription struct {
	arn      string
	topic    *Topic
	protocol string
	endpoint string
	seq      uint64
	token    string // confirmation token; "" for subscriptions confirmed at once
	// ----
	pending       bool
	authenticated bool // ConfirmationWasAuthenticated
	authUnsub     bool // AuthenticateOnUnsubscribe
	removed       bool // unsubscribed, or its topic deleted
	cfg           subConfig
	rev           uint64 // counts journaled changes, as Topic.rev
	// gone mirrors removed for deliveries in flight, which read it without
	// the topic's lock: their pending retries stop once it is set.
	gone atomic.Bool
	// isGone is gone.Load as a func value, made once: a method value made
	// per delivery would be an allocation per delivery.
	isGone func() bool
	tally  delivery.Tally // the dispatcher's counts for it, found without a lookup
	// matched and filtered count the topic's messages that passed the
	// filter policy and those it dropped, for the dashboard's edges.
	matched, filtered atomic.Int64
}

// remove marks the subscription removed. Callers hold the topic's mu.
func (s *Subscription) remove() {
	s.removed = true
	s.gone.Store(true)
}

// Arn returns the subscription's ARN.
func (s *Subscription) Arn() string { return s.arn }

// subscriber is the subscription as delivery needs it: the delivery policy
// in force now, from the topic's and its own. Callers hold the topic's mu.
func (s *Subscription) subscriber() delivery.Subscriber {
	sub := delivery.Subscriber{Arn: s.arn, Protocol: s.protocol, Endpoint: s.endpoint, Raw: s.cfg.raw, DeadLetterArn: s.cfg.dlq, Gone: s.isGone, Tally: &s.tally}
	if retrypolicy.IsHTTP(s.protocol) {
		p := retrypolicy.Resolve(s.protocol, s.topic.cfg.deliveryPolicy, s.cfg.deliveryPolicy)
		sub.Policy = &p
	}
	return sub
}

// confirmation is the message that asks the endpoint to confirm a pending
// subscription. Callers hold the topic's mu.
func (s *Subscription) confirmation(typ string, now time.Time) *delivery.Control {
	return &delivery.Control{
		Type: typ, ID: id.UUID(), TopicArn: s.topic.arn, SubscriptionArn: s.arn, Token: s.token,
		Timestamp: now, SignatureVersion: s.topic.cfg.sigVersion(), DisplayName: s.topic.cfg.displayName,
	}
}

// SubscribeInput is a Subscribe call.
type SubscribeInput struct {
	TopicArn              string
	Protocol              string
	Endpoint              string
	Attributes            map[string]string
	ReturnSubscriptionArn bool
	// Caller is the account that calls Subscribe, "" for the topic's. An
	// SQS queue of another account than the caller's waits for its owner
	// to confirm, as on AWS: SNS sends it a SubscriptionConfirmation.
	// https://docs.aws.amazon.com/sns/latest/dg/sns-send-message-to-sqs-cross-account.html
	Caller string
}

// PendingArn is what Subscribe answers for a subscription that waits for
// confirmation, unless ReturnSubscriptionArn is set.
const PendingArn = "pending confirmation"

var (
	phoneRE = regexp.MustCompile(`^\+?[1-9][0-9]{1,14}$`)
	tokenRE = regexp.MustCompile(`^[0-9a-f]{16,512}$`)
)

// confirmedAtOnce are the protocols AWS confirms without a round trip when
// topic and endpoint share an account.
var confirmedAtOnce = map[string]bool{"sqs": true, "lambda": true, "firehose": true, "application": true, "sms": true}

// protocols are the protocols Subscribe accepts (checkEndpoint).
var protocols = []string{"http", "https", "email", "email-json", "sms", "sqs", "lambda", "firehose", "application"}

// protocolName is protocol as a string of its own, not a slice of the
// request's form, which it would pin: one of protocols, so that many
// subscriptions are not as many more objects for the collector.
func protocolName(protocol string) string {
	for _, p := range protocols {
		if p == protocol {
			return p
		}
	}
	return strings.Clone(protocol)
}

// checkEndpoint validates an endpoint for its protocol, in AWS's words.
// https://docs.aws.amazon.com/sns/latest/api/API_Subscribe.html
func checkEndpoint(protocol, endpoint string, fifoTopic bool) *awserr.Error {
	arnOf := func(service string) bool {
		a, err := parseArn(endpoint, "Endpoint")
		return err == nil && a.service == service && a.resource != ""
	}
	switch protocol {
	case "http", "https":
		if !strings.HasPrefix(strings.ToLower(endpoint), protocol+"://") || len(endpoint) == len(protocol)+3 {
			return invalid("Endpoint must match the specified protocol")
		}
	case "email", "email-json":
		at := strings.LastIndexByte(endpoint, '@')
		if at < 1 || at == len(endpoint)-1 {
			return invalid("Email address")
		}
	case "sms":
		if !phoneRE.MatchString(endpoint) {
			return ErrInvalidParameter.New("Invalid SMS endpoint: %s", endpoint)
		}
	case "sqs":
		if !arnOf("sqs") {
			return invalid("SQS endpoint ARN")
		}
		if !fifoTopic && strings.HasSuffix(endpoint, ".fifo") {
			return invalid("Invalid parameter: Endpoint Reason: FIFO SQS Queues can not be subscribed to standard SNS topics")
		}
	case "lambda":
		if !arnOf("lambda") {
			return invalid("Lambda endpoint ARN")
		}
	case "firehose":
		if !arnOf("firehose") {
			return invalid("Firehose endpoint ARN")
		}
	case "application":
		if !arnOf("sns") || !strings.Contains(endpoint, ":endpoint/") {
			return invalid("ApplicationEndpoint ARN")
		}
	default:
		return invalid("Amazon SNS does not support this protocol string: %s", protocol)
	}
	if fifoTopic && protocol != "sqs" {
		return invalid("Protocol Reason: FIFO topics only deliver to Amazon SQS queues, not %s", protocol)
	}
	return nil
}

// Subscribe subscribes an endpoint to a topic, or returns the subscription
// the same protocol and endpoint already have.
func (e *Engine) Subscribe(in SubscribeInput) (string, error) {
	if in.Protocol == "" {
		return "", Missing("protocol")
	}
	t, err := e.topicByArn(in.TopicArn, "TopicArn", "Subscribe")
	if err != nil {
		return "", err
	}
	if err := checkEndpoint(in.Protocol, in.Endpoint, t.fifo); err != nil {
		return "", err
	}
	if check := e.opts.CheckEndpoint; check != nil {
		if err := check(in.Protocol, in.Endpoint); err != nil {
			return "", invalid("Endpoint Reason: %v", err)
		}
	}
	for n := range in.Attributes {
		if !settableSubAttr(n) {
			return "", invalid("Attributes Reason: AttributeName")
		}
	}
	if _, ok := in.Attributes[AttrReplayPolicy]; ok && t.fifo {
		// A replay must not be overtaken by new messages: hold the
		// topic's publish lock from creating the subscription to the end
		// of the replay.
		t.publish.Lock()
		defer t.publish.Unlock()
	}
	now := e.clock.Now()

	e.mu.Lock()
	t.mu.Lock()
	if t.gone {
		t.mu.Unlock()
		e.mu.Unlock()
		return "", topicNotFound()
	}
	x := subContext{protocol: in.Protocol, endpoint: in.Endpoint, fifoTopic: t.fifo, archiving: t.cfg.archive != nil, now: now}
	var cfg subConfig
	for _, n := range subAttrOrder {
		if v, ok := in.Attributes[n]; ok {
			if aerr := cfg.set(n, v, x); aerr != nil {
				t.mu.Unlock()
				e.mu.Unlock()
				return "", invalid("Attributes Reason: %s", aerr.reason)
			}
		}
	}
	for _, s := range t.subs {
		if s.protocol != in.Protocol || s.endpoint != in.Endpoint {
			continue
		}
		for n := range in.Attributes {
			cur, _ := s.cfg.render(n)
			next, _ := cfg.render(n)
			if n != AttrReplayPolicy && cur != next {
				t.mu.Unlock()
				e.mu.Unlock()
				return "", invalid("Attributes Reason: Subscription already exists with different attributes")
			}
		}
		arn := s.arn
		var resend *delivery.Control
		var to delivery.Subscriber
		if s.pending {
			// Subscribing again asks for confirmation again.
			resend, to = s.confirmation(delivery.TypeSubscriptionConfirmation, now), s.subscriber()
			if !in.ReturnSubscriptionArn {
				arn = PendingArn
			}
		}
		t.mu.Unlock()
		e.mu.Unlock()
		if resend != nil {
			e.deliver.Confirm(resend, to)
		}
		return arn, nil
	}
	if cfg.filter != nil {
		if err := t.addFilter(); err != nil {
			t.mu.Unlock()
			e.mu.Unlock()
			return "", err
		}
	}
	e.seq++
	s := &Subscription{
		// Copies: the request's form would stay pinned by slices of it.
		arn: t.arn + ":" + id.UUID(), topic: t, protocol: protocolName(in.Protocol), endpoint: strings.Clone(in.Endpoint),
		seq: e.seq, cfg: cfg,
	}
	s.isGone = s.gone.Load
	if confirmedAtOnce[in.Protocol] && !(in.Protocol == "sqs" && in.Caller != "" && arnAccount(in.Endpoint) != in.Caller) {
		s.authenticated = true
	} else {
		s.pending = true
		s.token = newToken()
		e.tokens[s.token] = s
	}
	t.subs = append(t.subs, s)
	e.subs[s.arn] = s
	replay := s.cfg.replay != nil
	pending := s.pending // read under the lock: a fast endpoint may confirm at once
	var confirm *delivery.Control
	var to delivery.Subscriber
	if pending {
		confirm, to = s.confirmation(delivery.TypeSubscriptionConfirmation, now), s.subscriber()
	}
	w := e.record(Change{Subscriptions: []SubscriptionState{s.state()}})
	t.mu.Unlock()
	e.mu.Unlock()
	if err := durable(w); err != nil {
		e.undoSubscribe(s)
		return "", err
	}

	if confirm != nil {
		e.deliver.Confirm(confirm, to)
	}
	if replay {
		t.replay(s)
		if err := e.recordSubscription(s); err != nil {
			return "", err
		}
	}
	if pending && !in.ReturnSubscriptionArn {
		return PendingArn, nil
	}
	return s.arn, nil
}

// undoSubscribe takes out a subscription whose creation could not be
// stored, unless it changed since (then its state is recorded again).
func (e *Engine) undoSubscribe(s *Subscription) {
	t := s.topic
	e.mu.Lock()
	defer e.mu.Unlock()
	t.mu.Lock()
	defer t.mu.Unlock()
	if e.subs[s.arn] != s {
		return
	}
	if s.rev != 0 {
		s.resync()
		return
	}
	e.detach(s)
	e.record(Change{Unsubscribed: []SubscriptionState{{Topic: t.name, Arn: s.arn}}})
}

// detach takes s out of its topic and the engine. Callers hold e.mu and
// the topic's mu.
func (e *Engine) detach(s *Subscription) {
	t := s.topic
	delete(e.subs, s.arn)
	if s.token != "" {
		delete(e.tokens, s.token)
	}
	s.remove()
	for i, x := range t.subs {
		if x == s {
			t.subs = append(t.subs[:i:i], t.subs[i+1:]...)
			break
		}
	}
	if s.cfg.filter != nil {
		t.filtered--
	}
}

// resync records s's current state again, as Topic.resync. Callers hold
// the topic's mu.
func (s *Subscription) resync() {
	s.rev++
	if !s.removed {
		s.topic.engine.record(Change{Subscriptions: []SubscriptionState{s.state()}})
	}
}

// maxFilterPolicies is how many subscriptions of one topic may have a filter
// policy.
// https://docs.aws.amazon.com/general/latest/gr/sns.html
const maxFilterPolicies = 200

// addFilter counts one more filtered subscription. Callers hold t.mu.
func (t *Topic) addFilter() error {
	if t.filtered >= maxFilterPolicies {
		return ErrFilterPolicyLimitExceeded.New("Filter policy limit exceeded: a topic can have at most %d subscriptions with a filter policy", maxFilterPolicies)
	}
	t.filtered++
	return nil
}

// newToken makes a confirmation token: long random hex, as AWS's are.
func newToken() string {
	b := make([]byte, 128)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// ConfirmSubscription confirms a pending subscription with its token.
// authenticated says whether the call was signed (ConfirmationWasAuthenticated).
// https://docs.aws.amazon.com/sns/latest/api/API_ConfirmSubscription.html
func (e *Engine) ConfirmSubscription(topicArn, token string, authenticateOnUnsubscribe, authenticated bool) (string, error) {
	if token == "" {
		return "", Missing("token")
	}
	if topicArn == "" {
		return "", Missing("topicArn")
	}
	a, aerr := parseArn(topicArn, "TopicArn")
	if aerr != nil || a.service != "sns" || a.region != e.opts.Region {
		return "", invalid("Topic")
	}
	if !tokenRE.MatchString(token) {
		return "", invalid("Token")
	}
	e.mu.RLock()
	s := e.tokens[token]
	e.mu.RUnlock()
	if s == nil {
		return "", ErrInvalidParameter.New("Invalid token")
	}
	t := s.topic
	if t.arn != topicArn {
		return "", invalid("Topic")
	}
	t.mu.Lock()
	if !s.pending || s.removed {
		t.mu.Unlock()
		return s.arn, nil
	}
	s.pending = false
	s.authenticated = authenticated
	s.authUnsub = authenticateOnUnsubscribe && authenticated
	s.rev++
	rev := s.rev
	w := e.record(Change{Subscriptions: []SubscriptionState{s.state()}})
	t.mu.Unlock()
	if err := durable(w); err != nil {
		t.mu.Lock()
		if s.rev == rev {
			s.pending, s.authenticated, s.authUnsub = true, false, false
		}
		s.resync()
		t.mu.Unlock()
		return "", err
	}
	return s.arn, nil
}

// subscriptionByArn resolves a SubscriptionArn parameter: malformed ARNs are
// InvalidParameter, unknown ones nil.
func (e *Engine) subscriptionByArn(s, action string) (*Subscription, error) {
	if s == "" {
		return nil, Missing("subscriptionArn")
	}
	a, err := parseArn(s, "SubscriptionArn")
	if err != nil {
		return nil, err
	}
	if !strings.Contains(a.resource, ":") {
		return nil, invalid("SubscriptionId")
	}
	if a.account != e.opts.Account && a.service == "sns" {
		return nil, e.notAuthorized(action, s)
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.subs[s], nil
}

// Unsubscribe deletes a subscription; unknown subscriptions succeed.
// https://docs.aws.amazon.com/sns/latest/api/API_Unsubscribe.html
func (e *Engine) Unsubscribe(subscriptionArn string) error {
	s, err := e.subscriptionByArn(subscriptionArn, "Unsubscribe")
	if err != nil || s == nil {
		return err
	}
	t := s.topic
	now := e.clock.Now()
	e.mu.Lock()
	t.mu.Lock()
	if e.subs[s.arn] != s {
		t.mu.Unlock()
		e.mu.Unlock()
		return nil // unsubscribed meanwhile
	}
	var bye *delivery.Control
	var to delivery.Subscriber
	if retrypolicy.IsHTTP(s.protocol) && !s.pending {
		// HTTP/S endpoints hear that they were unsubscribed.
		// https://docs.aws.amazon.com/sns/latest/dg/http-unsubscribe-confirmation-json.html
		bye, to = s.confirmation(delivery.TypeUnsubscribeConfirmation, now), s.subscriber()
		bye.Token = newToken()
	}
	e.detach(s)
	t.deleted++
	var w Waiter
	if e.opts.Journal != nil {
		t.rev++
		w = e.record(Change{Unsubscribed: []SubscriptionState{{Topic: t.name, Arn: s.arn}}, Topics: []TopicState{t.state()}})
	}
	t.mu.Unlock()
	e.mu.Unlock()
	if err := durable(w); err != nil {
		e.undoUnsubscribe(s)
		return err
	}
	if bye != nil {
		e.deliver.Confirm(bye, to)
	}
	return nil
}

// undoUnsubscribe puts back a subscription whose removal could not be
// stored, unless its topic is gone.
func (e *Engine) undoUnsubscribe(s *Subscription) {
	t := s.topic
	e.mu.Lock()
	defer e.mu.Unlock()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.gone || e.subs[s.arn] != nil {
		return
	}
	s.removed = false
	s.gone.Store(false)
	i := sort.Search(len(t.subs), func(i int) bool { return t.subs[i].seq > s.seq })
	t.subs = slices.Insert(t.subs, i, s)
	e.subs[s.arn] = s
	if s.token != "" {
		e.tokens[s.token] = s
	}
	if s.cfg.filter != nil {
		t.filtered++
	}
	t.deleted--
	t.resync()
	s.resync()
}

// SubscriptionInfo is a subscription as List* calls show it.
type SubscriptionInfo struct {
	SubscriptionArn, Owner, Protocol, Endpoint, TopicArn string
}

// ListSubscriptions returns a page of every subscription, oldest first.
func (e *Engine) ListSubscriptions(token string) ([]SubscriptionInfo, string, error) {
	return e.listSubscriptions(nil, token)
}

// ListSubscriptionsByTopic returns a page of a topic's subscriptions.
func (e *Engine) ListSubscriptionsByTopic(topicArn, token string) ([]SubscriptionInfo, string, error) {
	t, err := e.topicByArn(topicArn, "TopicArn", "ListSubscriptionsByTopic")
	if err != nil {
		return nil, "", err
	}
	return e.listSubscriptions(t, token)
}

func (e *Engine) listSubscriptions(only *Topic, token string) ([]SubscriptionInfo, string, error) {
	after, err := decodeSeq(token)
	if err != nil {
		return nil, "", err
	}
	e.mu.RLock()
	var subs []*Subscription
	for _, s := range e.subs {
		if s.seq > after && (only == nil || s.topic == only) {
			subs = append(subs, s)
		}
	}
	e.mu.RUnlock()
	sort.Slice(subs, func(i, j int) bool { return subs[i].seq < subs[j].seq })
	next := ""
	if len(subs) > pageSize {
		subs = subs[:pageSize]
		next = encodeSeq(subs[pageSize-1].seq)
	}
	out := make([]SubscriptionInfo, len(subs))
	for i, s := range subs {
		s.topic.mu.Lock()
		arn := s.arn
		if s.pending {
			arn = "PendingConfirmation"
		}
		s.topic.mu.Unlock()
		out[i] = SubscriptionInfo{SubscriptionArn: arn, Owner: e.opts.Account, Protocol: s.protocol, Endpoint: s.endpoint, TopicArn: s.topic.arn}
	}
	return out, next, nil
}

// SubscriptionAttributes returns every attribute GetSubscriptionAttributes shows.
func (e *Engine) SubscriptionAttributes(subscriptionArn string) (map[string]string, error) {
	s, err := e.subscriptionByArn(subscriptionArn, "GetSubscriptionAttributes")
	if err != nil {
		return nil, err
	}
	if s == nil {
		return nil, subscriptionNotFound()
	}
	t := s.topic
	t.mu.Lock()
	defer t.mu.Unlock()
	out := map[string]string{
		AttrSubscriptionArn:              s.arn,
		AttrTopicArn:                     t.arn,
		AttrOwner:                        e.opts.Account,
		AttrProtocol:                     s.protocol,
		AttrEndpoint:                     s.endpoint,
		AttrSubscriptionPrincipal:        "arn:aws:iam::" + e.opts.Account + ":root",
		AttrPendingConfirmation:          boolString(s.pending),
		AttrConfirmationWasAuthenticated: boolString(s.authenticated),
	}
	for _, n := range append(subAttrOrder, AttrReplayStatus) {
		if v, ok := s.cfg.render(n); ok {
			out[n] = v
		}
	}
	if retrypolicy.IsHTTP(s.protocol) {
		out[AttrEffectiveDeliveryPolicy] = retrypolicy.Resolve(s.protocol, t.cfg.deliveryPolicy, s.cfg.deliveryPolicy).EffectiveJSON()
	}
	return out, nil
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// SetSubscriptionAttribute sets one attribute; setting a ReplayPolicy
// starts a replay.
func (e *Engine) SetSubscriptionAttribute(subscriptionArn, name, value string) error {
	s, err := e.subscriptionByArn(subscriptionArn, "SetSubscriptionAttributes")
	if err != nil {
		return err
	}
	if s == nil {
		return subscriptionNotFound()
	}
	if name == "" {
		return Missing("attributeName")
	}
	if !settableSubAttr(name) {
		return invalid("AttributeName")
	}
	t := s.topic
	if name == AttrReplayPolicy && t.fifo {
		t.publish.Lock() // see Subscribe
		defer t.publish.Unlock()
	}
	t.mu.Lock()
	x := subContext{protocol: s.protocol, endpoint: s.endpoint, fifoTopic: t.fifo, archiving: t.cfg.archive != nil, now: e.clock.Now()}
	next := s.cfg
	if aerr := next.set(name, value, x); aerr != nil {
		t.mu.Unlock()
		return invalid("%s", aerr.reason)
	}
	switch had, has := s.cfg.filter != nil, next.filter != nil; {
	case !had && has:
		if err := t.addFilter(); err != nil {
			t.mu.Unlock()
			return err
		}
	case had && !has:
		t.filtered--
	}
	prev := s.cfg
	s.cfg = next
	replay := name == AttrReplayPolicy && next.replay != nil
	var w Waiter
	var rev uint64
	if e.opts.Journal != nil && !s.removed {
		s.rev++
		rev = s.rev
		w = e.record(Change{Subscriptions: []SubscriptionState{s.state()}})
	}
	t.mu.Unlock()
	if err := durable(w); err != nil {
		t.mu.Lock()
		if s.rev == rev && !s.removed {
			switch had, has := prev.filter != nil, s.cfg.filter != nil; {
			case had && !has:
				t.filtered++
			case !had && has:
				t.filtered--
			}
			s.cfg = prev
		}
		s.resync()
		t.mu.Unlock()
		return err
	}
	if replay {
		t.replay(s)
		return e.recordSubscription(s)
	}
	return nil
}

// recordSubscription records s's state after a change the engine made on
// its own (a replay's status), and waits for it.
func (e *Engine) recordSubscription(s *Subscription) error {
	if e.opts.Journal == nil {
		return nil
	}
	t := s.topic
	t.mu.Lock()
	if s.removed {
		t.mu.Unlock()
		return nil
	}
	s.rev++
	w := e.record(Change{Subscriptions: []SubscriptionState{s.state()}})
	t.mu.Unlock()
	return durable(w)
}

// PendingSubscription is a subscription waiting for confirmation, with the
// token that confirms it: what AWS would have sent to the endpoint.
type PendingSubscription struct {
	SubscriptionArn string `json:"subscriptionArn"`
	TopicArn        string `json:"topicArn"`
	Protocol        string `json:"protocol"`
	Endpoint        string `json:"endpoint"`
	Token           string `json:"token"`
}

// PendingSubscriptions lists the subscriptions waiting for confirmation,
// oldest first.
func (e *Engine) PendingSubscriptions() []PendingSubscription {
	e.mu.RLock()
	subs := make([]*Subscription, 0, len(e.tokens))
	for _, s := range e.tokens {
		subs = append(subs, s)
	}
	e.mu.RUnlock()
	sort.Slice(subs, func(i, j int) bool { return subs[i].seq < subs[j].seq })
	out := []PendingSubscription{}
	for _, s := range subs {
		s.topic.mu.Lock()
		pending := s.pending
		s.topic.mu.Unlock()
		if pending {
			out = append(out, PendingSubscription{s.arn, s.topic.arn, s.protocol, s.endpoint, s.token})
		}
	}
	return out
}

// arnAccount is the account field of an ARN, "" when there is none.
func arnAccount(s string) string {
	if parts := strings.SplitN(s, ":", 6); len(parts) == 6 {
		return parts[4]
	}
	return ""
}

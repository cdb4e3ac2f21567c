package durable_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssns "github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/smithy-go"

	"github.com/fanout/fanout/clock"
	"github.com/fanout/fanout/delivery"
	"github.com/fanout/fanout/internal/durable"
	"github.com/fanout/fanout/internal/oplog"
	"github.com/fanout/fanout/internal/persist"
	"github.com/fanout/fanout/internal/sdktest"
	"github.com/fanout/fanout/sns"
	"github.com/fanout/fanout/sns/api"
)

var ns = durable.Namespace{Account: "000000000000", Region: "us-east-1"}

// recorder is a Deliverer that keeps what it was given.
type recorder struct {
	mu  sync.Mutex
	got map[string][]*delivery.Message // by subscription ARN
}

func (r *recorder) Deliver(m *delivery.Message, s delivery.Subscriber) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.got == nil {
		r.got = map[string][]*delivery.Message{}
	}
	r.got[s.Arn] = append(r.got[s.Arn], m)
	return nil
}
func (*recorder) Confirm(*delivery.Control, delivery.Subscriber) {}

func (r *recorder) count(arn string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.got[arn])
}

// flaky is a store that refuses every batch while fail is set.
type flaky struct {
	persist.Store
	fail atomic.Bool
}

type refused struct{}

func (refused) Wait() error { return errors.New("disk full") }

func (f *flaky) Enqueue(b []persist.Record) persist.Pending {
	if f.fail.Load() {
		return refused{}
	}
	return f.Store.Enqueue(b)
}

// node is one fanout life: a store, an SNS engine restored from it, and an
// SDK client talking to it over HTTP.
type node struct {
	dir    string
	log    *oplog.Log
	store  *flaky
	engine *sns.Engine
	client *awssns.Client
	deliv  *recorder
	rec    oplog.Recovery
}

// boot opens dir (recovering what it holds) and starts an engine on it.
func boot(t *testing.T, dir string, clk clock.Clock) *node {
	t.Helper()
	n := &node{dir: dir, deliv: &recorder{}}
	got := durable.NewRecovered()
	var err error
	n.log, n.rec, err = oplog.Open(dir, oplog.Options{
		Snapshot:     func(emit func(k, v []byte) error) error { return durable.EmitSNS(n.engine, ns, emit) },
		Logf:         t.Logf,
		LoaderCopies: true, // as fanout opens it
	}, got.Load)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.log.Close() })
	n.store = &flaky{Store: n.log}
	n.engine = sns.New(sns.Options{Clock: clk, Deliverer: n.deliv, Journal: durable.SNSJournal(n.store, ns)})
	if err := n.engine.Restore(got.SNS(ns)); err != nil {
		t.Fatal(err)
	}
	h := api.New(n.engine, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		h.ServeQuery(w, r, r.Form)
	}))
	t.Cleanup(srv.Close)
	n.client = awssns.NewFromConfig(sdktest.Config(), func(o *awssns.Options) {
		o.BaseEndpoint = aws.String(srv.URL)
		o.Retryer = aws.NopRetryer{} // one attempt: a 500 is seen as it is
	})
	return n
}

// crash copies the data dir as it is on disk now (every acknowledged call
// is there; the process dies without Close) into a new dir, and cuts cut
// bytes off the newest segment of the copy, as a crash mid-write would.
func crash(t *testing.T, n *node, cut int64) string {
	t.Helper()
	to := t.TempDir()
	ents, err := os.ReadDir(n.dir)
	if err != nil {
		t.Fatal(err)
	}
	var newest string
	for _, e := range ents {
		if e.Name() == "LOCK" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(n.dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(e.Name(), ".wal") && e.Name() > newest {
			newest = e.Name()
		}
	}
	if cut > 0 {
		// Cut into the last frame: the data ends before the zeros a
		// segment is preallocated with.
		p := filepath.Join(to, newest)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		end := int64(len(bytes.TrimRight(b, "\x00")))
		if err := os.Truncate(p, end-cut); err != nil {
			t.Fatal(err)
		}
	}
	return to
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// must is the value of a call that must succeed; a failure panics, which
// fails the test with the call's stack.
func must[T any](v T, err error) T {
	if err != nil {
		panic(fmt.Sprintf("unexpected error: %v", err))
	}
	return v
}

// observed is everything a client can see of an SNS engine.
type observed struct {
	Topics map[string]topicView
}

type topicView struct {
	Attributes map[string]string
	Tags       map[string]string
	Subs       []snstypes.Subscription
	SubAttrs   map[string]map[string]string // by ARN, pending ones included
}

// observe reads n's state through the SDK; pending lists ARNs of pending
// subscriptions (ListSubscriptionsByTopic hides them).
func observe(t *testing.T, n *node, pending []string) observed {
	t.Helper()
	c := ctx(t)
	out := observed{Topics: map[string]topicView{}}
	topics := must(n.client.ListTopics(c, &awssns.ListTopicsInput{}))
	for _, tp := range topics.Topics {
		arn := aws.ToString(tp.TopicArn)
		v := topicView{Tags: map[string]string{}, SubAttrs: map[string]map[string]string{}}
		v.Attributes = must(n.client.GetTopicAttributes(c, &awssns.GetTopicAttributesInput{TopicArn: &arn})).Attributes
		for _, tag := range must(n.client.ListTagsForResource(c, &awssns.ListTagsForResourceInput{ResourceArn: &arn})).Tags {
			v.Tags[aws.ToString(tag.Key)] = aws.ToString(tag.Value)
		}
		v.Subs = must(n.client.ListSubscriptionsByTopic(c, &awssns.ListSubscriptionsByTopicInput{TopicArn: &arn})).Subscriptions
		arns := append([]string(nil), pending...)
		for _, s := range v.Subs {
			arns = append(arns, aws.ToString(s.SubscriptionArn))
		}
		for _, sa := range arns {
			if !strings.HasPrefix(sa, arn+":") {
				continue
			}
			v.SubAttrs[sa] = must(n.client.GetSubscriptionAttributes(c, &awssns.GetSubscriptionAttributesInput{SubscriptionArn: aws.String(sa)})).Attributes
		}
		out.Topics[arn] = v
	}
	return out
}

func same(t *testing.T, what string, got, want observed) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: a client sees\n%+v\nwant\n%+v", what, got, want)
	}
}

// populate creates one of each kind of durable SNS state through the SDK.
// It returns the ARNs of the pending subscriptions and the tokens of two of
// them, kept unconfirmed.
func populate(t *testing.T, n *node) (pending []string, tokens map[string]string) {
	t.Helper()
	c := ctx(t)
	cl := n.client
	std := must(cl.CreateTopic(c, &awssns.CreateTopicInput{Name: aws.String("orders"),
		Attributes: map[string]string{"DisplayName": "Orders", "SignatureVersion": "2", "TracingConfig": "Active",
			"KmsMasterKeyId": "alias/aws/sns", "HTTPSuccessFeedbackRoleArn": "arn:aws:iam::000000000000:role/fb",
			"HTTPSuccessFeedbackSampleRate": "50", "MaximumMessageSize": "4096",
			"DeliveryPolicy": `{"http":{"defaultHealthyRetryPolicy":{"minDelayTarget":2,"maxDelayTarget":30,"numRetries":5}}}`},
		Tags: []snstypes.Tag{{Key: aws.String("team"), Value: aws.String("core")}}})).TopicArn
	must(cl.TagResource(c, &awssns.TagResourceInput{ResourceArn: std, Tags: []snstypes.Tag{{Key: aws.String("env"), Value: aws.String("dev")}, {Key: aws.String("tmp"), Value: aws.String("x")}}}))
	must(cl.UntagResource(c, &awssns.UntagResourceInput{ResourceArn: std, TagKeys: []string{"tmp"}}))
	must(cl.AddPermission(c, &awssns.AddPermissionInput{TopicArn: std, Label: aws.String("p1"), AWSAccountId: []string{"111111111111"}, ActionName: []string{"Publish"}}))
	sub := func(topic *string, protocol, endpoint string, attrs map[string]string) string {
		return aws.ToString(must(cl.Subscribe(c, &awssns.SubscribeInput{TopicArn: topic, Protocol: aws.String(protocol),
			Endpoint: aws.String(endpoint), Attributes: attrs, ReturnSubscriptionArn: true})).SubscriptionArn)
	}
	q := sub(std, "sqs", "arn:aws:sqs:us-east-1:000000000000:q1", map[string]string{"RawMessageDelivery": "true",
		"FilterPolicyScope": "MessageBody", "FilterPolicy": `{"kind":["order"]}`,
		"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq"}`})
	must(cl.SetSubscriptionAttributes(c, &awssns.SetSubscriptionAttributesInput{SubscriptionArn: &q, AttributeName: aws.String("RawMessageDelivery"), AttributeValue: aws.String("false")}))
	sub(std, "firehose", "arn:aws:firehose:us-east-1:000000000000:deliverystream/s", map[string]string{"SubscriptionRoleArn": "arn:aws:iam::000000000000:role/fh"})
	h1 := sub(std, "https", "https://example.com/a", map[string]string{"DeliveryPolicy": `{"healthyRetryPolicy":{"minDelayTarget":1,"maxDelayTarget":20,"numRetries":7}}`})
	h2 := sub(std, "https", "https://example.com/b", nil)
	em := sub(std, "email", "someone@example.com", nil)
	gone := sub(std, "sqs", "arn:aws:sqs:us-east-1:000000000000:gone", nil)
	must(cl.Unsubscribe(c, &awssns.UnsubscribeInput{SubscriptionArn: &gone}))
	tokens = map[string]string{}
	for _, p := range n.engine.PendingSubscriptions() {
		tokens[p.SubscriptionArn] = p.Token
	}
	// h2 is confirmed now; h1 and the email stay pending with their tokens.
	must(cl.ConfirmSubscription(c, &awssns.ConfirmSubscriptionInput{TopicArn: std, Token: aws.String(tokens[h2]), AuthenticateOnUnsubscribe: aws.String("true")}))
	delete(tokens, h2)

	fifo := must(cl.CreateTopic(c, &awssns.CreateTopicInput{Name: aws.String("ledger.fifo"),
		Attributes: map[string]string{"FifoTopic": "true", "ContentBasedDeduplication": "true", "FifoThroughputScope": "MessageGroup"}})).TopicArn
	must(cl.SetTopicAttributes(c, &awssns.SetTopicAttributesInput{TopicArn: fifo, AttributeName: aws.String("ArchivePolicy"), AttributeValue: aws.String(`{"MessageRetentionPeriod":"3"}`)}))
	sub(fifo, "sqs", "arn:aws:sqs:us-east-1:000000000000:l.fifo", nil)

	dead := must(cl.CreateTopic(c, &awssns.CreateTopicInput{Name: aws.String("deleted")})).TopicArn
	sub(dead, "sqs", "arn:aws:sqs:us-east-1:000000000000:q1", nil)
	must(cl.DeleteTopic(c, &awssns.DeleteTopicInput{TopicArn: dead}))
	return []string{h1, em}, tokens
}

func publishFifo(t *testing.T, n *node, group, body string) *awssns.PublishOutput {
	t.Helper()
	return must(n.client.Publish(ctx(t), &awssns.PublishInput{TopicArn: aws.String(fifoArn), Message: aws.String(body), MessageGroupId: aws.String(group)}))
}

const fifoArn = "arn:aws:sns:us-east-1:000000000000:ledger.fifo"

func TestEverySNSStateSurvivesACrash(t *testing.T) {
	clk := clock.NewManual(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	a := boot(t, t.TempDir(), clk)
	pending, tokens := populate(t, a)
	first := publishFifo(t, a, "g1", "one")
	publishFifo(t, a, "g2", "two")
	before := observe(t, a, pending)

	b := boot(t, crash(t, a, 0), clk)
	same(t, "after a crash", observe(t, b, pending), before)
	if b.engine.TopicArn("deleted") != "" {
		if _, err := b.engine.TopicAttributes(b.engine.TopicArn("deleted")); err == nil {
			t.Error("a deleted topic came back")
		}
	}

	// The old tokens confirm their subscriptions.
	for arn, tok := range tokens {
		topic := arn[:strings.LastIndexByte(arn, ':')]
		got := must(b.client.ConfirmSubscription(ctx(t), &awssns.ConfirmSubscriptionInput{TopicArn: &topic, Token: aws.String(tok)}))
		if aws.ToString(got.SubscriptionArn) != arn {
			t.Errorf("ConfirmSubscription with the old token = %s, want %s", aws.ToString(got.SubscriptionArn), arn)
		}
	}
	// The dedup window still rejects a duplicate; sequence numbers go on.
	dup := publishFifo(t, b, "g1", "one")
	if aws.ToString(dup.MessageId) != aws.ToString(first.MessageId) || aws.ToString(dup.SequenceNumber) != aws.ToString(first.SequenceNumber) {
		t.Errorf("duplicate after the crash = %s/%s, want the first publish's %s/%s", aws.ToString(dup.MessageId), aws.ToString(dup.SequenceNumber), aws.ToString(first.MessageId), aws.ToString(first.SequenceNumber))
	}
	next := publishFifo(t, b, "g3", "three")
	if aws.ToString(next.SequenceNumber) <= "10000000000000000002" {
		t.Errorf("SequenceNumber after the crash = %s, want past the two published before", aws.ToString(next.SequenceNumber))
	}
	// The archive replays what was published before the crash.
	replay := aws.ToString(must(b.client.Subscribe(ctx(t), &awssns.SubscribeInput{TopicArn: aws.String(fifoArn), Protocol: aws.String("sqs"),
		Endpoint: aws.String("arn:aws:sqs:us-east-1:000000000000:r.fifo"), ReturnSubscriptionArn: true,
		Attributes: map[string]string{"ReplayPolicy": `{"PointType":"Timestamp","StartingPoint":"2026-03-01T11:00:00Z"}`}})).SubscriptionArn)
	if got := b.deliv.count(replay); got != 3 {
		t.Errorf("replay after the crash delivered %d messages, want 3 (two archived before it, one after)", got)
	}

	// The dedup window expires on the clock, also across a crash.
	clk.Advance(sns.DedupWindow)
	c := boot(t, crash(t, b, 0), clk)
	again := publishFifo(t, c, "g1", "one")
	if aws.ToString(again.MessageId) == aws.ToString(first.MessageId) {
		t.Error("a dedup id past its window still deduplicates after recovery")
	}
	st := must(c.client.GetSubscriptionAttributes(ctx(t), &awssns.GetSubscriptionAttributesInput{SubscriptionArn: &replay})).Attributes
	if st["ReplayStatus"] != "Completed" {
		t.Errorf("ReplayStatus after recovery = %q, want Completed", st["ReplayStatus"])
	}
}

func TestATornTailLosesOnlyTheLastCall(t *testing.T) {
	clk := clock.NewManual(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	a := boot(t, t.TempDir(), clk)
	pending, _ := populate(t, a)
	before := observe(t, a, pending)
	// One more call, cut in the middle of its frame.
	arn := a.engine.TopicArn("orders")
	must(a.client.TagResource(ctx(t), &awssns.TagResourceInput{ResourceArn: &arn, Tags: []snstypes.Tag{{Key: aws.String("late"), Value: aws.String("1")}}}))

	b := boot(t, crash(t, a, 5), clk)
	if b.rec.Dropped == nil {
		t.Fatal("recovery did not report the torn tail")
	}
	same(t, "after a torn tail", observe(t, b, pending), before)
}

func TestCompactionKeepsTheState(t *testing.T) {
	clk := clock.NewManual(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	a := boot(t, t.TempDir(), clk)
	pending, tokens := populate(t, a)
	first := publishFifo(t, a, "g1", "one")
	if err := a.log.Compact(); err != nil {
		t.Fatal(err)
	}
	// Changes after the snapshot are replayed on top of it.
	arn := a.engine.TopicArn("orders")
	must(a.client.SetTopicAttributes(ctx(t), &awssns.SetTopicAttributesInput{TopicArn: &arn, AttributeName: aws.String("DisplayName"), AttributeValue: aws.String("After")}))
	before := observe(t, a, pending)

	b := boot(t, crash(t, a, 0), clk)
	if b.rec.Snapshot == "" {
		t.Fatal("recovery did not use a snapshot")
	}
	same(t, "after a compaction", observe(t, b, pending), before)
	if dup := publishFifo(t, b, "g1", "one"); aws.ToString(dup.MessageId) != aws.ToString(first.MessageId) {
		t.Error("the dedup window did not survive the compaction")
	}
	for arn, tok := range tokens {
		topic := arn[:strings.LastIndexByte(arn, ':')]
		must(b.client.ConfirmSubscription(ctx(t), &awssns.ConfirmSubscriptionInput{TopicArn: &topic, Token: aws.String(tok)}))
	}
}

// internalError asserts that err is AWS's 500 InternalError.
func internalError(t *testing.T, what string, err error) {
	t.Helper()
	var ae smithy.APIError
	var re interface{ HTTPStatusCode() int }
	if !errors.As(err, &ae) || ae.ErrorCode() != "InternalError" || !errors.As(err, &re) || re.HTTPStatusCode() != 500 {
		t.Errorf("%s with a failing store: %v, want a 500 InternalError", what, err)
	}
}

func TestARefusedWriteIsA500AndIsUndone(t *testing.T) {
	clk := clock.NewManual(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	a := boot(t, t.TempDir(), clk)
	pending, tokens := populate(t, a)
	publishFifo(t, a, "g1", "one")
	before := observe(t, a, pending)
	fifoSub := ""
	for _, s := range before.Topics[fifoArn].Subs {
		fifoSub = aws.ToString(s.SubscriptionArn)
	}
	delivered := a.deliv.count(fifoSub)

	c, cl := ctx(t), a.client
	std := aws.String(a.engine.TopicArn("orders"))
	a.store.fail.Store(true)
	_, err := cl.CreateTopic(c, &awssns.CreateTopicInput{Name: aws.String("new")})
	internalError(t, "CreateTopic", err)
	_, err = cl.DeleteTopic(c, &awssns.DeleteTopicInput{TopicArn: std})
	internalError(t, "DeleteTopic", err)
	_, err = cl.SetTopicAttributes(c, &awssns.SetTopicAttributesInput{TopicArn: std, AttributeName: aws.String("DisplayName"), AttributeValue: aws.String("X")})
	internalError(t, "SetTopicAttributes", err)
	_, err = cl.TagResource(c, &awssns.TagResourceInput{ResourceArn: std, Tags: []snstypes.Tag{{Key: aws.String("k"), Value: aws.String("v")}}})
	internalError(t, "TagResource", err)
	_, err = cl.UntagResource(c, &awssns.UntagResourceInput{ResourceArn: std, TagKeys: []string{"team"}})
	internalError(t, "UntagResource", err)
	_, err = cl.AddPermission(c, &awssns.AddPermissionInput{TopicArn: std, Label: aws.String("p2"), AWSAccountId: []string{"222222222222"}, ActionName: []string{"Publish"}})
	internalError(t, "AddPermission", err)
	_, err = cl.RemovePermission(c, &awssns.RemovePermissionInput{TopicArn: std, Label: aws.String("p1")})
	internalError(t, "RemovePermission", err)
	_, err = cl.Subscribe(c, &awssns.SubscribeInput{TopicArn: std, Protocol: aws.String("sqs"), Endpoint: aws.String("arn:aws:sqs:us-east-1:000000000000:new")})
	internalError(t, "Subscribe", err)
	for _, s := range before.Topics[*std].Subs {
		if aws.ToString(s.Protocol) == "sqs" {
			arn := s.SubscriptionArn
			_, err = cl.Unsubscribe(c, &awssns.UnsubscribeInput{SubscriptionArn: arn})
			internalError(t, "Unsubscribe", err)
			_, err = cl.SetSubscriptionAttributes(c, &awssns.SetSubscriptionAttributesInput{SubscriptionArn: arn, AttributeName: aws.String("FilterPolicy"), AttributeValue: aws.String("")})
			internalError(t, "SetSubscriptionAttributes", err)
		}
	}
	for arn, tok := range tokens {
		topic := arn[:strings.LastIndexByte(arn, ':')]
		_, err = cl.ConfirmSubscription(c, &awssns.ConfirmSubscriptionInput{TopicArn: &topic, Token: aws.String(tok)})
		internalError(t, "ConfirmSubscription", err)
	}
	_, err = cl.Publish(c, &awssns.PublishInput{TopicArn: aws.String(fifoArn), Message: aws.String("two"), MessageGroupId: aws.String("g1")})
	internalError(t, "Publish (FIFO)", err)
	_, err = cl.PublishBatch(c, &awssns.PublishBatchInput{TopicArn: aws.String(fifoArn), PublishBatchRequestEntries: []snstypes.PublishBatchRequestEntry{
		{Id: aws.String("a"), Message: aws.String("three"), MessageGroupId: aws.String("g1")}}})
	internalError(t, "PublishBatch (FIFO)", err)
	// A standard topic's publish changes no durable state: it goes on.
	must(cl.Publish(c, &awssns.PublishInput{TopicArn: std, Message: aws.String(`{"kind":"order"}`)}))
	a.store.fail.Store(false)

	// Nothing refused shows, in memory or after a crash.
	same(t, "after refused writes", observe(t, a, pending), before)
	if got := a.deliv.count(fifoSub); got != delivered {
		t.Errorf("a refused FIFO publish was delivered: %d deliveries, want %d", got, delivered)
	}
	two := publishFifo(t, a, "g1", "two")
	if aws.ToString(two.SequenceNumber) == "" || a.deliv.count(fifoSub) != delivered+1 {
		t.Error("a publish refused by the store was remembered as a duplicate")
	}
	before = observe(t, a, pending)
	b := boot(t, crash(t, a, 0), clk)
	same(t, "refused writes after a crash", observe(t, b, pending), before)
}

func TestResetClearsTheNamespace(t *testing.T) {
	clk := clock.NewManual(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	a := boot(t, t.TempDir(), clk)
	populate(t, a)
	a.engine.Reset()
	must(a.client.CreateTopic(ctx(t), &awssns.CreateTopicInput{Name: aws.String("fresh")}))
	b := boot(t, crash(t, a, 0), clk)
	got := must(b.client.ListTopics(ctx(t), &awssns.ListTopicsInput{})).Topics
	var names []string
	for _, tp := range got {
		names = append(names, aws.ToString(tp.TopicArn))
	}
	sort.Strings(names)
	if !reflect.DeepEqual(names, []string{b.engine.TopicArn("fresh")}) {
		t.Errorf("topics after reset and crash = %v, want only fresh", names)
	}
}

// Calls from many goroutines while the log compacts again and again: what
// recovery yields is what memory held at the end (the Snapshotter reads each
// topic under its lock, and the batches after it are replayed on top).
func TestConcurrentChangesDuringCompactions(t *testing.T) {
	clk := clock.NewManual(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	a := boot(t, t.TempDir(), clk)
	e := a.engine
	fifo, err := e.CreateTopic("f.fifo", map[string]string{"FifoTopic": "true", "ContentBasedDeduplication": "true"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	stopCompacting := compactAgainAndAgain(t, a.log)
	var mu sync.Mutex
	ids := map[string]string{} // FIFO body -> MessageId
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 40 {
				name := "t" + string(rune('a'+w)) + "-" + string(rune('a'+i%8))
				tp, err := e.CreateTopic(name, nil, nil)
				if err != nil {
					t.Error(err)
					return
				}
				_ = e.SetTopicAttribute(tp.Arn(), "DisplayName", name+string(rune('0'+i%10)))
				arn, err := e.Subscribe(sns.SubscribeInput{TopicArn: tp.Arn(), Protocol: "sqs", Endpoint: "arn:aws:sqs:us-east-1:000000000000:q" + string(rune('a'+i%5)), ReturnSubscriptionArn: true})
				if err != nil {
					t.Error(err)
					return
				}
				if i%3 == 0 {
					_ = e.Unsubscribe(arn)
				}
				if i%7 == 6 {
					_ = e.DeleteTopic(tp.Arn())
				}
				body := name + string(rune('a'+i))
				r, err := e.Publish(sns.PublishInput{TopicArn: fifo.Arn(), Message: &body, GroupID: "g"})
				if err != nil {
					t.Error(err)
				}
				mu.Lock()
				ids[body] = r.MessageID
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	stopCompacting()
	before := observe(t, a, nil)
	b := boot(t, crash(t, a, 0), clk)
	same(t, "after concurrent changes and compactions", observe(t, b, nil), before)
	for body, id := range ids {
		r, err := b.engine.Publish(sns.PublishInput{TopicArn: fifo.Arn(), Message: &body, GroupID: "g"})
		if err != nil || r.MessageID != id {
			t.Errorf("publishing %q again after recovery: %s, %v; want the duplicate of %s", body, r.MessageID, err, id)
		}
	}
	if len(before.Topics) < 10 {
		t.Errorf("only %d topics: the test did not run", len(before.Topics))
	}
}

package api_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/fanout/fanout"
)

// drainFifo receives and deletes everything in a FIFO queue, in the order
// SQS hands it out (a group's next messages appear once its previous ones
// are deleted).
func (e *env) drainFifo(t *testing.T, q queue) []sqstypes.Message {
	t.Helper()
	var all []sqstypes.Message
	for {
		out, err := e.sqs.ReceiveMessage(ctx(t), &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(q.URL), MaxNumberOfMessages: 10,
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{"All"},
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Messages) == 0 {
			return all
		}
		for _, m := range out.Messages {
			if _, err := e.sqs.DeleteMessage(ctx(t), &sqs.DeleteMessageInput{QueueUrl: aws.String(q.URL), ReceiptHandle: m.ReceiptHandle}); err != nil {
				t.Fatal(err)
			}
		}
		all = append(all, out.Messages...)
	}
}

func TestFifoOrderPerGroupAcrossThreeQueuesUnderConcurrentPublishers(t *testing.T) {
	t.Parallel()
	e := shared(t)
	topic := e.topic(t, "t", map[string]string{"FifoTopic": "true"})
	var queues []queue
	for i := 0; i < 3; i++ {
		q := e.queue(t, "q", map[string]string{"FifoQueue": "true"})
		e.subscribe(t, topic, q, nil)
		queues = append(queues, q)
	}
	const publishers, perPublisher = 6, 25
	type published struct{ group, seq, dedup string }
	var mu sync.Mutex
	byGroup := map[string][]published{}
	var wg sync.WaitGroup
	for p := 0; p < publishers; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Publishers 0 and 1 share a group: its order is whatever
			// order their calls were sequenced in.
			group := "g" + strconv.Itoa(p)
			if p == 1 {
				group = "g0"
			}
			for i := 0; i < perPublisher; i++ {
				dedup := fmt.Sprintf("p%d-%d", p, i)
				out, err := e.sns.Publish(ctx(t), &sns.PublishInput{
					TopicArn: aws.String(topic), Message: aws.String(dedup),
					MessageGroupId: aws.String(group), MessageDeduplicationId: aws.String(dedup),
				})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				byGroup[group] = append(byGroup[group], published{group, aws.ToString(out.SequenceNumber), dedup})
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for _, list := range byGroup {
		sort.Slice(list, func(i, j int) bool { return list[i].seq < list[j].seq }) // equal lengths: string order is numeric order
	}
	for i, q := range queues {
		msgs := e.drainFifo(t, q)
		if len(msgs) != publishers*perPublisher {
			t.Fatalf("queue %d got %d messages", i, len(msgs))
		}
		got := map[string][]published{}
		for _, m := range msgs {
			env := envelopeOf(t, m)
			got[m.Attributes["MessageGroupId"]] = append(got[m.Attributes["MessageGroupId"]],
				published{m.Attributes["MessageGroupId"], env["SequenceNumber"].(string), m.Attributes["MessageDeduplicationId"]})
			if env["Message"] != m.Attributes["MessageDeduplicationId"] {
				t.Fatalf("dedup id %s carried for message %v", m.Attributes["MessageDeduplicationId"], env["Message"])
			}
		}
		for g, want := range byGroup {
			if !slices.Equal(got[g], want) {
				t.Fatalf("queue %d group %s out of order:\n got %v\nwant %v", i, g, got[g], want)
			}
		}
	}
}

func TestFifoEnvelopeAndIds(t *testing.T) {
	t.Parallel()
	e := shared(t)
	topic := e.topic(t, "t", map[string]string{"FifoTopic": "true", "ContentBasedDeduplication": "true"})
	fq := e.queue(t, "fq", map[string]string{"FifoQueue": "true"})
	sq := e.queue(t, "sq", nil) // standard queues may subscribe to FIFO topics
	e.subscribe(t, topic, fq, nil)
	e.subscribe(t, topic, sq, nil)
	out := e.publish(t, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("hello"), MessageGroupId: aws.String("orders")})
	if len(aws.ToString(out.SequenceNumber)) != 20 {
		t.Fatalf("SequenceNumber %q", aws.ToString(out.SequenceNumber))
	}
	second := e.publish(t, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("world"), MessageGroupId: aws.String("orders")})
	if aws.ToString(second.SequenceNumber) <= aws.ToString(out.SequenceNumber) {
		t.Fatalf("SequenceNumbers %s then %s", aws.ToString(out.SequenceNumber), aws.ToString(second.SequenceNumber))
	}
	fm := e.drainFifo(t, fq)
	sm := e.drain(t, sq)
	if len(fm) != 2 || len(sm) != 2 {
		t.Fatalf("FIFO queue %d, standard queue %d messages", len(fm), len(sm))
	}
	// FIFO topics are not signed; they carry the topic's SequenceNumber.
	body := aws.ToString(fm[0].Body)
	if got, want := keysInOrder(t, body), []string{"Type", "MessageId", "SequenceNumber", "TopicArn", "Message", "Timestamp", "UnsubscribeURL"}; !slices.Equal(got, want) {
		t.Fatalf("fields %v\nwant   %v", got, want)
	}
	env := envelopeOf(t, fm[0])
	if env["MessageId"] != aws.ToString(out.MessageId) || env["SequenceNumber"] != aws.ToString(out.SequenceNumber) {
		t.Fatalf("envelope %v", env)
	}
	sum := sha256.Sum256([]byte("hello"))
	if fm[0].Attributes["MessageGroupId"] != "orders" || fm[0].Attributes["MessageDeduplicationId"] != hex.EncodeToString(sum[:]) {
		t.Fatalf("FIFO queue attributes %v", fm[0].Attributes)
	}
	// The queue's own SequenceNumber is SQS's, not the topic's.
	if fm[0].Attributes["SequenceNumber"] == "" {
		t.Fatalf("no SQS SequenceNumber: %v", fm[0].Attributes)
	}
	if _, ok := sm[0].Attributes["MessageGroupId"]; ok {
		t.Fatalf("standard queue got a MessageGroupId: %v", sm[0].Attributes)
	}
	if got := bodies(t, sm, true); !slices.Equal(got, []string{"hello", "world"}) {
		t.Fatalf("standard queue bodies %v", got)
	}
}

func TestFifoTopicDeduplicatesForFiveMinutes(t *testing.T) {
	t.Parallel()
	e := start(t, fanout.Options{})
	topic := e.topic(t, "t", map[string]string{"FifoTopic": "true"})
	q := e.queue(t, "q", map[string]string{"FifoQueue": "true"})
	e.subscribe(t, topic, q, nil)
	pub := func(body, dedup string) *sns.PublishOutput {
		return e.publish(t, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String(body), MessageGroupId: aws.String("g"), MessageDeduplicationId: aws.String(dedup)})
	}
	first := pub("one", "d1")
	e.clk.Advance(4*time.Minute + 59*time.Second)
	dup := pub("one again", "d1")
	if aws.ToString(dup.MessageId) != aws.ToString(first.MessageId) || aws.ToString(dup.SequenceNumber) != aws.ToString(first.SequenceNumber) {
		t.Fatalf("duplicate answered %v %v, first was %v %v", aws.ToString(dup.MessageId), aws.ToString(dup.SequenceNumber), aws.ToString(first.MessageId), aws.ToString(first.SequenceNumber))
	}
	if got := bodies(t, e.drainFifo(t, q), true); !slices.Equal(got, []string{"one"}) {
		t.Fatalf("queue got %v", got)
	}
	e.clk.Advance(time.Second) // five minutes after the first
	again := pub("one, later", "d1")
	if aws.ToString(again.MessageId) == aws.ToString(first.MessageId) {
		t.Fatal("deduplicated after the window")
	}
	if got := bodies(t, e.drainFifo(t, q), true); !slices.Equal(got, []string{"one, later"}) {
		t.Fatalf("queue got %v", got)
	}
}

func TestFifoTopicMessageGroupScopeDeduplicatesPerGroup(t *testing.T) {
	t.Parallel()
	e := shared(t)
	topic := e.topic(t, "t", map[string]string{"FifoTopic": "true", "FifoThroughputScope": "MessageGroup"})
	q := e.queue(t, "q", nil)
	e.subscribe(t, topic, q, map[string]string{"RawMessageDelivery": "true"})
	for _, g := range []string{"a", "b", "a"} {
		e.publish(t, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String(g), MessageGroupId: aws.String(g), MessageDeduplicationId: aws.String("same")})
	}
	if got := bodies(t, e.drain(t, q), false); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("queue got %v", got)
	}
}

func TestArchiveAndReplay(t *testing.T) {
	t.Parallel()
	e := start(t, fanout.Options{})
	start := e.clk.Now()
	topic := e.topic(t, "t", map[string]string{"FifoTopic": "true", "ContentBasedDeduplication": "true",
		"ArchivePolicy": `{"MessageRetentionPeriod":"2"}`})
	attrs, err := e.sns.GetTopicAttributes(ctx(t), &sns.GetTopicAttributesInput{TopicArn: aws.String(topic)})
	if err != nil {
		t.Fatal(err)
	}
	if attrs.Attributes["ArchivePolicy"] != `{"MessageRetentionPeriod":"2"}` || attrs.Attributes["BeginningArchiveTime"] != "2025-03-01T12:00:00.000Z" {
		t.Fatalf("archive attributes %v", attrs.Attributes)
	}
	ids := map[string]string{}
	for _, body := range []string{"red-1", "blue-2", "red-3"} {
		e.clk.Advance(time.Hour)
		out := e.publish(t, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String(body), MessageGroupId: aws.String("g"),
			MessageAttributes: map[string]types.MessageAttributeValue{"color": strAttr(body[:len(body)-2])}})
		ids[body] = aws.ToString(out.MessageId)
	}
	// A new subscription gets only what is published from now on...
	q := e.queue(t, "q", map[string]string{"FifoQueue": "true"})
	sub := e.subscribe(t, topic, q, map[string]string{"FilterPolicy": `{"color":["red"]}`})
	if n := len(e.drainFifo(t, q)); n != 0 {
		t.Fatalf("new subscription got %d messages", n)
	}
	// ...until it asks for a replay: archived messages since StartingPoint,
	// through its filter policy, with their original id and timestamp.
	replay := `{"PointType":"Timestamp","StartingPoint":"` + start.Add(90*time.Minute).Format(time.RFC3339) + `"}`
	if _, err := e.sns.SetSubscriptionAttributes(ctx(t), &sns.SetSubscriptionAttributesInput{SubscriptionArn: aws.String(sub),
		AttributeName: aws.String("ReplayPolicy"), AttributeValue: aws.String(replay)}); err != nil {
		t.Fatal(err)
	}
	msgs := e.drainFifo(t, q)
	if len(msgs) != 1 {
		t.Fatalf("replay delivered %v", bodies(t, msgs, true))
	}
	env := envelopeOf(t, msgs[0])
	if env["Message"] != "red-3" || env["MessageId"] != ids["red-3"] || env["Timestamp"] != "2025-03-01T15:00:00.000Z" || env["Replayed"] != true {
		t.Fatalf("replayed envelope %v", env)
	}
	sattrs, _ := e.sns.GetSubscriptionAttributes(ctx(t), &sns.GetSubscriptionAttributesInput{SubscriptionArn: aws.String(sub)})
	if sattrs.Attributes["ReplayPolicy"] != replay || sattrs.Attributes["ReplayStatus"] != "Completed" {
		t.Fatalf("subscription attributes %v", sattrs.Attributes)
	}

	// Subscribing with a ReplayPolicy with an EndingPoint replays that window.
	q2 := e.queue(t, "q2", nil)
	window := `{"PointType":"Timestamp","StartingPoint":"` + start.Format(time.RFC3339) + `","EndingPoint":"` + start.Add(2*time.Hour).Format(time.RFC3339) + `"}`
	e.subscribe(t, topic, q2, map[string]string{"ReplayPolicy": window, "RawMessageDelivery": "true"})
	if got := bodies(t, e.drain(t, q2), false); !slices.Equal(got, []string{"red-1", "blue-2"}) {
		t.Fatalf("windowed replay %v", got)
	}

	// Messages older than the retention period are gone from the archive.
	e.clk.Advance(46*time.Hour + 30*time.Minute) // red-1 is now 48.5 hours old
	q3 := e.queue(t, "q3", nil)
	e.subscribe(t, topic, q3, map[string]string{"RawMessageDelivery": "true",
		"ReplayPolicy": `{"PointType":"Timestamp","StartingPoint":"` + start.Format(time.RFC3339) + `"}`})
	if got := bodies(t, e.drain(t, q3), false); !slices.Equal(got, []string{"blue-2", "red-3"}) {
		t.Fatalf("replay after retention %v", got)
	}

	for _, tc := range []struct{ value, msg string }{
		{`{"PointType":"Sequence","StartingPoint":"1"}`, "Invalid parameter: ReplayPolicy: PointType: Invalid value [Sequence]. Must be Timestamp."},
		{`{"PointType":"Timestamp","StartingPoint":"yesterday"}`, "Invalid parameter: ReplayPolicy: StartingPoint must be an ISO 8601 timestamp"},
		{`{"PointType":"Timestamp","StartingPoint":"2099-01-01T00:00:00Z"}`, "Invalid parameter: ReplayPolicy: StartingPoint must not be in the future"},
	} {
		_, err := e.sns.SetSubscriptionAttributes(ctx(t), &sns.SetSubscriptionAttributesInput{SubscriptionArn: aws.String(sub),
			AttributeName: aws.String("ReplayPolicy"), AttributeValue: aws.String(tc.value)})
		wantError(t, err, "InvalidParameter", 400, tc.msg)
	}
}

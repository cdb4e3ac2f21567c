package conformance

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// SNS PublishBatch and FIFO topics. Evidence: API_PublishBatch.html (1 to
// 10 entries, ids, batch errors), sns-fifo-topics.html and
// fifo-message-dedup.html (groups, deduplication, SequenceNumber),
// message-archiving-and-replay-topic-owner.html (ArchivePolicy), and AWS's
// answers recorded in localstack's test_sns.snapshot.json
// (test_message_to_fifo_sqs, and the PublishBatch and FIFO rows of the
// project's spec sns.md drawn from it).

func batchEntries(n int) []snstypes.PublishBatchRequestEntry {
	out := make([]snstypes.PublishBatchRequestEntry, n)
	for i := range out {
		out[i] = snstypes.PublishBatchRequestEntry{Id: aws.String(fmt.Sprintf("e%d", i)), Message: aws.String(fmt.Sprintf("batch message %d", i))}
	}
	return out
}

var _ = Describe("SNS PublishBatch", Label("sns-core", "sns-batch"), func() {
	It("publishes every entry and answers an id and MessageId per entry", func(ctx SpecContext) {
		topic := createTopic(ctx, "batch", nil)
		q, _ := subscribedQueue(ctx, topic, "batch", nil, map[string]string{"RawMessageDelivery": "true"})
		deliverable(ctx, topic, q, false, nil)
		out, err := snsc(ctx).PublishBatch(ctx, &sns.PublishBatchInput{TopicArn: aws.String(topic), PublishBatchRequestEntries: batchEntries(3)})
		Expect(err).NotTo(HaveOccurred())
		Expect(out.Failed).To(BeEmpty())
		var ids []string
		for _, s := range out.Successful {
			ids = append(ids, aws.ToString(s.Id))
			Expect(aws.ToString(s.MessageId)).To(MatchRegexp(`^[0-9a-f-]{36}$`))
			Expect(s.SequenceNumber).To(BeNil())
		}
		Expect(ids).To(ConsistOf("e0", "e1", "e2"))
		var got []string
		Eventually(func(g Gomega) {
			got = append(got, without(texts(receiveSome(ctx, q, 1), false), "probe")...)
			g.Expect(got).To(ConsistOf("batch message 0", "batch message 1", "batch message 2"))
		}).WithContext(ctx).Should(Succeed())
	})

	It("carries each entry's message attributes", Label("sns-raw"), func(ctx SpecContext) {
		topic := createTopic(ctx, "batch-attrs", nil)
		q, _ := subscribedQueue(ctx, topic, "batch-attrs", nil, map[string]string{"RawMessageDelivery": "true"})
		deliverable(ctx, topic, q, false, nil)
		_, err := snsc(ctx).PublishBatch(ctx, &sns.PublishBatchInput{TopicArn: aws.String(topic), PublishBatchRequestEntries: []snstypes.PublishBatchRequestEntry{
			{Id: aws.String("a"), Message: aws.String("with attrs"), MessageAttributes: map[string]snstypes.MessageAttributeValue{"colour": snsAttr("red")}},
		}})
		Expect(err).NotTo(HaveOccurred())
		msgs := receiveUntil(ctx, q, false, "with attrs")
		m := msgs[len(msgs)-1]
		Expect(aws.ToString(m.MessageAttributes["colour"].StringValue)).To(Equal("red"))
	})

	It("refuses more than 10 entries with TooManyEntriesInBatchRequest", Label("errors"), func(ctx SpecContext) {
		// Recorded (spec sns.md, PublishBatch row).
		topic := createTopic(ctx, "batch-11", nil)
		_, err := snsc(ctx).PublishBatch(ctx, &sns.PublishBatchInput{TopicArn: aws.String(topic), PublishBatchRequestEntries: batchEntries(11)})
		Expect(err).To(BeAPIError[*snstypes.TooManyEntriesInBatchRequestException]())
		Expect(err).To(BeAWSError(http.StatusBadRequest, "TooManyEntriesInBatchRequest", "The batch request contains more entries than permissible."))
	})

	It("refuses two entries with the same id with BatchEntryIdsNotDistinct", Label("errors"), func(ctx SpecContext) {
		topic := createTopic(ctx, "batch-dup", nil)
		e := batchEntries(2)
		e[1].Id = e[0].Id
		_, err := snsc(ctx).PublishBatch(ctx, &sns.PublishBatchInput{TopicArn: aws.String(topic), PublishBatchRequestEntries: e})
		Expect(err).To(BeAPIError[*snstypes.BatchEntryIdsNotDistinctException]())
		Expect(err).To(BeAWSError(http.StatusBadRequest, "BatchEntryIdsNotDistinct", "Two or more batch entries in the request have the same Id."))
	})

	It("refuses an empty batch with EmptyBatchRequest", Label("errors"), func(ctx SpecContext) {
		topic := createTopic(ctx, "batch-empty", nil)
		_, err := snsc(ctx).PublishBatch(ctx, &sns.PublishBatchInput{TopicArn: aws.String(topic), PublishBatchRequestEntries: []snstypes.PublishBatchRequestEntry{}})
		Expect(err).To(BeAPIError[*snstypes.EmptyBatchRequestException]())
		Expect(httpStatus(err)).To(Equal(http.StatusBadRequest))
	})

	It("refuses an entry id with a bad character with InvalidBatchEntryId", Label("errors"), func(ctx SpecContext) {
		// API_PublishBatch: ids of up to 80 alphanumerics, hyphens, underscores.
		topic := createTopic(ctx, "batch-id", nil)
		e := batchEntries(1)
		e[0].Id = aws.String("no spaces")
		_, err := snsc(ctx).PublishBatch(ctx, &sns.PublishBatchInput{TopicArn: aws.String(topic), PublishBatchRequestEntries: e})
		Expect(err).To(BeAPIError[*snstypes.InvalidBatchEntryIdException]())
		Expect(httpStatus(err)).To(Equal(http.StatusBadRequest))
	})

	It("refuses a batch whose messages add up to more than 262144 bytes with BatchRequestTooLong", Label("errors"), func(ctx SpecContext) {
		// API_PublishBatch: the total of all messages is at most 256 KiB.
		topic := createTopic(ctx, "batch-long", nil)
		e := batchEntries(2)
		e[0].Message = aws.String(strings.Repeat("x", 200000))
		e[1].Message = aws.String(strings.Repeat("y", 70000))
		_, err := snsc(ctx).PublishBatch(ctx, &sns.PublishBatchInput{TopicArn: aws.String(topic), PublishBatchRequestEntries: e})
		Expect(err).To(BeAPIError[*snstypes.BatchRequestTooLongException]())
		Expect(err).To(BeAWSError(http.StatusBadRequest, "BatchRequestTooLong", "The length of all the messages put together is more than the limit."))
	})

	It("answers NotFound for a missing topic", Label("errors"), func(ctx SpecContext) {
		_, err := snsc(ctx).PublishBatch(ctx, &sns.PublishBatchInput{TopicArn: aws.String(missingTopicARN(ctx)), PublishBatchRequestEntries: batchEntries(1)})
		Expect(err).To(BeAWSError(http.StatusNotFound, "NotFound", "Topic does not exist"))
	})

	It("numbers the entries of a FIFO batch with increasing SequenceNumbers", Label("sns-fifo"), func(ctx SpecContext) {
		topic := createTopic(ctx, "batch-fifo", map[string]string{"FifoTopic": "true", "ContentBasedDeduplication": "true"})
		e := batchEntries(3)
		for i := range e {
			e[i].MessageGroupId = aws.String("g")
		}
		out, err := snsc(ctx).PublishBatch(ctx, &sns.PublishBatchInput{TopicArn: aws.String(topic), PublishBatchRequestEntries: e})
		Expect(err).NotTo(HaveOccurred())
		Expect(out.Successful).To(HaveLen(3))
		seq := map[string]string{}
		for _, s := range out.Successful {
			Expect(aws.ToString(s.SequenceNumber)).To(MatchRegexp(`^\d+$`))
			seq[aws.ToString(s.Id)] = aws.ToString(s.SequenceNumber)
		}
		Expect(sequence(seq["e0"]).Cmp(sequence(seq["e1"]))).To(Equal(-1))
		Expect(sequence(seq["e1"]).Cmp(sequence(seq["e2"]))).To(Equal(-1))
	})
})

var _ = Describe("SNS FIFO topics", Label("sns-fifo"), func() {
	It("reports FifoTopic and ContentBasedDeduplication for a FIFO topic", func(ctx SpecContext) {
		// Recorded default set of a FIFO topic (spec sns.md §3).
		topic := createTopic(ctx, "fifo-attrs", map[string]string{"FifoTopic": "true"})
		Expect(topic).To(HaveSuffix(".fifo"))
		attrs := topicAttributes(ctx, topic)
		Expect(attrs).To(HaveKeyWithValue("FifoTopic", "true"))
		Expect(attrs).To(HaveKeyWithValue("ContentBasedDeduplication", "false"))
	})

	It("refuses FifoTopic true on a name without .fifo", Label("errors"), func(ctx SpecContext) {
		// sns-fifo-topics.html: FIFO topic names end in .fifo. AWS's text
		// (seen with and without an "Invalid parameter: " prefix) contains
		// "Fifo Topic names must end with .fifo".
		_, err := snsc(ctx).CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String(queueName("fifo-noname")), Attributes: map[string]string{"FifoTopic": "true"}})
		Expect(err).To(BeAWSError(http.StatusBadRequest, "InvalidParameter", ContainSubstring("Fifo Topic names must end with .fifo")))
	})

	It("requires a MessageGroupId", Label("errors"), func(ctx SpecContext) {
		// Recorded (spec sns.md §5, FIFO topic publish row).
		topic := createTopic(ctx, "fifo-group", map[string]string{"FifoTopic": "true", "ContentBasedDeduplication": "true"})
		Expect(publishErr(ctx, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("x")})).To(
			BeAWSError(http.StatusBadRequest, "InvalidParameter", "Invalid parameter: The MessageGroupId parameter is required for FIFO topics"))
	})

	It("requires a deduplication id without ContentBasedDeduplication", Label("errors"), func(ctx SpecContext) {
		// Recorded (spec sns.md §5, FIFO topic publish row).
		topic := createTopic(ctx, "fifo-dedup", map[string]string{"FifoTopic": "true"})
		Expect(publishErr(ctx, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("x"), MessageGroupId: aws.String("g")})).To(
			BeAWSError(http.StatusBadRequest, "InvalidParameter", "Invalid parameter: The topic should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly"))
	})

	It("delivers a duplicate MessageDeduplicationId once, answering both publishes", func(ctx SpecContext) {
		// fifo-message-dedup.html: a duplicate within 5 minutes is accepted
		// but not delivered again.
		topic := createTopic(ctx, "fifo-dup", map[string]string{"FifoTopic": "true"})
		q, _ := subscribedQueue(ctx, topic, "fifo-dup", map[string]string{"FifoQueue": "true"}, map[string]string{"RawMessageDelivery": "true"})
		for _, b := range []string{"first", "again", "last"} {
			dedup := "d-1"
			if b == "last" {
				dedup = "d-2"
			}
			_, err := snsc(ctx).Publish(ctx, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String(b), MessageGroupId: aws.String("g"), MessageDeduplicationId: aws.String(dedup)})
			Expect(err).NotTo(HaveOccurred())
		}
		Expect(texts(receiveUntil(ctx, q, false, "last"), false)).To(Equal([]string{"first", "last"}))
	})

	It("delivers to a standard queue too", func(ctx SpecContext) {
		// sns-fifo-topics.html: FIFO topics can deliver to standard queues.
		topic := createTopic(ctx, "fifo-std", map[string]string{"FifoTopic": "true", "ContentBasedDeduplication": "true"})
		q, _ := subscribedQueue(ctx, topic, "fifo-std", nil, map[string]string{"RawMessageDelivery": "true"})
		Eventually(func(g Gomega) {
			_, err := snsc(ctx).Publish(ctx, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("to standard"), MessageGroupId: aws.String("g"),
				MessageDeduplicationId: aws.String(randomHex(8))})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(texts(receiveSome(ctx, q, 1), false)).To(ContainElement("to standard"))
		}).WithContext(ctx).Should(Succeed())
	})

	It("sends envelopes without signature fields and with the SequenceNumber", func(ctx SpecContext) {
		// Recorded: test_message_to_fifo_sqs (no SignatureVersion, Signature,
		// SigningCertURL; SequenceNumber present).
		topic := createTopic(ctx, "fifo-env", map[string]string{"FifoTopic": "true", "ContentBasedDeduplication": "true"})
		q, _ := subscribedQueue(ctx, topic, "fifo-env", map[string]string{"FifoQueue": "true"}, nil)
		out, err := snsc(ctx).Publish(ctx, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("enveloped"), MessageGroupId: aws.String("g")})
		Expect(err).NotTo(HaveOccurred())
		msgs := receiveUntil(ctx, q, true, "enveloped")
		env := envelope(msgs[len(msgs)-1])
		Expect(env).To(HaveKeyWithValue("SequenceNumber", aws.ToString(out.SequenceNumber)))
		Expect(env).NotTo(HaveKey("Signature"))
		Expect(env).NotTo(HaveKey("SignatureVersion"))
		Expect(env).NotTo(HaveKey("SigningCertURL"))
	})

	It("passes the MessageGroupId and MessageDeduplicationId on to a FIFO queue", func(ctx SpecContext) {
		// sns-fifo-topics.html: SQS FIFO subscribers get the group and
		// deduplication ids of the publish.
		topic := createTopic(ctx, "fifo-ids", map[string]string{"FifoTopic": "true"})
		q, _ := subscribedQueue(ctx, topic, "fifo-ids", map[string]string{"FifoQueue": "true"}, map[string]string{"RawMessageDelivery": "true"})
		_, err := snsc(ctx).Publish(ctx, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("ids"), MessageGroupId: aws.String("orders"), MessageDeduplicationId: aws.String("o-1")})
		Expect(err).NotTo(HaveOccurred())
		msgs := receiveUntil(ctx, q, false, "ids")
		m := msgs[len(msgs)-1]
		Expect(m.Attributes).To(HaveKeyWithValue("MessageGroupId", "orders"))
		Expect(m.Attributes).To(HaveKeyWithValue("MessageDeduplicationId", "o-1"))
	})

	It("keeps an ArchivePolicy and reports BeginningArchiveTime", Label("sns-archive"), func(ctx SpecContext) {
		// message-archiving-and-replay-topic-owner.html: ArchivePolicy
		// {"MessageRetentionPeriod":"<days>"} on FIFO topics; the topic then
		// reports BeginningArchiveTime.
		topic := createTopic(ctx, "fifo-archive", map[string]string{"FifoTopic": "true"})
		_, err := snsc(ctx).SetTopicAttributes(ctx, &sns.SetTopicAttributesInput{TopicArn: aws.String(topic), AttributeName: aws.String("ArchivePolicy"), AttributeValue: aws.String(`{"MessageRetentionPeriod":"30"}`)})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			attrs := topicAttributes(ctx, topic)
			g.Expect(attrs["ArchivePolicy"]).To(MatchJSON(`{"MessageRetentionPeriod":"30"}`))
			g.Expect(attrs["BeginningArchiveTime"]).To(MatchRegexp(`^\d{4}-\d\d-\d\dT`))
		}).WithContext(ctx).Should(Succeed())
	})

	It("keeps an ArchivePolicy given at creation", Label("sns-archive"), func(ctx SpecContext) {
		topic := createTopic(ctx, "fifo-archive-create", map[string]string{"FifoTopic": "true", "ArchivePolicy": `{"MessageRetentionPeriod":"7"}`})
		Expect(topicAttributes(ctx, topic)["ArchivePolicy"]).To(MatchJSON(`{"MessageRetentionPeriod":"7"}`))
	})
})

var _ = Describe("SNS raw delivery to SQS", Label("sns-raw"), func() {
	// sns-large-payload-raw-message-delivery.html: with RawMessageDelivery
	// the body is the message and SNS message attributes become SQS
	// message attributes (recorded: test_redrive_policy_sqs_queue_subscription[True],
	// spec sns.md §7.2).
	It("turns a String.Array attribute into a String-typed SQS attribute with the same value", func(ctx SpecContext) {
		// Whether AWS keeps the type String.Array (SQS accepts any String.*
		// type) or sends String is not documented: only the String family
		// and the value are checked.
		topic := createTopic(ctx, "raw-array", nil)
		q, _ := subscribedQueue(ctx, topic, "raw-array", nil, map[string]string{"RawMessageDelivery": "true"})
		deliverable(ctx, topic, q, false, nil)
		Expect(publishErr(ctx, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("array attr"), MessageAttributes: map[string]snstypes.MessageAttributeValue{
			"list": {DataType: aws.String("String.Array"), StringValue: aws.String(`["a","b"]`)},
		}})).To(Succeed())
		msgs := receiveUntil(ctx, q, false, "array attr")
		m := msgs[len(msgs)-1]
		Expect(aws.ToString(m.MessageAttributes["list"].DataType)).To(HavePrefix("String"))
		Expect(aws.ToString(m.MessageAttributes["list"].StringValue)).To(Equal(`["a","b"]`))
		Expect(aws.ToString(m.MD5OfMessageAttributes)).To(Equal(attributesMD5(m.MessageAttributes)))
	})

	It("delivers a raw message without attributes with no SQS attributes", func(ctx SpecContext) {
		topic := createTopic(ctx, "raw-plain", nil)
		q, _ := subscribedQueue(ctx, topic, "raw-plain", nil, map[string]string{"RawMessageDelivery": "true"})
		deliverable(ctx, topic, q, false, nil)
		Expect(publishErr(ctx, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("bare")})).To(Succeed())
		msgs := receiveUntil(ctx, q, false, "bare")
		m := msgs[len(msgs)-1]
		Expect(m.MessageAttributes).To(BeEmpty())
		Expect(m.MD5OfMessageAttributes).To(BeNil())
		Expect(aws.ToString(m.MD5OfBody)).To(Equal(md5Hex([]byte("bare"))))
	})

	It("delivers one large message whole to each of several raw queues, each under a MessageId of its own", func(ctx SpecContext) {
		// Each queue holds its own message: deleting it from one (as
		// receiveUntil does) leaves it in the others.
		topic := createTopic(ctx, "raw-fan", nil)
		var qs []queue
		for i := range 3 {
			q, _ := subscribedQueue(ctx, topic, fmt.Sprint("raw-fan-", i), nil, map[string]string{"RawMessageDelivery": "true"})
			qs = append(qs, q)
		}
		for _, q := range qs {
			deliverable(ctx, topic, q, false, nil)
		}
		body := strings.Repeat("fan out ünïcode ", 6000) // 108,000 bytes
		Expect(publishErr(ctx, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String(body)})).To(Succeed())
		ids := map[string]bool{}
		for _, q := range qs {
			msgs := receiveUntil(ctx, q, false, body)
			m := msgs[len(msgs)-1]
			Expect(aws.ToString(m.MD5OfBody)).To(Equal(md5Hex([]byte(body))))
			Expect(ids).NotTo(HaveKey(aws.ToString(m.MessageId)))
			ids[aws.ToString(m.MessageId)] = true
		}
	})

	It("switches a live subscription to raw delivery", func(ctx SpecContext) {
		topic := createTopic(ctx, "raw-switch", nil)
		q, sub := subscribedQueue(ctx, topic, "raw-switch", nil, nil)
		_, err := snsc(ctx).SetSubscriptionAttributes(ctx, &sns.SetSubscriptionAttributesInput{SubscriptionArn: aws.String(sub), AttributeName: aws.String("RawMessageDelivery"), AttributeValue: aws.String("true")})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			_, err := snsc(ctx).Publish(ctx, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("now raw")})
			g.Expect(err).NotTo(HaveOccurred())
			out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(q.URL), MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
				MessageSystemAttributeNames: []types.MessageSystemAttributeName{"All"}})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(texts(out.Messages, false)).To(ContainElement("now raw"))
		}).WithContext(ctx).Should(Succeed())
	})
})

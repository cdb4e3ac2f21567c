package conformance

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Errors of every SQS action that names a queue, over both protocols, and
// the ranges of every queue attribute. Evidence: the SQS API reference
// (each action's Errors section lists QueueDoesNotExist; each attribute's
// range is in API_SetQueueAttributes), the 2012-11-05 API model (error
// codes, awsQueryError), and AWS's answers recorded in localstack's
// test_sqs.snapshot.json ("The specified queue does not exist." over JSON,
// "... for this wsdl version." over Query).

// goneQueueURL is the URL of a queue of this run that does not exist.
func goneQueueURL(ctx context.Context) string {
	GinkgoHelper()
	q := createQueue(ctx, "there", nil)
	return q.URL[:strings.LastIndex(q.URL, "/")+1] + queueName("gone")
}

var _ = Describe("SQS errors for a queue that does not exist", Label("errors", "sqs-standard"), func() {
	const code, status = "AWS.SimpleQueueService.NonExistentQueue", http.StatusBadRequest
	entries := func(u string) []types.SendMessageBatchRequestEntry {
		return []types.SendMessageBatchRequestEntry{{Id: aws.String("a"), MessageBody: aws.String("x")}}
	}
	DescribeTable("over AWS JSON 1.0: QueueDoesNotExist, HTTP 400, AWS's message",
		func(ctx SpecContext, call func(context.Context, string) error) {
			err := call(ctx, goneQueueURL(ctx))
			Expect(err).To(BeAPIError[*types.QueueDoesNotExist]())
			Expect(err).To(BeAWSError(status, code, "The specified queue does not exist."))
		},
		Entry("GetQueueAttributes", func(ctx context.Context, u string) error {
			_, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(u), AttributeNames: []types.QueueAttributeName{"All"}})
			return err
		}),
		Entry("SetQueueAttributes", func(ctx context.Context, u string) error {
			_, err := client.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(u), Attributes: map[string]string{"DelaySeconds": "1"}})
			return err
		}),
		Entry("SendMessage", func(ctx context.Context, u string) error {
			_, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(u), MessageBody: aws.String("x")})
			return err
		}),
		Entry("SendMessageBatch", func(ctx context.Context, u string) error {
			_, err := client.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(u), Entries: entries(u)})
			return err
		}),
		Entry("ReceiveMessage", func(ctx context.Context, u string) error {
			_, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(u)})
			return err
		}),
		Entry("DeleteMessage", func(ctx context.Context, u string) error {
			_, err := client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(u), ReceiptHandle: aws.String("x")})
			return err
		}),
		Entry("DeleteMessageBatch", func(ctx context.Context, u string) error {
			_, err := client.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(u), Entries: []types.DeleteMessageBatchRequestEntry{{Id: aws.String("a"), ReceiptHandle: aws.String("x")}}})
			return err
		}),
		Entry("ChangeMessageVisibility", func(ctx context.Context, u string) error {
			_, err := client.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(u), ReceiptHandle: aws.String("x"), VisibilityTimeout: 1})
			return err
		}),
		Entry("ChangeMessageVisibilityBatch", func(ctx context.Context, u string) error {
			_, err := client.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: aws.String(u), Entries: []types.ChangeMessageVisibilityBatchRequestEntry{{Id: aws.String("a"), ReceiptHandle: aws.String("x")}}})
			return err
		}),
		Entry("PurgeQueue", func(ctx context.Context, u string) error {
			_, err := client.PurgeQueue(ctx, &sqs.PurgeQueueInput{QueueUrl: aws.String(u)})
			return err
		}),
		Entry("DeleteQueue", func(ctx context.Context, u string) error {
			_, err := client.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(u)})
			return err
		}),
		Entry("TagQueue", func(ctx context.Context, u string) error {
			_, err := client.TagQueue(ctx, &sqs.TagQueueInput{QueueUrl: aws.String(u), Tags: map[string]string{"a": "b"}})
			return err
		}),
		Entry("UntagQueue", func(ctx context.Context, u string) error {
			_, err := client.UntagQueue(ctx, &sqs.UntagQueueInput{QueueUrl: aws.String(u), TagKeys: []string{"a"}})
			return err
		}),
		Entry("ListQueueTags", func(ctx context.Context, u string) error {
			_, err := client.ListQueueTags(ctx, &sqs.ListQueueTagsInput{QueueUrl: aws.String(u)})
			return err
		}),
		Entry("ListDeadLetterSourceQueues", func(ctx context.Context, u string) error {
			_, err := client.ListDeadLetterSourceQueues(ctx, &sqs.ListDeadLetterSourceQueuesInput{QueueUrl: aws.String(u)})
			return err
		}),
		Entry("AddPermission", func(ctx context.Context, u string) error {
			_, err := client.AddPermission(ctx, &sqs.AddPermissionInput{QueueUrl: aws.String(u), Label: aws.String("l"), AWSAccountIds: []string{"111122223333"}, Actions: []string{"SendMessage"}})
			return err
		}),
		Entry("RemovePermission", func(ctx context.Context, u string) error {
			_, err := client.RemovePermission(ctx, &sqs.RemovePermissionInput{QueueUrl: aws.String(u), Label: aws.String("l")})
			return err
		}),
	)

	DescribeTable("over the Query protocol: AWS.SimpleQueueService.NonExistentQueue, HTTP 400, the wsdl-version message", Label("sqs-query"),
		func(ctx SpecContext, action string, kv ...string) {
			a := sqsQuery(ctx, action, append([]string{"QueueUrl", goneQueueURL(ctx)}, kv...)...)
			Expect(a).To(BeQueryError(status, code, "Sender", "The specified queue does not exist for this wsdl version."))
		},
		Entry("GetQueueAttributes", "GetQueueAttributes", "AttributeName.1", "All"),
		Entry("SetQueueAttributes", "SetQueueAttributes", "Attribute.1.Name", "DelaySeconds", "Attribute.1.Value", "1"),
		Entry("SendMessage", "SendMessage", "MessageBody", "x"),
		Entry("SendMessageBatch", "SendMessageBatch", "SendMessageBatchRequestEntry.1.Id", "a", "SendMessageBatchRequestEntry.1.MessageBody", "x"),
		Entry("ReceiveMessage", "ReceiveMessage"),
		Entry("DeleteMessage", "DeleteMessage", "ReceiptHandle", "x"),
		Entry("ChangeMessageVisibility", "ChangeMessageVisibility", "ReceiptHandle", "x", "VisibilityTimeout", "1"),
		Entry("PurgeQueue", "PurgeQueue"),
		Entry("DeleteQueue", "DeleteQueue"),
		Entry("ListQueueTags", "ListQueueTags"),
		Entry("ListDeadLetterSourceQueues", "ListDeadLetterSourceQueues"),
	)
})

var _ = Describe("SQS queue attribute ranges", Label("sqs-standard"), func() {
	// API_SetQueueAttributes: each attribute's range. A value out of range
	// is InvalidAttributeValue (API model), and the queue keeps its value.
	DescribeTable("on SetQueueAttributes",
		func(ctx SpecContext, name, value string, ok bool) {
			q := createQueue(ctx, "range", nil)
			_, err := client.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(q.URL), Attributes: map[string]string{name: value}})
			if ok {
				Expect(err).NotTo(HaveOccurred())
				Eventually(func() map[string]string {
					return queueAttrs(ctx, client, q.URL, types.QueueAttributeName(name))
				}).WithContext(ctx).Should(HaveKeyWithValue(name, value))
				return
			}
			Expect(err).To(BeAPIError[*types.InvalidAttributeValue]())
			Expect(httpStatus(err)).To(Equal(http.StatusBadRequest))
		},
		Entry("DelaySeconds 0", "DelaySeconds", "0", true),
		Entry("DelaySeconds 900", "DelaySeconds", "900", true),
		Entry("DelaySeconds -1", Label("errors"), "DelaySeconds", "-1", false),
		Entry("DelaySeconds 901", Label("errors"), "DelaySeconds", "901", false),
		Entry("MaximumMessageSize 1024", "MaximumMessageSize", "1024", true),
		Entry("MaximumMessageSize 1048576", "MaximumMessageSize", "1048576", true),
		Entry("MaximumMessageSize 1023", Label("errors"), "MaximumMessageSize", "1023", false),
		Entry("MaximumMessageSize 1048577", Label("errors"), "MaximumMessageSize", "1048577", false),
		Entry("MessageRetentionPeriod 60", "MessageRetentionPeriod", "60", true),
		Entry("MessageRetentionPeriod 1209600", "MessageRetentionPeriod", "1209600", true),
		Entry("MessageRetentionPeriod 59", Label("errors"), "MessageRetentionPeriod", "59", false),
		Entry("MessageRetentionPeriod 1209601", Label("errors"), "MessageRetentionPeriod", "1209601", false),
		Entry("ReceiveMessageWaitTimeSeconds 20", "ReceiveMessageWaitTimeSeconds", "20", true),
		Entry("ReceiveMessageWaitTimeSeconds 21", Label("errors"), "ReceiveMessageWaitTimeSeconds", "21", false),
		Entry("ReceiveMessageWaitTimeSeconds -1", Label("errors"), "ReceiveMessageWaitTimeSeconds", "-1", false),
		Entry("VisibilityTimeout 0", "VisibilityTimeout", "0", true),
		Entry("VisibilityTimeout 43200", "VisibilityTimeout", "43200", true),
		Entry("VisibilityTimeout 43201", Label("errors"), "VisibilityTimeout", "43201", false),
		Entry("VisibilityTimeout -1", Label("errors"), "VisibilityTimeout", "-1", false),
		Entry("VisibilityTimeout that is not a number", Label("errors"), "VisibilityTimeout", "soon", false),
	)

	DescribeTable("on CreateQueue",
		func(ctx SpecContext, name, value string) {
			_, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(queueName("range-create")), Attributes: map[string]string{name: value}})
			Expect(err).To(BeAPIError[*types.InvalidAttributeValue]())
		},
		Entry("DelaySeconds 901", Label("errors"), "DelaySeconds", "901"),
		Entry("MessageRetentionPeriod 59", Label("errors"), "MessageRetentionPeriod", "59"),
		Entry("VisibilityTimeout 43201", Label("errors"), "VisibilityTimeout", "43201"),
	)

	It("keeps SqsManagedSseEnabled true by default and lets it be turned off", func(ctx SpecContext) {
		// Since 2022 new queues use SSE-SQS by default (SQS developer guide,
		// sqs-server-side-encryption.html).
		q := createQueue(ctx, "sse", nil)
		Expect(queueAttrs(ctx, client, q.URL, types.QueueAttributeNameSqsManagedSseEnabled)).To(HaveKeyWithValue("SqsManagedSseEnabled", "true"))
		_, err := client.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(q.URL), Attributes: map[string]string{"SqsManagedSseEnabled": "false"}})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() map[string]string {
			return queueAttrs(ctx, client, q.URL, types.QueueAttributeNameSqsManagedSseEnabled)
		}).WithContext(ctx).Should(HaveKeyWithValue("SqsManagedSseEnabled", "false"))
	})
})

var _ = Describe("SQS message MD5s for every attribute type", Label("sqs-standard", "md5"), func() {
	// MD5OfMessageAttributes per sqs-message-metadata.html (names in byte
	// order, length-prefixed name, type, transport byte, value), checked on
	// SendMessage and again on ReceiveMessage; the body's MD5 is that of
	// its UTF-8 bytes.
	DescribeTable("matches the documented digest on send and on receive",
		func(ctx SpecContext, body string, attrs map[string]types.MessageAttributeValue) {
			q := createQueue(ctx, "md5", nil)
			sent, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q.URL), MessageBody: aws.String(body), MessageAttributes: attrs})
			Expect(err).NotTo(HaveOccurred())
			Expect(aws.ToString(sent.MD5OfMessageBody)).To(Equal(md5Hex([]byte(body))))
			Expect(aws.ToString(sent.MD5OfMessageAttributes)).To(Equal(attributesMD5(attrs)))
			m := receiveOne(ctx, q, &sqs.ReceiveMessageInput{MessageAttributeNames: []string{"All"}})
			Expect(aws.ToString(m.Body)).To(Equal(body))
			Expect(aws.ToString(m.MD5OfBody)).To(Equal(md5Hex([]byte(body))))
			Expect(aws.ToString(m.MD5OfMessageAttributes)).To(Equal(attributesMD5(attrs)))
			Expect(attrNames(m.MessageAttributes)).To(Equal(attrNames(attrs)))
		},
		Entry("a non-ASCII body", "grüße, 世界, 🚀", nil),
		Entry("a String attribute with non-ASCII text", "s", map[string]types.MessageAttributeValue{"city": strAttr("Zürich")}),
		Entry("a Number attribute", "n", map[string]types.MessageAttributeValue{"n": {DataType: aws.String("Number"), StringValue: aws.String("-1.5e10")}}),
		Entry("a Binary attribute", "b", map[string]types.MessageAttributeValue{"b": {DataType: aws.String("Binary"), BinaryValue: []byte{0, 0xff, 0x10}}}),
		Entry("a String attribute with a custom type", "c", map[string]types.MessageAttributeValue{"c": {DataType: aws.String("String.iso"), StringValue: aws.String("x")}}),
		Entry("a Number attribute with a custom type", "c", map[string]types.MessageAttributeValue{"c": {DataType: aws.String("Number.int"), StringValue: aws.String("42")}}),
		Entry("a Binary attribute with a custom type", "c", map[string]types.MessageAttributeValue{"c": {DataType: aws.String("Binary.gif"), BinaryValue: []byte("GIF89a")}}),
		Entry("names sorted by byte, upper case first", "o", map[string]types.MessageAttributeValue{"b": strAttr("1"), "B": strAttr("2"), "a": strAttr("3"), "_": strAttr("4")}),
		Entry("ten attributes of mixed types", "ten", func() map[string]types.MessageAttributeValue {
			m := map[string]types.MessageAttributeValue{}
			for i := range 10 {
				switch i % 3 {
				case 0:
					m[fmt.Sprintf("s%d", i)] = strAttr(fmt.Sprint(i))
				case 1:
					m[fmt.Sprintf("n%d", i)] = types.MessageAttributeValue{DataType: aws.String("Number"), StringValue: aws.String(fmt.Sprint(i))}
				default:
					m[fmt.Sprintf("b%d", i)] = types.MessageAttributeValue{DataType: aws.String("Binary"), BinaryValue: []byte{byte(i)}}
				}
			}
			return m
		}()),
	)

	It("computes AWS's recorded digest for two Number attributes", func(ctx SpecContext) {
		// LS-AWS vector (test_sqs.snapshot.json): attr1 99.12 + attr2 109.12.
		q := createQueue(ctx, "md5-vector", nil)
		sent, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q.URL), MessageBody: aws.String("v"), MessageAttributes: map[string]types.MessageAttributeValue{
			"attr1": {DataType: aws.String("Number"), StringValue: aws.String("99.12")},
			"attr2": {DataType: aws.String("Number"), StringValue: aws.String("109.12")},
		}})
		Expect(err).NotTo(HaveOccurred())
		Expect(aws.ToString(sent.MD5OfMessageAttributes)).To(Equal("9b720b3af309c1c4b0d395c53b08c502"))
	})

	It("answers the digest of each batch entry", Label("sqs-batch"), func(ctx SpecContext) {
		q := createQueue(ctx, "md5-batch", nil)
		attrs := map[string]types.MessageAttributeValue{"k": strAttr("v")}
		out, err := client.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(q.URL), Entries: []types.SendMessageBatchRequestEntry{
			{Id: aws.String("plain"), MessageBody: aws.String("one")},
			{Id: aws.String("attrs"), MessageBody: aws.String("two"), MessageAttributes: attrs},
		}})
		Expect(err).NotTo(HaveOccurred())
		Expect(out.Successful).To(HaveLen(2))
		for _, e := range out.Successful {
			switch aws.ToString(e.Id) {
			case "plain":
				Expect(aws.ToString(e.MD5OfMessageBody)).To(Equal(md5Hex([]byte("one"))))
				Expect(e.MD5OfMessageAttributes).To(BeNil())
			case "attrs":
				Expect(aws.ToString(e.MD5OfMessageBody)).To(Equal(md5Hex([]byte("two"))))
				Expect(aws.ToString(e.MD5OfMessageAttributes)).To(Equal(attributesMD5(attrs)))
			}
		}
	})
})

var _ = Describe("Fair queues", Label("sqs-fair"), func() {
	// sqs-fair-queues.html (July 2025): a MessageGroupId on a standard
	// queue names a tenant; it neither orders nor locks, and is returned as
	// the MessageGroupId system attribute.
	It("does not hold back a tenant's messages while one is in flight", func(ctx SpecContext) {
		q := createQueue(ctx, "fair-nolock", nil)
		for _, b := range []string{"t1-a", "t1-b"} {
			_, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q.URL), MessageBody: aws.String(b), MessageGroupId: aws.String("tenant-1")})
			Expect(err).NotTo(HaveOccurred())
		}
		msgs := receiveAll(ctx, q, 2, 60)
		Expect(texts(msgs, false)).To(ConsistOf("t1-a", "t1-b"))
	})

	It("accepts MessageGroupId in SendMessageBatch on a standard queue and returns it", func(ctx SpecContext) {
		q := createQueue(ctx, "fair-batch", nil)
		out, err := client.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(q.URL), Entries: []types.SendMessageBatchRequestEntry{
			{Id: aws.String("a"), MessageBody: aws.String("for a"), MessageGroupId: aws.String("tenant-a")},
			{Id: aws.String("b"), MessageBody: aws.String("for b"), MessageGroupId: aws.String("tenant-b")},
		}})
		Expect(err).NotTo(HaveOccurred())
		Expect(out.Failed).To(BeEmpty())
		for _, e := range out.Successful {
			Expect(e.SequenceNumber).To(BeNil())
		}
		got := map[string]string{}
		Eventually(func(g Gomega) {
			r, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(q.URL), MaxNumberOfMessages: 10, WaitTimeSeconds: 1, VisibilityTimeout: 60,
				MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameMessageGroupId}})
			g.Expect(err).NotTo(HaveOccurred())
			for _, m := range r.Messages {
				got[aws.ToString(m.Body)] = m.Attributes["MessageGroupId"]
			}
			g.Expect(got).To(HaveLen(2))
		}).WithContext(ctx).Should(Succeed())
		Expect(got).To(Equal(map[string]string{"for a": "tenant-a", "for b": "tenant-b"}))
	})

	It("still refuses a MessageDeduplicationId on a standard queue", Label("errors"), func(ctx SpecContext) {
		// API_SendMessage: MessageDeduplicationId applies only to FIFO queues.
		q := createQueue(ctx, "fair-dedup", nil)
		_, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q.URL), MessageBody: aws.String("x"), MessageGroupId: aws.String("t"), MessageDeduplicationId: aws.String("d")})
		Expect(err).To(HaveErrorCode("InvalidParameterValue"))
		Expect(errorMessage(err)).To(Equal("Value d for parameter MessageDeduplicationId is invalid. Reason: The request includes a parameter that is not valid for this queue type."))
	})
})

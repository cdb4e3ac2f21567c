package conformance

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// SQS over the Query protocol: form-encoded requests, XML answers, as AWS
// CLI 2.9, boto3 before 1.34 and every SDK before late 2023 speak it.
// Evidence: the SQS API reference's "Examples" sections show each action's
// Query request and XML response
// (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_<Action>.html),
// the 2012-11-05 API model (botocore/data/sqs/2012-11-05/service-2.json:
// member names, flattened lists, awsQueryError codes and statuses), and
// AWS's answers recorded in localstack's AWS-validated snapshots
// (tests/aws/services/sqs/test_sqs.snapshot.json, "query" variants).

// queryQueue creates a standard queue over Query and deletes it after.
func queryQueue(ctx context.Context, what string, kv ...string) queue {
	GinkgoHelper()
	name := queueName(what)
	a := sqsQuery(ctx, "CreateQueue", append([]string{"QueueName", name}, kv...)...)
	Expect(a).To(BeQuerySuccess("CreateQueue"), a.Raw)
	url := a.Result("CreateQueue").Get("QueueUrl")
	Expect(url).To(HaveSuffix("/" + name))
	DeferCleanup(func(ctx SpecContext) { deleteQuietly(ctx, client, url) })
	attrs := queueAttrs(ctx, client, url, types.QueueAttributeNameQueueArn)
	return queue{Name: name, URL: url, ARN: attrs["QueueArn"]}
}

// queryMessages receives over Query and returns the <Message> elements.
func queryMessages(ctx context.Context, q queue, kv ...string) []*xmlNode {
	GinkgoHelper()
	a := sqsQuery(ctx, "ReceiveMessage", append([]string{"QueueUrl", q.URL, "WaitTimeSeconds", "1", "MaxNumberOfMessages", "10"}, kv...)...)
	Expect(a).To(BeQuerySuccess("ReceiveMessage"), a.Raw)
	return a.Result("ReceiveMessage").All("Message")
}

var _ = Describe("SQS over the Query protocol", Label("sqs-query"), func() {
	It("creates a queue and answers its URL in <CreateQueueResult>, with a RequestId", func(ctx SpecContext) {
		// API_CreateQueue example response.
		q := queryQueue(ctx, "q-create")
		a := sqsQuery(ctx, "GetQueueUrl", "QueueName", q.Name)
		Expect(a).To(BeQuerySuccess("GetQueueUrl"))
		Expect(a.Result("GetQueueUrl").Get("QueueUrl")).To(Equal(q.URL))
		Expect(a.Root.Get("ResponseMetadata", "RequestId")).NotTo(BeEmpty())
	})

	It("answers a missing queue with AWS.SimpleQueueService.NonExistentQueue and the wsdl-version message, HTTP 400", Label("errors"), func(ctx SpecContext) {
		// Query-only wording recorded from AWS (spec sqs.md §1.2, from
		// localstack's test_sqs snapshot, query variant).
		a := sqsQuery(ctx, "GetQueueUrl", "QueueName", queueName("q-missing"))
		Expect(a).To(BeQueryError(http.StatusBadRequest, "AWS.SimpleQueueService.NonExistentQueue", "Sender", "The specified queue does not exist for this wsdl version."))
		Expect(a.Root.Get("RequestId")).NotTo(BeEmpty())
	})

	It("creates a queue with Attribute.N.Name/Value and reads them back with AttributeName.N", func(ctx SpecContext) {
		// API_CreateQueue / API_GetQueueAttributes Query examples.
		q := queryQueue(ctx, "q-attrs", "Attribute.1.Name", "VisibilityTimeout", "Attribute.1.Value", "45",
			"Attribute.2.Name", "DelaySeconds", "Attribute.2.Value", "3")
		a := sqsQuery(ctx, "GetQueueAttributes", "QueueUrl", q.URL, "AttributeName.1", "VisibilityTimeout", "AttributeName.2", "DelaySeconds")
		Expect(a).To(BeQuerySuccess("GetQueueAttributes"))
		Expect(a.Result("GetQueueAttributes").Pairs("Attribute", "Name", "Value")).To(Equal(map[string]string{"VisibilityTimeout": "45", "DelaySeconds": "3"}))
	})

	It("returns every attribute for AttributeName.1=All, as <Attribute> pairs", func(ctx SpecContext) {
		q := queryQueue(ctx, "q-all")
		a := sqsQuery(ctx, "GetQueueAttributes", "QueueUrl", q.URL, "AttributeName.1", "All")
		Expect(a).To(BeQuerySuccess("GetQueueAttributes"))
		attrs := a.Result("GetQueueAttributes").Pairs("Attribute", "Name", "Value")
		Expect(attrs).To(HaveKeyWithValue("VisibilityTimeout", "30"))
		Expect(attrs).To(HaveKeyWithValue("QueueArn", q.ARN))
		Expect(attrs).To(HaveKeyWithValue("ApproximateNumberOfMessages", "0"))
	})

	It("sets attributes with SetQueueAttributes Attribute.N", func(ctx SpecContext) {
		q := queryQueue(ctx, "q-set")
		a := sqsQuery(ctx, "SetQueueAttributes", "QueueUrl", q.URL, "Attribute.1.Name", "MessageRetentionPeriod", "Attribute.1.Value", "600")
		Expect(a).To(BeQuerySuccess("SetQueueAttributes"))
		Expect(queueAttrs(ctx, client, q.URL, types.QueueAttributeNameMessageRetentionPeriod)).To(HaveKeyWithValue("MessageRetentionPeriod", "600"))
	})

	It("refuses an unknown attribute name with InvalidAttributeName", Label("errors"), func(ctx SpecContext) {
		// API_GetQueueAttributes: InvalidAttributeName, "Unknown Attribute
		// <name>." recorded from AWS (spec sqs.md, GetQueueAttributes row).
		q := queryQueue(ctx, "q-badattr")
		a := sqsQuery(ctx, "GetQueueAttributes", "QueueUrl", q.URL, "AttributeName.1", "Colour")
		Expect(a).To(BeQueryError(http.StatusBadRequest, "InvalidAttributeName", "Sender", "Unknown Attribute Colour."))
	})

	It("lists queues by prefix as repeated <QueueUrl>", func(ctx SpecContext) {
		// API_ListQueues Query example.
		stem := queueName("q-list")
		var urls []string
		for i := range 2 {
			a := sqsQuery(ctx, "CreateQueue", "QueueName", fmt.Sprintf("%s-%d", stem, i))
			Expect(a).To(BeQuerySuccess("CreateQueue"))
			u := a.Result("CreateQueue").Get("QueueUrl")
			urls = append(urls, u)
			DeferCleanup(func(ctx SpecContext) { deleteQuietly(ctx, client, u) })
		}
		Eventually(func(g Gomega) {
			a := sqsQuery(ctx, "ListQueues", "QueueNamePrefix", stem)
			g.Expect(a).To(BeQuerySuccess("ListQueues"))
			var got []string
			for _, n := range a.Result("ListQueues").All("QueueUrl") {
				got = append(got, n.Text)
			}
			g.Expect(got).To(ConsistOf(urls))
		}).WithContext(ctx).Should(Succeed())
	})

	It("sends with MessageAttribute.N and answers the body and attribute MD5s", func(ctx SpecContext) {
		// API_SendMessage Query example; MD5s per the developer guide's
		// sqs-message-metadata page.
		q := queryQueue(ctx, "q-send")
		a := sqsQuery(ctx, "SendMessage", "QueueUrl", q.URL, "MessageBody", "hello query",
			"MessageAttribute.1.Name", "colour", "MessageAttribute.1.Value.DataType", "String", "MessageAttribute.1.Value.StringValue", "blue",
			"MessageAttribute.2.Name", "count", "MessageAttribute.2.Value.DataType", "Number", "MessageAttribute.2.Value.StringValue", "7")
		Expect(a).To(BeQuerySuccess("SendMessage"), a.Raw)
		r := a.Result("SendMessage")
		Expect(r.Get("MessageId")).To(MatchRegexp(`^[0-9a-f-]{36}$`))
		Expect(r.Get("MD5OfMessageBody")).To(Equal(md5Hex([]byte("hello query"))))
		Expect(r.Get("MD5OfMessageAttributes")).To(Equal(attributesMD5(map[string]types.MessageAttributeValue{
			"colour": strAttr("blue"), "count": {DataType: aws.String("Number"), StringValue: aws.String("7")},
		})))
	})

	It("receives <Message> elements with their system attributes and <MessageAttribute> values", func(ctx SpecContext) {
		// API_ReceiveMessage Query example response.
		q := queryQueue(ctx, "q-recv")
		sent := sqsQuery(ctx, "SendMessage", "QueueUrl", q.URL, "MessageBody", "with attrs",
			"MessageAttribute.1.Name", "colour", "MessageAttribute.1.Value.DataType", "String", "MessageAttribute.1.Value.StringValue", "blue")
		Expect(sent).To(BeQuerySuccess("SendMessage"))
		msgs := queryMessages(ctx, q, "AttributeName.1", "All", "MessageAttributeName.1", "All")
		Expect(msgs).To(HaveLen(1))
		m := msgs[0]
		Expect(m.Get("MessageId")).To(Equal(sent.Result("SendMessage").Get("MessageId")))
		Expect(m.Get("Body")).To(Equal("with attrs"))
		Expect(m.Get("MD5OfBody")).To(Equal(md5Hex([]byte("with attrs"))))
		Expect(m.Get("ReceiptHandle")).NotTo(BeEmpty())
		sys := m.Pairs("Attribute", "Name", "Value")
		Expect(sys).To(HaveKeyWithValue("ApproximateReceiveCount", "1"))
		Expect(sys).To(HaveKey("SentTimestamp"))
		ma := m.All("MessageAttribute")
		Expect(ma).To(HaveLen(1))
		Expect(ma[0].Get("Name")).To(Equal("colour"))
		Expect(ma[0].Get("Value", "DataType")).To(Equal("String"))
		Expect(ma[0].Get("Value", "StringValue")).To(Equal("blue"))
		Expect(m.Get("MD5OfMessageAttributes")).To(Equal(sent.Result("SendMessage").Get("MD5OfMessageAttributes")))
	})

	It("answers an empty receive with an empty <ReceiveMessageResult>", func(ctx SpecContext) {
		// API_ReceiveMessage: no messages, no <Message> element.
		q := queryQueue(ctx, "q-empty")
		a := sqsQuery(ctx, "ReceiveMessage", "QueueUrl", q.URL, "WaitTimeSeconds", strconv.Itoa(int(emptyWait)))
		Expect(a).To(BeQuerySuccess("ReceiveMessage"))
		Expect(a.Result("ReceiveMessage")).NotTo(BeNil())
		Expect(a.Result("ReceiveMessage").Kids).To(BeEmpty())
	})

	It("carries a Binary attribute as base64 and digests its raw bytes", func(ctx SpecContext) {
		// BinaryValue is a base64 blob in the Query protocol (API model
		// shape Binary); the MD5 covers the decoded bytes.
		q := queryQueue(ctx, "q-bin")
		raw := []byte{0, 1, 2, 0xfe, 0xff}
		a := sqsQuery(ctx, "SendMessage", "QueueUrl", q.URL, "MessageBody", "bin",
			"MessageAttribute.1.Name", "blob", "MessageAttribute.1.Value.DataType", "Binary", "MessageAttribute.1.Value.BinaryValue", base64.StdEncoding.EncodeToString(raw))
		Expect(a).To(BeQuerySuccess("SendMessage"), a.Raw)
		Expect(a.Result("SendMessage").Get("MD5OfMessageAttributes")).To(Equal(attributesMD5(map[string]types.MessageAttributeValue{
			"blob": {DataType: aws.String("Binary"), BinaryValue: raw},
		})))
		msgs := queryMessages(ctx, q, "MessageAttributeName.1", "blob")
		Expect(msgs).To(HaveLen(1))
		v := msgs[0].Child("MessageAttribute", "Value")
		Expect(v.Get("DataType")).To(Equal("Binary"))
		Expect(base64.StdEncoding.DecodeString(v.Get("BinaryValue"))).To(Equal(raw))
	})

	It("accepts an action posted to the queue's own URL without a QueueUrl parameter", func(ctx SpecContext) {
		// The Query protocol addresses a queue by its URL path
		// (SQS developer guide, "Making Query API requests").
		q := queryQueue(ctx, "q-path")
		a := sqsQueryAt(ctx, q.URL, "SendMessage", "MessageBody", "by path")
		Expect(a).To(BeQuerySuccess("SendMessage"), a.Raw)
		msgs := queryMessages(ctx, q)
		Expect(msgs).To(HaveLen(1))
		Expect(msgs[0].Get("Body")).To(Equal("by path"))
	})

	It("round-trips quotes, ampersands, tabs and carriage returns in a body through XML", func(ctx SpecContext) {
		// Allowed body characters include #x9, #xA, #xD (API_SendMessage).
		q := queryQueue(ctx, "q-escape")
		body := "a \"quoted\" <tag> & 'apos'\r\n\tend"
		Expect(sqsQuery(ctx, "SendMessage", "QueueUrl", q.URL, "MessageBody", body)).To(BeQuerySuccess("SendMessage"))
		msgs := queryMessages(ctx, q)
		Expect(msgs).To(HaveLen(1))
		Expect(msgs[0].Get("Body")).To(Equal(body))
		Expect(msgs[0].Get("MD5OfBody")).To(Equal(md5Hex([]byte(body))))
	})

	It("deletes a message and changes visibility with the receipt handle", func(ctx SpecContext) {
		q := queryQueue(ctx, "q-del")
		Expect(sqsQuery(ctx, "SendMessage", "QueueUrl", q.URL, "MessageBody", "x")).To(BeQuerySuccess("SendMessage"))
		msgs := queryMessages(ctx, q)
		Expect(msgs).To(HaveLen(1))
		h := msgs[0].Get("ReceiptHandle")
		Expect(sqsQuery(ctx, "ChangeMessageVisibility", "QueueUrl", q.URL, "ReceiptHandle", h, "VisibilityTimeout", "60")).To(BeQuerySuccess("ChangeMessageVisibility"))
		Expect(sqsQuery(ctx, "DeleteMessage", "QueueUrl", q.URL, "ReceiptHandle", h)).To(BeQuerySuccess("DeleteMessage"))
		Expect(queueAttrs(ctx, client, q.URL, types.QueueAttributeNameApproximateNumberOfMessagesNotVisible)).To(HaveKeyWithValue("ApproximateNumberOfMessagesNotVisible", "0"))
	})

	It("answers SendMessageBatch with a result entry per success and a BatchResultErrorEntry per failure", func(ctx SpecContext) {
		// API_SendMessageBatch Query example; a per-entry failure answers
		// 200 with the failure listed.
		q := queryQueue(ctx, "q-batch")
		a := sqsQuery(ctx, "SendMessageBatch", "QueueUrl", q.URL,
			"SendMessageBatchRequestEntry.1.Id", "ok", "SendMessageBatchRequestEntry.1.MessageBody", "fine",
			"SendMessageBatchRequestEntry.2.Id", "late", "SendMessageBatchRequestEntry.2.MessageBody", "too late", "SendMessageBatchRequestEntry.2.DelaySeconds", "901")
		Expect(a).To(BeQuerySuccess("SendMessageBatch"), a.Raw)
		r := a.Result("SendMessageBatch")
		ok := r.All("SendMessageBatchResultEntry")
		Expect(ok).To(HaveLen(1))
		Expect(ok[0].Get("Id")).To(Equal("ok"))
		Expect(ok[0].Get("MD5OfMessageBody")).To(Equal(md5Hex([]byte("fine"))))
		bad := r.All("BatchResultErrorEntry")
		Expect(bad).To(HaveLen(1))
		Expect(bad[0].Get("Id")).To(Equal("late"))
		Expect(bad[0].Get("SenderFault")).To(Equal("true"))
		Expect(bad[0].Get("Code")).To(Equal("InvalidParameterValue"))
	})

	It("deletes and changes visibility in batches, answering per-entry result elements", func(ctx SpecContext) {
		q := queryQueue(ctx, "q-batch2")
		for i := range 2 {
			Expect(sqsQuery(ctx, "SendMessage", "QueueUrl", q.URL, "MessageBody", strconv.Itoa(i))).To(BeQuerySuccess("SendMessage"))
		}
		var handles []string
		Eventually(func(g Gomega) {
			for _, m := range queryMessages(ctx, q) {
				handles = append(handles, m.Get("ReceiptHandle"))
			}
			g.Expect(handles).To(HaveLen(2))
		}).WithContext(ctx).Should(Succeed())
		a := sqsQuery(ctx, "ChangeMessageVisibilityBatch", "QueueUrl", q.URL,
			"ChangeMessageVisibilityBatchRequestEntry.1.Id", "a", "ChangeMessageVisibilityBatchRequestEntry.1.ReceiptHandle", handles[0], "ChangeMessageVisibilityBatchRequestEntry.1.VisibilityTimeout", "40",
			"ChangeMessageVisibilityBatchRequestEntry.2.Id", "b", "ChangeMessageVisibilityBatchRequestEntry.2.ReceiptHandle", handles[1], "ChangeMessageVisibilityBatchRequestEntry.2.VisibilityTimeout", "40")
		Expect(a).To(BeQuerySuccess("ChangeMessageVisibilityBatch"), a.Raw)
		Expect(a.Result("ChangeMessageVisibilityBatch").All("ChangeMessageVisibilityBatchResultEntry")).To(HaveLen(2))
		d := sqsQuery(ctx, "DeleteMessageBatch", "QueueUrl", q.URL,
			"DeleteMessageBatchRequestEntry.1.Id", "a", "DeleteMessageBatchRequestEntry.1.ReceiptHandle", handles[0],
			"DeleteMessageBatchRequestEntry.2.Id", "b", "DeleteMessageBatchRequestEntry.2.ReceiptHandle", handles[1])
		Expect(d).To(BeQuerySuccess("DeleteMessageBatch"), d.Raw)
		var ids []string
		for _, e := range d.Result("DeleteMessageBatch").All("DeleteMessageBatchResultEntry") {
			ids = append(ids, e.Get("Id"))
		}
		Expect(ids).To(ConsistOf("a", "b"))
	})

	It("tags a queue with Tag.N and lists the tags as <Tag> pairs", func(ctx SpecContext) {
		// API_TagQueue / API_ListQueueTags Query examples.
		q := queryQueue(ctx, "q-tags")
		Expect(sqsQuery(ctx, "TagQueue", "QueueUrl", q.URL, "Tag.1.Key", "team", "Tag.1.Value", "orders", "Tag.2.Key", "env", "Tag.2.Value", "test")).To(BeQuerySuccess("TagQueue"))
		a := sqsQuery(ctx, "ListQueueTags", "QueueUrl", q.URL)
		Expect(a).To(BeQuerySuccess("ListQueueTags"))
		Expect(a.Result("ListQueueTags").Pairs("Tag", "Key", "Value")).To(Equal(map[string]string{"team": "orders", "env": "test"}))
		Expect(sqsQuery(ctx, "UntagQueue", "QueueUrl", q.URL, "TagKey.1", "env")).To(BeQuerySuccess("UntagQueue"))
		Expect(sqsQuery(ctx, "ListQueueTags", "QueueUrl", q.URL).Result("ListQueueTags").Pairs("Tag", "Key", "Value")).To(Equal(map[string]string{"team": "orders"}))
	})

	It("deletes a queue, after which it does not exist", func(ctx SpecContext) {
		q := queryQueue(ctx, "q-delq")
		Expect(sqsQuery(ctx, "DeleteQueue", "QueueUrl", q.URL)).To(BeQuerySuccess("DeleteQueue"))
		Eventually(func(g Gomega) {
			g.Expect(sqsQuery(ctx, "GetQueueUrl", "QueueName", q.Name).Code()).To(Equal("AWS.SimpleQueueService.NonExistentQueue"))
		}).WithContext(ctx).Should(Succeed())
	})

	It("lists a dead-letter queue's sources under <ListDeadLetterSourceQueuesResult> as <QueueUrl>", Label("sqs-dlq"), func(ctx SpecContext) {
		// API_ListDeadLetterSourceQueues: queueUrls, flattened as QueueUrl.
		dlq := queryQueue(ctx, "q-dlq")
		src := queryQueue(ctx, "q-src", "Attribute.1.Name", "RedrivePolicy", "Attribute.1.Value", `{"deadLetterTargetArn":"`+dlq.ARN+`","maxReceiveCount":"3"}`)
		Eventually(func(g Gomega) {
			a := sqsQuery(ctx, "ListDeadLetterSourceQueues", "QueueUrl", dlq.URL)
			g.Expect(a).To(BeQuerySuccess("ListDeadLetterSourceQueues"))
			g.Expect(a.Result("ListDeadLetterSourceQueues").Get("QueueUrl")).To(Equal(src.URL))
		}).WithContext(ctx).Should(Succeed())
	})

	Describe("errors", Label("errors"), func() {
		It("refuses SendMessage without MessageBody with MissingParameter", func(ctx SpecContext) {
			// API_SendMessage; message recorded from AWS
			// (spec sqs.md, SendMessage row).
			q := queryQueue(ctx, "q-nobody")
			a := sqsQuery(ctx, "SendMessage", "QueueUrl", q.URL)
			Expect(a).To(BeQueryError(http.StatusBadRequest, "MissingParameter", "Sender", "The request must contain the parameter MessageBody."))
		})

		It("refuses MaxNumberOfMessages 11 with InvalidParameterValue", func(ctx SpecContext) {
			// API_ReceiveMessage: 1 to 10; AWS's message recorded in
			// spec sqs.md, ReceiveMessage row.
			q := queryQueue(ctx, "q-max")
			a := sqsQuery(ctx, "ReceiveMessage", "QueueUrl", q.URL, "MaxNumberOfMessages", "11")
			Expect(a).To(BeQueryError(http.StatusBadRequest, "InvalidParameterValue", "Sender",
				"Value 11 for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided."))
		})

		It("refuses WaitTimeSeconds 21 with InvalidParameterValue", func(ctx SpecContext) {
			q := queryQueue(ctx, "q-wait")
			a := sqsQuery(ctx, "ReceiveMessage", "QueueUrl", q.URL, "WaitTimeSeconds", "21")
			Expect(a).To(BeQueryError(http.StatusBadRequest, "InvalidParameterValue", "Sender",
				"Value 21 for parameter WaitTimeSeconds is invalid. Reason: Must be >= 0 and <= 20, if provided."))
		})

		It("answers QueueAlreadyExists for a name taken with other attributes", func(ctx SpecContext) {
			// The Query code of QueueNameExists is QueueAlreadyExists (API
			// model awsQueryError).
			q := queryQueue(ctx, "q-exists")
			a := sqsQuery(ctx, "CreateQueue", "QueueName", q.Name, "Attribute.1.Name", "VisibilityTimeout", "Attribute.1.Value", "99")
			Expect(a).To(BeQueryError(http.StatusBadRequest, "QueueAlreadyExists", "Sender", ContainSubstring("VisibilityTimeout")))
		})

		It("refuses a malformed receipt handle with ReceiptHandleIsInvalid", func(ctx SpecContext) {
			q := queryQueue(ctx, "q-rh")
			a := sqsQuery(ctx, "DeleteMessage", "QueueUrl", q.URL, "ReceiptHandle", "garbage")
			Expect(a).To(BeQueryError(http.StatusBadRequest, "ReceiptHandleIsInvalid", "Sender", ContainSubstring("garbage")))
		})

		It("reports batch errors with their AWS.SimpleQueueService. codes", func(ctx SpecContext) {
			// The batch errors' awsQueryError codes carry the
			// AWS.SimpleQueueService. prefix (API model).
			q := queryQueue(ctx, "q-batcherr")
			Expect(sqsQuery(ctx, "SendMessageBatch", "QueueUrl", q.URL)).To(
				BeQueryError(http.StatusBadRequest, "AWS.SimpleQueueService.EmptyBatchRequest", "Sender", Not(BeEmpty())))
			Expect(sqsQuery(ctx, "SendMessageBatch", "QueueUrl", q.URL,
				"SendMessageBatchRequestEntry.1.Id", "x", "SendMessageBatchRequestEntry.1.MessageBody", "1",
				"SendMessageBatchRequestEntry.2.Id", "x", "SendMessageBatchRequestEntry.2.MessageBody", "2")).To(
				BeQueryError(http.StatusBadRequest, "AWS.SimpleQueueService.BatchEntryIdsNotDistinct", "Sender", Not(BeEmpty())))
			Expect(sqsQuery(ctx, "SendMessageBatch", "QueueUrl", q.URL,
				"SendMessageBatchRequestEntry.1.Id", "no spaces", "SendMessageBatchRequestEntry.1.MessageBody", "1")).To(
				BeQueryError(http.StatusBadRequest, "AWS.SimpleQueueService.InvalidBatchEntryId", "Sender",
					"A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long."))
			var kv []string
			for i := 1; i <= 11; i++ {
				kv = append(kv, fmt.Sprintf("SendMessageBatchRequestEntry.%d.Id", i), fmt.Sprintf("e%d", i), fmt.Sprintf("SendMessageBatchRequestEntry.%d.MessageBody", i), "b")
			}
			Expect(sqsQuery(ctx, "SendMessageBatch", append([]string{"QueueUrl", q.URL}, kv...)...)).To(
				BeQueryError(http.StatusBadRequest, "AWS.SimpleQueueService.TooManyEntriesInBatchRequest", "Sender",
					"Maximum number of entries per request are 10. You have sent 11."))
		})

		It("refuses a second PurgeQueue within 60 s with HTTP 403", Label("errors"), func(ctx SpecContext) {
			// PurgeQueueInProgress answers 403 over Query (API model
			// awsQueryError httpStatusCode 403).
			q := queryQueue(ctx, "q-purge")
			Expect(sqsQuery(ctx, "PurgeQueue", "QueueUrl", q.URL)).To(BeQuerySuccess("PurgeQueue"))
			a := sqsQuery(ctx, "PurgeQueue", "QueueUrl", q.URL)
			Expect(a).To(BeQueryError(http.StatusForbidden, "AWS.SimpleQueueService.PurgeQueueInProgress", "Sender",
				HavePrefix("Only one PurgeQueue operation on "+q.Name+" is allowed every 60 seconds.")))
		})

		It("refuses an unknown action with InvalidAction", func(ctx SpecContext) {
			// Common errors of every AWS Query API: InvalidAction, 400.
			a := sqsQuery(ctx, "FlyToTheMoon")
			Expect(a.Root.Name).To(Equal("ErrorResponse"))
			Expect(a.Status).To(Equal(http.StatusBadRequest))
			Expect(a.Code()).To(Equal("InvalidAction"))
		})

		It("refuses an unknown attribute on SetQueueAttributes with InvalidAttributeName", func(ctx SpecContext) {
			q := queryQueue(ctx, "q-setbad")
			a := sqsQuery(ctx, "SetQueueAttributes", "QueueUrl", q.URL, "Attribute.1.Name", "QueueArn", "Attribute.1.Value", "x")
			Expect(a).To(BeQueryError(http.StatusBadRequest, "InvalidAttributeName", "Sender", "Unknown Attribute QueueArn."))
		})

		It("refuses DelaySeconds 901 on SendMessage with InvalidParameterValue", func(ctx SpecContext) {
			// AWS's answer quoted in aws-samples/amazon-sqs-dlq-replay-backoff#8
			// and aws/aws-sdk-ruby#265.
			q := queryQueue(ctx, "q-delay")
			a := sqsQuery(ctx, "SendMessage", "QueueUrl", q.URL, "MessageBody", "x", "DelaySeconds", "901")
			Expect(a).To(BeQueryError(http.StatusBadRequest, "InvalidParameterValue", "Sender",
				"Value 901 for parameter DelaySeconds is invalid. Reason: DelaySeconds must be >= 0 and <= 900."))
		})
	})

	It("answers the XML namespace of the 2012-11-05 API", func(ctx SpecContext) {
		// Every example response in the API reference uses this xmlns.
		q := queryQueue(ctx, "q-ns")
		a := sqsQuery(ctx, "GetQueueUrl", "QueueName", q.Name)
		Expect(a.Raw).To(ContainSubstring(`xmlns="http://queue.amazonaws.com/doc/2012-11-05/"`))
		Expect(strings.HasPrefix(a.Header.Get("Content-Type"), "text/xml")).To(BeTrue(), a.Header.Get("Content-Type"))
	})
})

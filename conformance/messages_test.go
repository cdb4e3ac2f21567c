package conformance

import (
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("Messages", Label("sqs-standard"), func() {
	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessage.html; https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ReceiveMessage.html; https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-message-metadata.html.
	It("sends, receives and deletes a message with matching MD5s", func(ctx SpecContext) {
		q := createQueue(ctx, "roundtrip", nil)
		body := "héllo, wörld \r\n\t{\"k\":\"v\"} 𝄞"
		// The SDK checks MD5OfMessageBody and MD5OfBody itself and fails the
		// call on a mismatch; the specs compare them too.
		sent, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q.URL), MessageBody: aws.String(body)})
		Expect(err).NotTo(HaveOccurred())
		Expect(aws.ToString(sent.MD5OfMessageBody)).To(Equal(md5Hex([]byte(body))))
		Expect(aws.ToString(sent.MessageId)).To(MatchRegexp(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`))
		Expect(sent.MD5OfMessageAttributes).To(BeNil())
		Expect(sent.SequenceNumber).To(BeNil())

		m := receiveOne(ctx, q, nil)
		Expect(aws.ToString(m.MessageId)).To(Equal(aws.ToString(sent.MessageId)))
		Expect(aws.ToString(m.Body)).To(Equal(body))
		Expect(aws.ToString(m.MD5OfBody)).To(Equal(md5Hex([]byte(body))))
		Expect(aws.ToString(m.ReceiptHandle)).NotTo(BeEmpty())
		Expect(m.MessageAttributes).To(BeEmpty())
		Expect(m.MD5OfMessageAttributes).To(BeNil())

		// In flight for the queue's 30 s visibility timeout.
		expectEmpty(ctx, client, q.URL)

		_, err = client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(q.URL), ReceiptHandle: m.ReceiptHandle})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() map[string]string {
			return queueAttrs(ctx, client, q.URL, types.QueueAttributeNameApproximateNumberOfMessages, types.QueueAttributeNameApproximateNumberOfMessagesNotVisible)
		}).WithContext(ctx).Should(Equal(map[string]string{"ApproximateNumberOfMessages": "0", "ApproximateNumberOfMessagesNotVisible": "0"}))
	})

	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-message-metadata.html; https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-message-attributes.html.
	It("carries String, Number and Binary attributes, with custom type suffixes, and their MD5", func(ctx SpecContext) {
		q := createQueue(ctx, "msgattrs", nil)
		attrs := map[string]types.MessageAttributeValue{
			"greeting":   strAttr("hello"),
			"count":      {DataType: aws.String("Number"), StringValue: aws.String("42.5")},
			"blob":       {DataType: aws.String("Binary"), BinaryValue: []byte{0, 1, 2, 0xfe, 0xff}},
			"unit":       {DataType: aws.String("String.unit"), StringValue: aws.String("kg")},
			"big":        {DataType: aws.String("Number.int"), StringValue: aws.String("12345678901234567890")},
			"image.png":  {DataType: aws.String("Binary.png"), BinaryValue: []byte("\x89PNG")},
			"with-dash_": strAttr("ünïcödé"),
		}
		sent, err := client.SendMessage(ctx, &sqs.SendMessageInput{
			QueueUrl: aws.String(q.URL), MessageBody: aws.String("with attributes"), MessageAttributes: attrs,
		})
		Expect(err).NotTo(HaveOccurred())
		Expect(aws.ToString(sent.MD5OfMessageAttributes)).To(Equal(attributesMD5(attrs)))

		m := receiveOne(ctx, q, &sqs.ReceiveMessageInput{MessageAttributeNames: []string{"All"}})
		Expect(m.MessageAttributes).To(HaveLen(len(attrs)))
		for name, want := range attrs {
			got := m.MessageAttributes[name]
			Expect(aws.ToString(got.DataType)).To(Equal(aws.ToString(want.DataType)), name)
			Expect(aws.ToString(got.StringValue)).To(Equal(aws.ToString(want.StringValue)), name)
			Expect(got.BinaryValue).To(Equal(want.BinaryValue), name)
		}
		Expect(aws.ToString(m.MD5OfMessageAttributes)).To(Equal(aws.ToString(sent.MD5OfMessageAttributes)))
	})

	// Evidence: localstack tests/aws/services/sqs/test_sqs.snapshot.json (recorded against AWS) (MD5OfMessageAttributes vectors).
	It("computes MD5OfMessageAttributes as AWS does for a known vector", func(ctx SpecContext) {
		// Digests recorded from AWS (see the SQS spec, section 5.1).
		q := createQueue(ctx, "md5vec", nil)
		num := func(v string) types.MessageAttributeValue {
			return types.MessageAttributeValue{DataType: aws.String("Number"), StringValue: aws.String(v)}
		}
		for _, c := range []struct {
			attrs map[string]types.MessageAttributeValue
			md5   string
		}{
			{map[string]types.MessageAttributeValue{"attr1": num("99.12"), "attr2": num("109.12")}, "9b720b3af309c1c4b0d395c53b08c502"},
			{map[string]types.MessageAttributeValue{"attr1": num("19.12")}, "1f07082409022a373fa2a2601f82b3cb"},
		} {
			Expect(attributesMD5(c.attrs)).To(Equal(c.md5), "the suite's own digest")
			sent, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q.URL), MessageBody: aws.String("v"), MessageAttributes: c.attrs})
			Expect(err).NotTo(HaveOccurred())
			Expect(aws.ToString(sent.MD5OfMessageAttributes)).To(Equal(c.md5))
		}
	})

	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ReceiveMessage.html (MessageAttributeNames).
	It("selects message attributes by All, prefix.* and exact name", func(ctx SpecContext) {
		// VisibilityTimeout 0 on the queue: each receive sees the message again.
		q := createQueue(ctx, "attrsel", map[string]string{"VisibilityTimeout": "0"})
		attrs := map[string]types.MessageAttributeValue{
			"order.id":    strAttr("17"),
			"order.total": {DataType: aws.String("Number"), StringValue: aws.String("9.99")},
			"orderly":     strAttr("no"),
			"trace":       strAttr("abc"),
		}
		_, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q.URL), MessageBody: aws.String("select"), MessageAttributes: attrs})
		Expect(err).NotTo(HaveOccurred())

		for _, c := range []struct {
			ask  []string
			want []string
		}{
			{[]string{"All"}, []string{"order.id", "order.total", "orderly", "trace"}},
			{[]string{".*"}, []string{"order.id", "order.total", "orderly", "trace"}},
			{[]string{"order.*"}, []string{"order.id", "order.total"}},
			{[]string{"trace"}, []string{"trace"}},
			{[]string{"trace", "order.id", "missing"}, []string{"order.id", "trace"}},
			{nil, nil},
		} {
			m := receiveOne(ctx, q, &sqs.ReceiveMessageInput{MessageAttributeNames: c.ask})
			Expect(attrNames(m.MessageAttributes)).To(ConsistOf(c.want), "MessageAttributeNames %v", c.ask)
			if len(c.want) == 0 {
				Expect(m.MD5OfMessageAttributes).To(BeNil(), "MessageAttributeNames %v", c.ask)
				continue
			}
			// The digest covers the attributes returned: SDKs that verify
			// it on receive (Java) compute it from what they got.
			Expect(aws.ToString(m.MD5OfMessageAttributes)).To(Equal(attributesMD5(m.MessageAttributes)), "MessageAttributeNames %v", c.ask)
		}
	})

	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ReceiveMessage.html (MessageSystemAttributeNames).
	It("returns the system attributes asked for, counting receives", func(ctx SpecContext) {
		q := createQueue(ctx, "sysattrs", map[string]string{"VisibilityTimeout": "0"})
		before := time.Now().Add(-5 * time.Minute).UnixMilli()
		send(ctx, q, "sys")

		first := receiveOne(ctx, q, &sqs.ReceiveMessageInput{MessageSystemAttributeNames: []types.MessageSystemAttributeName{
			types.MessageSystemAttributeNameSentTimestamp, types.MessageSystemAttributeNameApproximateReceiveCount,
		}})
		Expect(first.Attributes).To(HaveLen(2))
		Expect(first.Attributes).To(HaveKeyWithValue("ApproximateReceiveCount", "1"))
		sentAt, err := strconv.ParseInt(first.Attributes["SentTimestamp"], 10, 64)
		Expect(err).NotTo(HaveOccurred())
		Expect(sentAt).To(BeNumerically(">=", before), "SentTimestamp is epoch milliseconds")
		Expect(sentAt).To(BeNumerically("<=", time.Now().Add(5*time.Minute).UnixMilli()))

		second := receiveOne(ctx, q, &sqs.ReceiveMessageInput{MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll}})
		Expect(second.Attributes).To(HaveKeyWithValue("ApproximateReceiveCount", "2"))
		Expect(second.Attributes).To(HaveKeyWithValue("SentTimestamp", first.Attributes["SentTimestamp"]))
		Expect(second.Attributes).To(HaveKey("SenderId"))
		Expect(second.Attributes).To(HaveKey("ApproximateFirstReceiveTimestamp"))
		firstRecv, err := strconv.ParseInt(second.Attributes["ApproximateFirstReceiveTimestamp"], 10, 64)
		Expect(err).NotTo(HaveOccurred())
		Expect(firstRecv).To(BeNumerically(">=", sentAt))
		// No FIFO attributes on a standard queue.
		Expect(second.Attributes).NotTo(HaveKey("SequenceNumber"))
		Expect(second.Attributes).NotTo(HaveKey("MessageDeduplicationId"))

		// Without names, no system attributes.
		third := receiveOne(ctx, q, nil)
		Expect(third.Attributes).To(BeEmpty())
	})

	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessage.html; https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/quotas-messages.html.
	It("refuses a message larger than the queue's MaximumMessageSize", func(ctx SpecContext) {
		q := createQueue(ctx, "toobig", map[string]string{"MaximumMessageSize": "1024"})
		_, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q.URL), MessageBody: aws.String(strings.Repeat("x", 1025))})
		Expect(err).To(HaveErrorCode("InvalidParameterValue"))
		Expect(errorMessage(err)).To(ContainSubstring("Message must be shorter than 1024 bytes"))

		_, err = client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q.URL), MessageBody: aws.String(strings.Repeat("x", 1024))})
		Expect(err).NotTo(HaveOccurred())

		// Attributes count too: name + data type + value, here 1+6+1 bytes.
		attrs := map[string]types.MessageAttributeValue{"k": strAttr("x")}
		_, err = client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q.URL), MessageBody: aws.String(strings.Repeat("x", 1024-8)), MessageAttributes: attrs})
		Expect(err).NotTo(HaveOccurred())
		_, err = client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q.URL), MessageBody: aws.String(strings.Repeat("x", 1024-7)), MessageAttributes: attrs})
		Expect(err).To(HaveErrorCode("InvalidParameterValue"))
	})

	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessage.html (MessageSystemAttributes); https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-message-metadata.html.
	It("keeps AWSTraceHeader apart from the message attributes and digests it", func(ctx SpecContext) {
		q := createQueue(ctx, "trace", nil)
		attrs := map[string]types.MessageAttributeValue{"timestamp": {DataType: aws.String("Number"), StringValue: aws.String("1493147359900")}}
		trace := "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"
		plain, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q.URL), MessageBody: aws.String("test"), MessageAttributes: attrs})
		Expect(err).NotTo(HaveOccurred())
		traced, err := client.SendMessage(ctx, &sqs.SendMessageInput{
			QueueUrl: aws.String(q.URL), MessageBody: aws.String("test"), MessageAttributes: attrs,
			MessageSystemAttributes: map[string]types.MessageSystemAttributeValue{
				"AWSTraceHeader": {DataType: aws.String("String"), StringValue: aws.String(trace)},
			},
		})
		Expect(err).NotTo(HaveOccurred())
		Expect(plain.MD5OfMessageSystemAttributes).To(BeNil())
		Expect(aws.ToString(traced.MD5OfMessageAttributes)).To(Equal(aws.ToString(plain.MD5OfMessageAttributes)))
		// Digest recorded from AWS for this header.
		Expect(aws.ToString(traced.MD5OfMessageSystemAttributes)).To(Equal("5ae4d5d7636402d80f4eb6d213245a88"))

		traces := map[string]string{} // message id -> AWSTraceHeader
		Eventually(func(g Gomega) {
			out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
				QueueUrl: aws.String(q.URL), MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
				MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAWSTraceHeader},
				MessageAttributeNames:       []string{"All"},
			})
			g.Expect(err).NotTo(HaveOccurred())
			for _, m := range out.Messages {
				traces[aws.ToString(m.MessageId)] = m.Attributes["AWSTraceHeader"]
				g.Expect(m.MessageAttributes).To(HaveLen(1), "AWSTraceHeader is not a message attribute")
			}
			g.Expect(traces).To(HaveLen(2))
		}).WithContext(ctx).Should(Succeed())
		Expect(traces).To(Equal(map[string]string{aws.ToString(plain.MessageId): "", aws.ToString(traced.MessageId): trace}))
	})

	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-message-attributes.html; localstack tests/aws/services/sqs/test_sqs.snapshot.json (recorded against AWS).
	It("refuses an empty String attribute value", func(ctx SpecContext) {
		q := createQueue(ctx, "emptyattr", nil)
		_, err := client.SendMessage(ctx, &sqs.SendMessageInput{
			QueueUrl: aws.String(q.URL), MessageBody: aws.String("test"),
			MessageAttributes: map[string]types.MessageAttributeValue{"ErrorDetails": strAttr("")},
		})
		Expect(err).To(HaveErrorCode("InvalidParameterValue"))
		Expect(errorMessage(err)).To(Equal("Message (user) attribute 'ErrorDetails' must contain a non-empty value of type 'String'."))
	})

	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-message-attributes.html (name and type rules).
	It("refuses malformed message attributes", func(ctx SpecContext) {
		// AWS's answers here were seen as Invalid... errors; which exact code
		// each gets is not pinned down, so only that prefix is checked.
		q := createQueue(ctx, "badattrs", nil)
		sendAttrs := func(attrs map[string]types.MessageAttributeValue) error {
			_, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q.URL), MessageBody: aws.String("x"), MessageAttributes: attrs})
			return err
		}
		invalid := WithTransform(func(err error) string {
			var code string
			if err != nil {
				code = "<no code: " + err.Error() + ">"
			}
			if ae := apiError(err); ae != nil {
				code = ae.ErrorCode()
			}
			return code
		}, HavePrefix("Invalid"))
		for _, name := range []string{"AWS.reserved", "amazon.reserved", ".leading", "trailing.", "bad!char", strings.Repeat("n", 257)} {
			Expect(sendAttrs(map[string]types.MessageAttributeValue{name: strAttr("v")})).To(invalid, "attribute name %q", name)
		}
		Expect(sendAttrs(map[string]types.MessageAttributeValue{"t": {DataType: aws.String("Invalid"), StringValue: aws.String("v")}})).To(invalid, "data type")
		Expect(sendAttrs(map[string]types.MessageAttributeValue{"s": strAttr("bad \x08 char")})).To(invalid, "control character in a String value")
		eleven := map[string]types.MessageAttributeValue{}
		for i := range 11 {
			eleven["a"+strconv.Itoa(i)] = strAttr("v")
		}
		Expect(sendAttrs(eleven)).To(invalid, "11 attributes")
		// Ten are fine.
		delete(eleven, "a10")
		Expect(sendAttrs(eleven)).To(Succeed())
	})

	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessage.html (DelaySeconds 0 to 900).
	It("refuses DelaySeconds above 900", func(ctx SpecContext) {
		q := createQueue(ctx, "delay901", nil)
		_, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q.URL), MessageBody: aws.String("x"), DelaySeconds: 901})
		Expect(err).To(HaveErrorCode("InvalidParameterValue"))
	})

	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-fair-queues.html.
	It("accepts a MessageGroupId on a standard queue and returns it as a system attribute", func(ctx SpecContext) {
		// Fair queues (July 2025): the group id only names a tenant.
		q := createQueue(ctx, "fair", nil)
		sent, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q.URL), MessageBody: aws.String("tenant"), MessageGroupId: aws.String("tenant-1")})
		Expect(err).NotTo(HaveOccurred())
		Expect(sent.SequenceNumber).To(BeNil())
		m := receiveOne(ctx, q, &sqs.ReceiveMessageInput{MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll}})
		Expect(m.Attributes).To(HaveKeyWithValue("MessageGroupId", "tenant-1"))
		Expect(m.Attributes).NotTo(HaveKey("SequenceNumber"))
	})

	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessage.html; localstack tests/aws/services/sqs/test_sqs.snapshot.json (recorded against AWS).
	It("refuses an empty body with MissingParameter", func(ctx SpecContext) {
		q := createQueue(ctx, "emptybody", nil)
		_, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q.URL), MessageBody: aws.String("")})
		Expect(err).To(HaveErrorCode("MissingParameter"))
	})
})

var _ = Describe("Visibility", Label("sqs-standard"), func() {
	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ChangeMessageVisibility.html; https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-visibility-timeout.html.
	It("makes a message receivable again at once with ChangeMessageVisibility 0, with a new receipt handle", func(ctx SpecContext) {
		q := createQueue(ctx, "vis0", nil)
		id := send(ctx, q, "again")
		sysCount := &sqs.ReceiveMessageInput{MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameApproximateReceiveCount}}

		first := receiveOne(ctx, q, sysCount)
		expectEmpty(ctx, client, q.URL)

		_, err := client.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{
			QueueUrl: aws.String(q.URL), ReceiptHandle: first.ReceiptHandle, VisibilityTimeout: 0,
		})
		Expect(err).NotTo(HaveOccurred())

		second := receiveOne(ctx, q, &sqs.ReceiveMessageInput{MessageSystemAttributeNames: sysCount.MessageSystemAttributeNames})
		Expect(aws.ToString(second.MessageId)).To(Equal(id))
		Expect(aws.ToString(second.ReceiptHandle)).NotTo(Equal(aws.ToString(first.ReceiptHandle)))
		Expect(second.Attributes).To(HaveKeyWithValue("ApproximateReceiveCount", "2"))

		// The change is not persisted: the new receive used the queue's 30 s.
		expectEmpty(ctx, client, q.URL)

		_, err = client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(q.URL), ReceiptHandle: second.ReceiptHandle})
		Expect(err).NotTo(HaveOccurred())
	})

	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-visibility-timeout.html.
	It("returns a message after its visibility timeout expires", func(ctx SpecContext) {
		q := createQueue(ctx, "visexp", map[string]string{"VisibilityTimeout": "1"})
		id := send(ctx, q, "expire")
		first := receiveOne(ctx, q, nil)
		received := time.Now()
		expectEmpty(ctx, client, q.URL)

		var second types.Message
		Eventually(func(g Gomega) {
			out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(q.URL), WaitTimeSeconds: 1})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(out.Messages).To(HaveLen(1))
			second = out.Messages[0]
		}).WithContext(ctx).Should(Succeed())
		Expect(time.Since(received)).To(BeNumerically(">=", 900*time.Millisecond))
		Expect(aws.ToString(second.MessageId)).To(Equal(id))
		Expect(aws.ToString(second.ReceiptHandle)).NotTo(Equal(aws.ToString(first.ReceiptHandle)))
	})

	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ReceiveMessage.html (VisibilityTimeout).
	It("uses the receive's VisibilityTimeout over the queue's", func(ctx SpecContext) {
		q := createQueue(ctx, "visreq", map[string]string{"VisibilityTimeout": "0"})
		send(ctx, q, "hold")
		receiveOne(ctx, q, &sqs.ReceiveMessageInput{VisibilityTimeout: 30})
		expectEmpty(ctx, client, q.URL)
	})

	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_DeleteMessage.html (an older receipt handle may succeed).
	It("accepts a stale receipt handle on DeleteMessage of a standard queue", func(ctx SpecContext) {
		q := createQueue(ctx, "stale", nil)
		send(ctx, q, "stale")
		first := receiveOne(ctx, q, nil)
		_, err := client.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(q.URL), ReceiptHandle: first.ReceiptHandle, VisibilityTimeout: 0})
		Expect(err).NotTo(HaveOccurred())
		second := receiveOne(ctx, q, nil)
		Expect(second.ReceiptHandle).NotTo(Equal(first.ReceiptHandle))
		// Only the latest handle is sure to delete; an older one still
		// answers success (the message may stay).
		_, err = client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(q.URL), ReceiptHandle: first.ReceiptHandle})
		Expect(err).NotTo(HaveOccurred())
		_, err = client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(q.URL), ReceiptHandle: second.ReceiptHandle})
		Expect(err).NotTo(HaveOccurred())
	})

	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ChangeMessageVisibility.html; localstack tests/aws/services/sqs/test_sqs.snapshot.json (recorded against AWS).
	It("refuses ChangeMessageVisibility for a deleted message", func(ctx SpecContext) {
		q := createQueue(ctx, "visdeleted", nil)
		send(ctx, q, "gone")
		m := receiveOne(ctx, q, nil)
		_, err := client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(q.URL), ReceiptHandle: m.ReceiptHandle})
		Expect(err).NotTo(HaveOccurred())
		_, err = client.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(q.URL), ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 10})
		Expect(err).To(HaveErrorCode("InvalidParameterValue"))
		Expect(errorMessage(err)).To(ContainSubstring("Message does not exist or is not available for visibility timeout change"))
	})

	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_DeleteMessage.html (ReceiptHandleIsInvalid).
	It("refuses a receipt handle of another queue with ReceiptHandleIsInvalid", func(ctx SpecContext) {
		a := createQueue(ctx, "handle-a", nil)
		b := createQueue(ctx, "handle-b", nil)
		send(ctx, a, "mine")
		m := receiveOne(ctx, a, nil)
		_, err := client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(b.URL), ReceiptHandle: m.ReceiptHandle})
		Expect(err).To(BeAPIError[*types.ReceiptHandleIsInvalid]())
	})

	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_DeleteMessage.html (ReceiptHandleIsInvalid); localstack tests/aws/services/sqs/test_sqs.snapshot.json (recorded against AWS).
	It("refuses a malformed receipt handle with ReceiptHandleIsInvalid", func(ctx SpecContext) {
		q := createQueue(ctx, "badhandle", nil)
		_, err := client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(q.URL), ReceiptHandle: aws.String("garbage")})
		Expect(err).To(BeAPIError[*types.ReceiptHandleIsInvalid]())
		Expect(err).To(HaveErrorCode("ReceiptHandleIsInvalid"))

		_, err = client.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(q.URL), ReceiptHandle: aws.String("garbage"), VisibilityTimeout: 10})
		Expect(err).To(BeAPIError[*types.ReceiptHandleIsInvalid]())
	})
})

var _ = Describe("Long polling", Label("sqs-standard"), func() {
	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-short-and-long-polling.html.
	It("returns as soon as a message arrives, well before WaitTimeSeconds", func(ctx SpecContext) {
		q := createQueue(ctx, "longpoll", nil)
		sent := make(chan error, 1)
		go func() {
			defer GinkgoRecover()
			time.Sleep(300 * time.Millisecond)
			_, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q.URL), MessageBody: aws.String("wake up")})
			sent <- err
		}()
		start := time.Now()
		out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(q.URL), WaitTimeSeconds: 10})
		took := time.Since(start)
		Expect(err).NotTo(HaveOccurred())
		Expect(<-sent).To(Succeed())
		Expect(out.Messages).To(HaveLen(1))
		Expect(aws.ToString(out.Messages[0].Body)).To(Equal("wake up"))
		Expect(took).To(BeNumerically(">=", 250*time.Millisecond), "returned before the message was sent")
		Expect(took).To(BeNumerically("<", 5*time.Second), "waited too long after the message was sent")
	})

	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-short-and-long-polling.html.
	It("returns no messages once WaitTimeSeconds passes", func(ctx SpecContext) {
		q := createQueue(ctx, "longpoll-empty", nil)
		start := time.Now()
		out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(q.URL), WaitTimeSeconds: 1})
		Expect(err).NotTo(HaveOccurred())
		Expect(out.Messages).To(BeEmpty())
		Expect(time.Since(start)).To(BeNumerically(">=", 900*time.Millisecond))
	})

	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-short-and-long-polling.html; https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SetQueueAttributes.html.
	It("uses the queue's ReceiveMessageWaitTimeSeconds when the receive gives none", func(ctx SpecContext) {
		q := createQueue(ctx, "longpoll-queue", map[string]string{"ReceiveMessageWaitTimeSeconds": "1"})
		start := time.Now()
		out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(q.URL)})
		Expect(err).NotTo(HaveOccurred())
		Expect(out.Messages).To(BeEmpty())
		Expect(time.Since(start)).To(BeNumerically(">=", 900*time.Millisecond))
	})

	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ReceiveMessage.html.
	It("refuses WaitTimeSeconds above 20 and MaxNumberOfMessages above 10", func(ctx SpecContext) {
		q := createQueue(ctx, "recvlimits", nil)
		_, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(q.URL), WaitTimeSeconds: 21})
		Expect(err).To(HaveErrorCode("InvalidParameterValue"))
		_, err = client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(q.URL), MaxNumberOfMessages: 11})
		Expect(err).To(HaveErrorCode("InvalidParameterValue"))
	})
})

var _ = Describe("Delays", Label("sqs-standard"), func() {
	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-message-timers.html.
	It("hides a message sent with DelaySeconds until the delay passes", func(ctx SpecContext) {
		q := createQueue(ctx, "delay", nil)
		start := time.Now()
		_, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q.URL), MessageBody: aws.String("later"), DelaySeconds: 1})
		Expect(err).NotTo(HaveOccurred())
		out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(q.URL)})
		Expect(err).NotTo(HaveOccurred())
		Expect(out.Messages).To(BeEmpty())

		Eventually(func(g Gomega) {
			out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(q.URL), WaitTimeSeconds: 1})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(out.Messages).To(HaveLen(1))
			g.Expect(aws.ToString(out.Messages[0].Body)).To(Equal("later"))
		}).WithContext(ctx).Should(Succeed())
		Expect(time.Since(start)).To(BeNumerically(">=", 900*time.Millisecond))
	})

	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-delay-queues.html.
	It("applies the queue's DelaySeconds to messages sent without one", func(ctx SpecContext) {
		q := createQueue(ctx, "qdelay", map[string]string{"DelaySeconds": "1"})
		start := time.Now()
		send(ctx, q, "queue delay")
		out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(q.URL)})
		Expect(err).NotTo(HaveOccurred())
		Expect(out.Messages).To(BeEmpty())
		Eventually(func(g Gomega) {
			out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(q.URL), WaitTimeSeconds: 1})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(out.Messages).To(HaveLen(1))
		}).WithContext(ctx).Should(Succeed())
		Expect(time.Since(start)).To(BeNumerically(">=", 900*time.Millisecond))
	})
})

var _ = Describe("Errors for a missing queue", Label("errors", "sqs-standard"), func() {
	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_GetQueueUrl.html (QueueDoesNotExist); botocore data/sqs/2012-11-05/service-2.json (awsQueryError code).
	It("answers QueueDoesNotExist, reported as AWS.SimpleQueueService.NonExistentQueue", func(ctx SpecContext) {
		_, err := client.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(queueName("never-created"))})
		Expect(err).To(BeAPIError[*types.QueueDoesNotExist]())
		Expect(err).To(HaveErrorCode("AWS.SimpleQueueService.NonExistentQueue"))

		// A well-formed URL of a queue that is not there, on the target's
		// own host and account.
		q := createQueue(ctx, "exists", nil)
		missing := strings.TrimSuffix(q.URL, q.Name) + queueName("never-created")
		_, err = client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(missing), MessageBody: aws.String("x")})
		Expect(err).To(BeAPIError[*types.QueueDoesNotExist]())
		Expect(err).To(HaveErrorCode("AWS.SimpleQueueService.NonExistentQueue"))
		_, err = client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(missing)})
		Expect(err).To(BeAPIError[*types.QueueDoesNotExist]())
		_, err = client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(missing), AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameAll}})
		Expect(err).To(BeAPIError[*types.QueueDoesNotExist]())
		_, err = client.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(missing)})
		Expect(err).To(BeAPIError[*types.QueueDoesNotExist]())
	})
})

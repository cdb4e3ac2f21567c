package conformance

import (
	"net/http"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// More of SQS over the Query protocol: FIFO queues, move tasks,
// permissions and paging, with the element names of the 2012-11-05 API
// model (botocore data/sqs/2012-11-05/service-2.json: flattened lists with
// their locationName) and the API reference's Query examples.
var _ = Describe("SQS over the Query protocol, continued", Label("sqs-query"), func() {
	It("answers a FIFO send with its SequenceNumber and returns the FIFO system attributes on receive", Label("sqs-fifo"), func(ctx SpecContext) {
		// API_SendMessage: SequenceNumber in SendMessageResult;
		// API_ReceiveMessage: MessageGroupId, MessageDeduplicationId,
		// SequenceNumber attributes.
		name := queueName("qf") + ".fifo"
		c := sqsQuery(ctx, "CreateQueue", "QueueName", name, "Attribute.1.Name", "FifoQueue", "Attribute.1.Value", "true")
		Expect(c).To(BeQuerySuccess("CreateQueue"), c.Raw)
		url := c.Result("CreateQueue").Get("QueueUrl")
		DeferCleanup(func(ctx SpecContext) { deleteQuietly(ctx, client, url) })
		s := sqsQuery(ctx, "SendMessage", "QueueUrl", url, "MessageBody", "ordered", "MessageGroupId", "g-1", "MessageDeduplicationId", "d-1")
		Expect(s).To(BeQuerySuccess("SendMessage"), s.Raw)
		seq := s.Result("SendMessage").Get("SequenceNumber")
		Expect(seq).To(MatchRegexp(`^\d{20,}$`))
		msgs := queryMessages(ctx, queue{URL: url}, "AttributeName.1", "All")
		Expect(msgs).To(HaveLen(1))
		attrs := msgs[0].Pairs("Attribute", "Name", "Value")
		Expect(attrs).To(HaveKeyWithValue("MessageGroupId", "g-1"))
		Expect(attrs).To(HaveKeyWithValue("MessageDeduplicationId", "d-1"))
		Expect(attrs).To(HaveKeyWithValue("SequenceNumber", seq))
	})

	It("refuses a FIFO send without MessageGroupId with MissingParameter", Label("sqs-fifo", "errors"), func(ctx SpecContext) {
		// API_SendMessage: MessageGroupId is required for FIFO queues.
		name := queueName("qf-nogroup") + ".fifo"
		a := sqsQuery(ctx, "CreateQueue", "QueueName", name, "Attribute.1.Name", "FifoQueue", "Attribute.1.Value", "true")
		Expect(a).To(BeQuerySuccess("CreateQueue"), a.Raw)
		url := a.Result("CreateQueue").Get("QueueUrl")
		DeferCleanup(func(ctx SpecContext) { deleteQuietly(ctx, client, url) })
		s := sqsQuery(ctx, "SendMessage", "QueueUrl", url, "MessageBody", "x", "MessageDeduplicationId", "d")
		Expect(s).To(BeQueryError(http.StatusBadRequest, "MissingParameter", "Sender", "The request must contain the parameter MessageGroupId."))
	})

	It("pages ListQueues with MaxResults, answering a <NextToken>", func(ctx SpecContext) {
		// API_ListQueues: MaxResults 1 to 1000 and NextToken.
		stem := queueName("q-page")
		for _, n := range []string{"a", "b"} {
			a := sqsQuery(ctx, "CreateQueue", "QueueName", stem+"-"+n)
			Expect(a).To(BeQuerySuccess("CreateQueue"))
			u := a.Result("CreateQueue").Get("QueueUrl")
			DeferCleanup(func(ctx SpecContext) { deleteQuietly(ctx, client, u) })
		}
		Eventually(func(g Gomega) {
			a := sqsQuery(ctx, "ListQueues", "QueueNamePrefix", stem, "MaxResults", "1")
			g.Expect(a).To(BeQuerySuccess("ListQueues"))
			r := a.Result("ListQueues")
			g.Expect(r.All("QueueUrl")).To(HaveLen(1))
			g.Expect(r.Get("NextToken")).NotTo(BeEmpty())
		}).WithContext(ctx).Should(Succeed())
	})

	It("adds a permission from AWSAccountId.N and ActionName.N", func(ctx SpecContext) {
		// API_AddPermission Query example.
		q := queryQueue(ctx, "q-perm")
		a := sqsQuery(ctx, "AddPermission", "QueueUrl", q.URL, "Label", "senders", "AWSAccountId.1", "111122223333", "ActionName.1", "SendMessage")
		Expect(a).To(BeQuerySuccess("AddPermission"), a.Raw)
		attrs := sqsQuery(ctx, "GetQueueAttributes", "QueueUrl", q.URL, "AttributeName.1", "Policy").Result("GetQueueAttributes").Pairs("Attribute", "Name", "Value")
		Expect(attrs["Policy"]).To(ContainSubstring(`"Sid":"senders"`))
		Expect(attrs["Policy"]).To(ContainSubstring("SQS:SendMessage"))
		Expect(sqsQuery(ctx, "RemovePermission", "QueueUrl", q.URL, "Label", "senders")).To(BeQuerySuccess("RemovePermission"))
	})

	It("refuses a RedrivePolicy with maxReceiveCount 0 with AWS's message", Label("sqs-dlq", "errors"), func(ctx SpecContext) {
		// Spec sqs.md §3 (RedrivePolicy row, recorded from AWS).
		dlq := queryQueue(ctx, "q-rp-dlq")
		q := queryQueue(ctx, "q-rp")
		policy := `{"deadLetterTargetArn":"` + dlq.ARN + `","maxReceiveCount":0}`
		a := sqsQuery(ctx, "SetQueueAttributes", "QueueUrl", q.URL, "Attribute.1.Name", "RedrivePolicy", "Attribute.1.Value", policy)
		Expect(a).To(BeQueryError(http.StatusBadRequest, "InvalidParameterValue", "Sender",
			"Value "+policy+" for parameter RedrivePolicy is invalid. Reason: Invalid value for maxReceiveCount: 0, valid values are from 1 to 1000 both inclusive."))
	})

	It("starts and lists a move task, answering <TaskHandle> and result entries", Label("sqs-move-tasks"), func(ctx SpecContext) {
		// API_StartMessageMoveTask / API_ListMessageMoveTasks: Results is
		// a flattened list whose entries are named
		// ListMessageMoveTasksResultEntry (API model xmlName; the JavaScript
		// SDK v3's Query deserializer reads exactly that element).
		src, dlq := deadLetterPipeOn(ctx, client, "q-mt")
		deadLetterOn(ctx, client, src, dlq, "m1")
		a := sqsQuery(ctx, "StartMessageMoveTask", "SourceArn", dlq.ARN, "MaxNumberOfMessagesPerSecond", "1")
		Expect(a).To(BeQuerySuccess("StartMessageMoveTask"), a.Raw)
		Expect(a.Result("StartMessageMoveTask").Get("TaskHandle")).NotTo(BeEmpty())
		l := sqsQuery(ctx, "ListMessageMoveTasks", "SourceArn", dlq.ARN)
		Expect(l).To(BeQuerySuccess("ListMessageMoveTasks"), l.Raw)
		entries := l.Result("ListMessageMoveTasks").All("ListMessageMoveTasksResultEntry")
		Expect(entries).To(HaveLen(1))
		Expect(entries[0].Get("SourceArn")).To(Equal(dlq.ARN))
		Expect(entries[0].Get("Status")).To(BeElementOf("RUNNING", "COMPLETED"))
	})

	It("refuses StartMessageMoveTask for a source that does not exist", Label("sqs-move-tasks", "errors"), func(ctx SpecContext) {
		// API_StartMessageMoveTask: ResourceNotFoundException.
		arn := createQueue(ctx, "q-mt-arn", nil).ARN
		a := sqsQuery(ctx, "StartMessageMoveTask", "SourceArn", arn[:strings.LastIndex(arn, ":")+1]+queueName("q-mt-none"))
		Expect(a.Root.Name).To(Equal("ErrorResponse"))
		Expect(a.Code()).To(Equal("ResourceNotFoundException"))
		Expect(a.Message()).To(Equal("The resource that you specified for the SourceArn parameter doesn't exist."))
	})
})

var _ = Describe("SNS errors over the Query protocol", Label("sns-query", "errors"), func() {
	// API reference Errors sections, with AWS's recorded messages (spec
	// sns.md §2 and §6): every SNS error is an ErrorResponse with Type
	// Sender for 4xx.
	It("answers Publish to a missing topic with NotFound, HTTP 404", func(ctx SpecContext) {
		a := snsQuery(ctx, "Publish", "TopicArn", missingTopicARN(ctx), "Message", "x")
		Expect(a).To(BeQueryError(http.StatusNotFound, "NotFound", "Sender", "Topic does not exist"))
	})

	It("answers an empty message with InvalidParameter, HTTP 400", func(ctx SpecContext) {
		arn := createTopic(ctx, "q-empty", nil)
		a := snsQuery(ctx, "Publish", "TopicArn", arn, "Message", "")
		Expect(a).To(BeQueryError(http.StatusBadRequest, "InvalidParameter", "Sender", "Invalid parameter: Empty message"))
	})

	It("answers a bad attribute type with ParameterValueInvalid, HTTP 400", func(ctx SpecContext) {
		arn := createTopic(ctx, "q-attr", nil)
		a := snsQuery(ctx, "Publish", "TopicArn", arn, "Message", "x",
			"MessageAttributes.entry.1.Name", "attr1", "MessageAttributes.entry.1.Value.DataType", "Colour", "MessageAttributes.entry.1.Value.StringValue", "x")
		Expect(a).To(BeQueryError(http.StatusBadRequest, "ParameterValueInvalid", "Sender",
			"The message attribute 'attr1' has an invalid message attribute type, the set of supported type prefixes is Binary, Number, and String."))
	})

	It("answers a missing subscription with NotFound, HTTP 404", func(ctx SpecContext) {
		topic := createTopic(ctx, "q-sub", nil)
		_, sub := subscribedQueue(ctx, topic, "q-sub", nil, nil)
		_, err := snsc(ctx).Unsubscribe(ctx, &sns.UnsubscribeInput{SubscriptionArn: aws.String(sub)})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() queryAnswer {
			return snsQuery(ctx, "GetSubscriptionAttributes", "SubscriptionArn", sub)
		}).WithContext(ctx).Should(BeQueryError(http.StatusNotFound, "NotFound", "Sender", "Subscription does not exist"))
	})

	It("lists subscriptions as <Subscriptions><member>", func(ctx SpecContext) {
		// API_ListSubscriptionsByTopic example response.
		topic := createTopic(ctx, "q-list", nil)
		q, sub := subscribedQueue(ctx, topic, "q-list", nil, nil)
		a := snsQuery(ctx, "ListSubscriptionsByTopic", "TopicArn", topic)
		Expect(a).To(BeQuerySuccess("ListSubscriptionsByTopic"), a.Raw)
		m := a.Result("ListSubscriptionsByTopic").Child("Subscriptions", "member")
		Expect(m.Get("SubscriptionArn")).To(Equal(sub))
		Expect(m.Get("Endpoint")).To(Equal(q.ARN))
		Expect(m.Get("Protocol")).To(Equal("sqs"))
	})
})

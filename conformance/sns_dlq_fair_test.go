package conformance

import (
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Subscription dead-letter queue settings (sns-dead-letter-queues.html,
// sns-configure-dead-letter-queue.html; messages recorded from AWS, spec
// sns.md §4 RedrivePolicy row) and SNS to SQS fair queues (sqs-fair-queues.html:
// a standard topic's MessageGroupId reaches a standard queue; spec sns.md §7.2).
var _ = Describe("SNS subscription dead-letter queue settings", Label("sns-dlq", "sns-core"), func() {
	It("stores a subscription RedrivePolicy and returns it", func(ctx SpecContext) {
		topic := createTopic(ctx, "sdlq", nil)
		dlq := dlqFor(ctx, topic)
		_, sub := subscribedQueue(ctx, topic, "sdlq", nil, nil)
		_, err := snsc(ctx).SetSubscriptionAttributes(ctx, &sns.SetSubscriptionAttributesInput{SubscriptionArn: aws.String(sub),
			AttributeName: aws.String("RedrivePolicy"), AttributeValue: aws.String(redriveTo(dlq))})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() map[string]string { return subscriptionAttributes(ctx, sub) }).WithContext(ctx).Should(
			HaveKeyWithValue("RedrivePolicy", MatchJSON(redriveTo(dlq))))
	})

	It("refuses a RedrivePolicy that is not JSON", Label("errors"), func(ctx SpecContext) {
		topic := createTopic(ctx, "sdlq-json", nil)
		_, sub := subscribedQueue(ctx, topic, "sdlq-json", nil, nil)
		_, err := snsc(ctx).SetSubscriptionAttributes(ctx, &sns.SetSubscriptionAttributesInput{SubscriptionArn: aws.String(sub),
			AttributeName: aws.String("RedrivePolicy"), AttributeValue: aws.String("{not json")})
		Expect(err).To(BeAWSError(http.StatusBadRequest, "InvalidParameter", HavePrefix("Invalid parameter: RedrivePolicy: failed to parse JSON.")))
	})

	It("refuses a RedrivePolicy whose deadLetterTargetArn is not an ARN", Label("errors"), func(ctx SpecContext) {
		topic := createTopic(ctx, "sdlq-arn", nil)
		_, sub := subscribedQueue(ctx, topic, "sdlq-arn", nil, nil)
		_, err := snsc(ctx).SetSubscriptionAttributes(ctx, &sns.SetSubscriptionAttributesInput{SubscriptionArn: aws.String(sub),
			AttributeName: aws.String("RedrivePolicy"), AttributeValue: aws.String(`{"deadLetterTargetArn":"not-an-arn"}`)})
		Expect(err).To(BeAWSError(http.StatusBadRequest, "InvalidParameter", "Invalid parameter: RedrivePolicy: deadLetterTargetArn is an invalid arn"))
	})
})

var _ = Describe("SNS to SQS fair queues", Label("sqs-fair", "sns-core"), func() {
	It("passes a standard topic's MessageGroupId on to a standard queue", func(ctx SpecContext) {
		topic := createTopic(ctx, "fair-sns", nil)
		q, _ := subscribedQueue(ctx, topic, "fair-sns", nil, map[string]string{"RawMessageDelivery": "true"})
		Eventually(func(g Gomega) {
			_, err := snsc(ctx).Publish(ctx, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("tenant message"), MessageGroupId: aws.String("tenant-7")})
			g.Expect(err).NotTo(HaveOccurred())
			out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(q.URL), MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
				MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameMessageGroupId}})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(out.Messages).NotTo(BeEmpty())
			g.Expect(aws.ToString(out.Messages[0].Body)).To(Equal("tenant message"))
			g.Expect(out.Messages[0].Attributes).To(HaveKeyWithValue("MessageGroupId", "tenant-7"))
		}).WithContext(ctx).Should(Succeed())
	})
})

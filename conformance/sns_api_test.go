package conformance

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// SNS topics, subscriptions and Publish, as the API reference
// (https://docs.aws.amazon.com/sns/latest/api/API_<Action>.html) and AWS's
// recorded answers (localstack tests/aws/services/sns/test_sns.snapshot.json,
// AWS-validated) describe them. Every error is checked for its code, its
// HTTP status and AWS's message.

// topicAttributes reads a topic's attributes.
func topicAttributes(ctx context.Context, arn string) map[string]string {
	GinkgoHelper()
	out, err := snsc(ctx).GetTopicAttributes(ctx, &sns.GetTopicAttributesInput{TopicArn: aws.String(arn)})
	Expect(err).NotTo(HaveOccurred())
	return out.Attributes
}

// subscriptionAttributes reads a subscription's attributes.
func subscriptionAttributes(ctx context.Context, arn string) map[string]string {
	GinkgoHelper()
	out, err := snsc(ctx).GetSubscriptionAttributes(ctx, &sns.GetSubscriptionAttributesInput{SubscriptionArn: aws.String(arn)})
	Expect(err).NotTo(HaveOccurred())
	return out.Attributes
}

// publishErr publishes in and returns the error.
func publishErr(ctx context.Context, in *sns.PublishInput) error {
	_, err := snsc(ctx).Publish(ctx, in)
	return err
}

// missingTopicARN is the ARN of a topic of this run that does not exist.
func missingTopicARN(ctx context.Context) string {
	GinkgoHelper()
	arn := createTopic(ctx, "exists", nil)
	return arn[:strings.LastIndex(arn, ":")+1] + queueName("missing")
}

var _ = Describe("SNS topics", Label("sns-core"), func() {
	It("creates a topic idempotently: the same name answers the same ARN", func(ctx SpecContext) {
		// API_CreateTopic: "This action is idempotent".
		name := queueName("idem")
		a, err := snsc(ctx).CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String(name)})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func(ctx SpecContext) {
			_, _ = snsc(ctx).DeleteTopic(ctx, &sns.DeleteTopicInput{TopicArn: a.TopicArn})
		})
		b, err := snsc(ctx).CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String(name)})
		Expect(err).NotTo(HaveOccurred())
		Expect(aws.ToString(b.TopicArn)).To(Equal(aws.ToString(a.TopicArn)))
		Expect(aws.ToString(a.TopicArn)).To(MatchRegexp(`^arn:aws:sns:%s:\d{12}:%s$`, region, name))
	})

	It("refuses to re-create a topic with different attributes", Label("errors"), func(ctx SpecContext) {
		// Recorded from AWS (spec sns.md, CreateTopic row; localstack's test_sns snapshot).
		arn := createTopic(ctx, "diff", map[string]string{"DisplayName": "one"})
		name := arn[strings.LastIndex(arn, ":")+1:]
		_, err := snsc(ctx).CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String(name), Attributes: map[string]string{"DisplayName": "two"}})
		Expect(err).To(BeAWSError(http.StatusBadRequest, "InvalidParameter", "Invalid parameter: Attributes Reason: Topic already exists with different attributes"))
	})

	DescribeTable("refuses a bad topic name with InvalidParameter", Label("errors"),
		// API_CreateTopic: 1-256 alphanumerics, hyphens and underscores
		// (.fifo for FIFO topics); AWS answers "Invalid parameter: Topic
		// Name" (spec sns.md; the same text in AWS errors quoted by users of the Java SDK).
		func(ctx SpecContext, name string) {
			_, err := snsc(ctx).CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String(name)})
			Expect(err).To(BeAWSError(http.StatusBadRequest, "InvalidParameter", "Invalid parameter: Topic Name"))
		},
		Entry("with a space", "bad name"),
		Entry("with a dot", "bad.name"),
		Entry("of 257 characters", strings.Repeat("t", 257)),
		Entry("with .fifo but no FifoTopic", "plain-topic.fifo"),
	)

	It("reports AWS's default attributes for a new topic", func(ctx SpecContext) {
		// Recorded default set (spec sns.md §3, from localstack's test_sns snapshot):
		// DisplayName "", counters "0", Owner, Policy, EffectiveDeliveryPolicy.
		arn := createTopic(ctx, "defaults", nil)
		attrs := topicAttributes(ctx, arn)
		Expect(attrs).To(HaveKeyWithValue("TopicArn", arn))
		Expect(attrs).To(HaveKeyWithValue("DisplayName", ""))
		Expect(attrs).To(HaveKeyWithValue("SubscriptionsConfirmed", "0"))
		Expect(attrs).To(HaveKeyWithValue("SubscriptionsPending", "0"))
		Expect(attrs).To(HaveKeyWithValue("SubscriptionsDeleted", "0"))
		Expect(attrs["Owner"]).To(MatchRegexp(`^\d{12}$`))
		Expect(attrs).To(HaveKey("Policy"))
		Expect(attrs).To(HaveKey("EffectiveDeliveryPolicy"))
		Expect(attrs).NotTo(HaveKey("FifoTopic"))
	})

	It("has a default Policy allowing the owner's account the topic actions", func(ctx SpecContext) {
		// Recorded default policy: Version 2008-10-17, __default_policy_ID,
		// condition AWS:SourceOwner = the account.
		arn := createTopic(ctx, "policy", nil)
		attrs := topicAttributes(ctx, arn)
		var p struct {
			Version, Id string
			Statement   []struct {
				Sid, Effect, Resource string
				Action                []string
				Condition             map[string]map[string]string
			}
		}
		Expect(json.Unmarshal([]byte(attrs["Policy"]), &p)).To(Succeed())
		Expect(p.Version).To(Equal("2008-10-17"))
		Expect(p.Id).To(Equal("__default_policy_ID"))
		Expect(p.Statement).To(HaveLen(1))
		Expect(p.Statement[0].Sid).To(Equal("__default_statement_ID"))
		Expect(p.Statement[0].Resource).To(Equal(arn))
		Expect(p.Statement[0].Action).To(ContainElements("SNS:Publish", "SNS:Subscribe", "SNS:GetTopicAttributes"))
		Expect(p.Statement[0].Condition["StringEquals"]).To(HaveKeyWithValue("AWS:SourceOwner", attrs["Owner"]))
	})

	It("sets and reads DisplayName", func(ctx SpecContext) {
		arn := createTopic(ctx, "display", nil)
		_, err := snsc(ctx).SetTopicAttributes(ctx, &sns.SetTopicAttributesInput{TopicArn: aws.String(arn), AttributeName: aws.String("DisplayName"), AttributeValue: aws.String("Orders")})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() map[string]string { return topicAttributes(ctx, arn) }).WithContext(ctx).Should(HaveKeyWithValue("DisplayName", "Orders"))
	})

	It("refuses an unknown topic attribute name", Label("errors"), func(ctx SpecContext) {
		// API_SetTopicAttributes lists the valid names; AWS answers
		// "Invalid parameter: AttributeName" (spec sns.md, Get/SetSubscriptionAttributes row).
		arn := createTopic(ctx, "unknown-attr", nil)
		_, err := snsc(ctx).SetTopicAttributes(ctx, &sns.SetTopicAttributesInput{TopicArn: aws.String(arn), AttributeName: aws.String("Colour"), AttributeValue: aws.String("blue")})
		Expect(err).To(BeAWSError(http.StatusBadRequest, "InvalidParameter", "Invalid parameter: AttributeName"))
	})

	It("answers NotFound with HTTP 404 for the attributes of a missing topic", Label("errors"), func(ctx SpecContext) {
		// API_GetTopicAttributes: NotFound, 404.
		_, err := snsc(ctx).GetTopicAttributes(ctx, &sns.GetTopicAttributesInput{TopicArn: aws.String(missingTopicARN(ctx))})
		Expect(err).To(BeAWSError(http.StatusNotFound, "NotFound", "Topic does not exist"))
	})

	It("deletes a missing topic without an error", func(ctx SpecContext) {
		// API_DeleteTopic is idempotent (spec sns.md, DeleteTopic row).
		_, err := snsc(ctx).DeleteTopic(ctx, &sns.DeleteTopicInput{TopicArn: aws.String(missingTopicARN(ctx))})
		Expect(err).NotTo(HaveOccurred())
	})

	It("lists a new topic in ListTopics", func(ctx SpecContext) {
		arn := createTopic(ctx, "listed", nil)
		Eventually(func(g Gomega) {
			var all []string
			p := sns.NewListTopicsPaginator(snsc(ctx), &sns.ListTopicsInput{})
			for p.HasMorePages() {
				out, err := p.NextPage(ctx)
				g.Expect(err).NotTo(HaveOccurred())
				for _, t := range out.Topics {
					all = append(all, aws.ToString(t.TopicArn))
				}
			}
			g.Expect(all).To(ContainElement(arn))
		}).WithContext(ctx).Should(Succeed())
	})

	It("tags a topic, lists and removes its tags", func(ctx SpecContext) {
		// API_TagResource / API_ListTagsForResource / API_UntagResource.
		arn := createTopic(ctx, "tags", nil)
		_, err := snsc(ctx).TagResource(ctx, &sns.TagResourceInput{ResourceArn: aws.String(arn), Tags: []snstypes.Tag{
			{Key: aws.String("team"), Value: aws.String("orders")}, {Key: aws.String("env"), Value: aws.String("test")},
		}})
		Expect(err).NotTo(HaveOccurred())
		tags := func() map[string]string {
			out, err := snsc(ctx).ListTagsForResource(ctx, &sns.ListTagsForResourceInput{ResourceArn: aws.String(arn)})
			Expect(err).NotTo(HaveOccurred())
			m := map[string]string{}
			for _, t := range out.Tags {
				m[aws.ToString(t.Key)] = aws.ToString(t.Value)
			}
			return m
		}
		Expect(tags()).To(Equal(map[string]string{"team": "orders", "env": "test"}))
		_, err = snsc(ctx).UntagResource(ctx, &sns.UntagResourceInput{ResourceArn: aws.String(arn), TagKeys: []string{"env"}})
		Expect(err).NotTo(HaveOccurred())
		Expect(tags()).To(Equal(map[string]string{"team": "orders"}))
	})

	It("refuses a second permission statement with the same label", Label("errors"), func(ctx SpecContext) {
		// Recorded: "Invalid parameter: Statement already exists".
		arn := createTopic(ctx, "perm", nil)
		add := func() error {
			_, err := snsc(ctx).AddPermission(ctx, &sns.AddPermissionInput{TopicArn: aws.String(arn), Label: aws.String("pub"),
				AWSAccountId: []string{"111122223333"}, ActionName: []string{"Publish"}})
			return err
		}
		Expect(add()).To(Succeed())
		Expect(add()).To(BeAWSError(http.StatusBadRequest, "InvalidParameter", "Invalid parameter: Statement already exists"))
		_, err := snsc(ctx).RemovePermission(ctx, &sns.RemovePermissionInput{TopicArn: aws.String(arn), Label: aws.String("pub")})
		Expect(err).NotTo(HaveOccurred())
	})

	Describe("over the Query protocol", Label("sns-query"), func() {
		It("answers CreateTopic in <CreateTopicResult><TopicArn>", func(ctx SpecContext) {
			// API_CreateTopic example response.
			name := queueName("q-topic")
			a := snsQuery(ctx, "CreateTopic", "Name", name)
			Expect(a).To(BeQuerySuccess("CreateTopic"), a.Raw)
			arn := a.Result("CreateTopic").Get("TopicArn")
			DeferCleanup(func(ctx SpecContext) { snsQuery(ctx, "DeleteTopic", "TopicArn", arn) })
			Expect(arn).To(HaveSuffix(":" + name))
			Expect(a.Raw).To(ContainSubstring(`xmlns="http://sns.amazonaws.com/doc/2010-03-31/"`))
			Expect(a.Root.Get("ResponseMetadata", "RequestId")).NotTo(BeEmpty())
		})

		It("answers GetTopicAttributes as <Attributes><entry><key/><value/></entry>", func(ctx SpecContext) {
			arn := createTopic(ctx, "q-attrs", nil)
			a := snsQuery(ctx, "GetTopicAttributes", "TopicArn", arn)
			Expect(a).To(BeQuerySuccess("GetTopicAttributes"))
			Expect(a.Result("GetTopicAttributes").Child("Attributes").Pairs("entry", "key", "value")).To(HaveKeyWithValue("TopicArn", arn))
		})

		It("answers a missing topic with an ErrorResponse of type Sender, code NotFound, HTTP 404", Label("errors"), func(ctx SpecContext) {
			a := snsQuery(ctx, "GetTopicAttributes", "TopicArn", missingTopicARN(ctx))
			Expect(a).To(BeQueryError(http.StatusNotFound, "NotFound", "Sender", "Topic does not exist"))
		})

		It("reads Attributes.entry.N on CreateTopic", func(ctx SpecContext) {
			name := queueName("q-entry")
			a := snsQuery(ctx, "CreateTopic", "Name", name, "Attributes.entry.1.key", "DisplayName", "Attributes.entry.1.value", "Shown")
			Expect(a).To(BeQuerySuccess("CreateTopic"), a.Raw)
			arn := a.Result("CreateTopic").Get("TopicArn")
			DeferCleanup(func(ctx SpecContext) { snsQuery(ctx, "DeleteTopic", "TopicArn", arn) })
			Expect(topicAttributes(ctx, arn)).To(HaveKeyWithValue("DisplayName", "Shown"))
		})

		It("answers Publish with a <MessageId>", func(ctx SpecContext) {
			arn := createTopic(ctx, "q-pub", nil)
			a := snsQuery(ctx, "Publish", "TopicArn", arn, "Message", "hello",
				"MessageAttributes.entry.1.Name", "k", "MessageAttributes.entry.1.Value.DataType", "String", "MessageAttributes.entry.1.Value.StringValue", "v")
			Expect(a).To(BeQuerySuccess("Publish"), a.Raw)
			Expect(a.Result("Publish").Get("MessageId")).To(MatchRegexp(`^[0-9a-f-]{36}$`))
		})

		It("refuses an unknown action with InvalidAction", Label("errors"), func(ctx SpecContext) {
			a := snsQuery(ctx, "FlyToTheMoon")
			Expect(a.Status).To(Equal(http.StatusBadRequest))
			Expect(a.Code()).To(Equal("InvalidAction"))
		})
	})
})

var _ = Describe("SNS subscriptions", Label("sns-core"), func() {
	It("confirms an SQS subscription at once and reports its attributes", func(ctx SpecContext) {
		// Recorded (spec sns.md, Subscribe row and §4): sqs subscriptions
		// in the same account are confirmed, authenticated, not raw.
		topic := createTopic(ctx, "sub-attrs", nil)
		q, sub := subscribedQueue(ctx, topic, "sub-attrs", nil, nil)
		attrs := subscriptionAttributes(ctx, sub)
		Expect(attrs).To(HaveKeyWithValue("SubscriptionArn", sub))
		Expect(attrs).To(HaveKeyWithValue("TopicArn", topic))
		Expect(attrs).To(HaveKeyWithValue("Protocol", "sqs"))
		Expect(attrs).To(HaveKeyWithValue("Endpoint", q.ARN))
		Expect(attrs).To(HaveKeyWithValue("PendingConfirmation", "false"))
		Expect(attrs).To(HaveKeyWithValue("ConfirmationWasAuthenticated", "true"))
		Expect(attrs).To(HaveKeyWithValue("RawMessageDelivery", "false"))
		Expect(attrs["Owner"]).To(MatchRegexp(`^\d{12}$`))
		Expect(sub).To(HavePrefix(topic + ":"))
		Expect(attrs).NotTo(HaveKey("FilterPolicy"))
	})

	It("answers the same ARN for the same topic, protocol and endpoint", func(ctx SpecContext) {
		// API_Subscribe is idempotent for equal attributes.
		topic := createTopic(ctx, "sub-idem", nil)
		q, sub := subscribedQueue(ctx, topic, "sub-idem", nil, nil)
		out, err := snsc(ctx).Subscribe(ctx, &sns.SubscribeInput{TopicArn: aws.String(topic), Protocol: aws.String("sqs"), Endpoint: aws.String(q.ARN), ReturnSubscriptionArn: true})
		Expect(err).NotTo(HaveOccurred())
		Expect(aws.ToString(out.SubscriptionArn)).To(Equal(sub))
	})

	It("refuses the same subscription with different attributes", Label("errors"), func(ctx SpecContext) {
		// Recorded (spec sns.md, Subscribe row).
		topic := createTopic(ctx, "sub-diff", nil)
		q, _ := subscribedQueue(ctx, topic, "sub-diff", nil, nil)
		_, err := snsc(ctx).Subscribe(ctx, &sns.SubscribeInput{TopicArn: aws.String(topic), Protocol: aws.String("sqs"), Endpoint: aws.String(q.ARN),
			Attributes: map[string]string{"RawMessageDelivery": "true"}})
		Expect(err).To(BeAWSError(http.StatusBadRequest, "InvalidParameter", "Invalid parameter: Attributes Reason: Subscription already exists with different attributes"))
	})

	It("refuses an unknown protocol", Label("errors"), func(ctx SpecContext) {
		// Recorded (spec sns.md, Subscribe row).
		topic := createTopic(ctx, "sub-proto", nil)
		_, err := snsc(ctx).Subscribe(ctx, &sns.SubscribeInput{TopicArn: aws.String(topic), Protocol: aws.String("carrier-pigeon"), Endpoint: aws.String("coop")})
		Expect(err).To(BeAWSError(http.StatusBadRequest, "InvalidParameter", "Invalid parameter: Amazon SNS does not support this protocol string: carrier-pigeon"))
	})

	It("refuses an sqs endpoint that is not a queue ARN", Label("errors"), func(ctx SpecContext) {
		// Recorded (spec sns.md, Subscribe row): "Invalid parameter: SQS endpoint ARN".
		topic := createTopic(ctx, "sub-url", nil)
		q := createQueue(ctx, "sub-url", nil)
		_, err := snsc(ctx).Subscribe(ctx, &sns.SubscribeInput{TopicArn: aws.String(topic), Protocol: aws.String("sqs"), Endpoint: aws.String(q.URL)})
		Expect(err).To(BeAWSError(http.StatusBadRequest, "InvalidParameter", "Invalid parameter: SQS endpoint ARN"))
	})

	It("refuses an http endpoint that does not match the protocol", Label("errors"), func(ctx SpecContext) {
		// Recorded: "Invalid parameter: Endpoint must match the specified protocol".
		topic := createTopic(ctx, "sub-http", nil)
		_, err := snsc(ctx).Subscribe(ctx, &sns.SubscribeInput{TopicArn: aws.String(topic), Protocol: aws.String("http"), Endpoint: aws.String("https://example.com/hook")})
		Expect(err).To(BeAWSError(http.StatusBadRequest, "InvalidParameter", "Invalid parameter: Endpoint must match the specified protocol"))
	})

	It("refuses a FIFO queue on a standard topic", Label("errors", "sns-fifo"), func(ctx SpecContext) {
		// Recorded (spec sns.md, Subscribe row): the
		// message repeats "Invalid parameter: ".
		topic := createTopic(ctx, "sub-fifo", nil)
		out, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(queueName("sub-fifo") + ".fifo"), Attributes: map[string]string{"FifoQueue": "true"}})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func(ctx SpecContext) { deleteQuietly(ctx, client, aws.ToString(out.QueueUrl)) })
		arn := queueAttrsOf(ctx, aws.ToString(out.QueueUrl))["QueueArn"]
		_, err = snsc(ctx).Subscribe(ctx, &sns.SubscribeInput{TopicArn: aws.String(topic), Protocol: aws.String("sqs"), Endpoint: aws.String(arn)})
		Expect(err).To(BeAWSError(http.StatusBadRequest, "InvalidParameter", "Invalid parameter: Invalid parameter: Endpoint Reason: FIFO SQS Queues can not be subscribed to standard SNS topics"))
	})

	It("answers NotFound when subscribing to a missing topic", Label("errors"), func(ctx SpecContext) {
		q := createQueue(ctx, "sub-notopic", nil)
		_, err := snsc(ctx).Subscribe(ctx, &sns.SubscribeInput{TopicArn: aws.String(missingTopicARN(ctx)), Protocol: aws.String("sqs"), Endpoint: aws.String(q.ARN)})
		Expect(err).To(BeAWSError(http.StatusNotFound, "NotFound", "Topic does not exist"))
	})

	It("lists a topic's subscriptions, and answers NotFound for a missing topic", func(ctx SpecContext) {
		topic := createTopic(ctx, "sub-list", nil)
		q, sub := subscribedQueue(ctx, topic, "sub-list", nil, nil)
		Eventually(func(g Gomega) {
			out, err := snsc(ctx).ListSubscriptionsByTopic(ctx, &sns.ListSubscriptionsByTopicInput{TopicArn: aws.String(topic)})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(out.Subscriptions).To(HaveLen(1))
			s := out.Subscriptions[0]
			g.Expect(aws.ToString(s.SubscriptionArn)).To(Equal(sub))
			g.Expect(aws.ToString(s.Protocol)).To(Equal("sqs"))
			g.Expect(aws.ToString(s.Endpoint)).To(Equal(q.ARN))
			g.Expect(aws.ToString(s.TopicArn)).To(Equal(topic))
		}).WithContext(ctx).Should(Succeed())
		_, err := snsc(ctx).ListSubscriptionsByTopic(ctx, &sns.ListSubscriptionsByTopicInput{TopicArn: aws.String(missingTopicARN(ctx))})
		Expect(err).To(BeAWSError(http.StatusNotFound, "NotFound", "Topic does not exist"))
	})

	It("refuses a malformed subscription ARN on Unsubscribe", Label("errors"), func(ctx SpecContext) {
		// Recorded (spec sns.md, Unsubscribe row).
		_, err := snsc(ctx).Unsubscribe(ctx, &sns.UnsubscribeInput{SubscriptionArn: aws.String("randomstring")})
		Expect(err).To(BeAWSError(http.StatusBadRequest, "InvalidParameter", "Invalid parameter: SubscriptionArn Reason: An ARN must have at least 6 elements, not 1"))
	})

	It("answers NotFound for the attributes of a deleted subscription", Label("errors"), func(ctx SpecContext) {
		// API_GetSubscriptionAttributes: NotFound, 404.
		topic := createTopic(ctx, "sub-gone", nil)
		_, sub := subscribedQueue(ctx, topic, "sub-gone", nil, nil)
		_, err := snsc(ctx).Unsubscribe(ctx, &sns.UnsubscribeInput{SubscriptionArn: aws.String(sub)})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() error {
			_, err := snsc(ctx).GetSubscriptionAttributes(ctx, &sns.GetSubscriptionAttributesInput{SubscriptionArn: aws.String(sub)})
			return err
		}).WithContext(ctx).Should(BeAWSError(http.StatusNotFound, "NotFound", "Subscription does not exist"))
	})

	It("refuses a RawMessageDelivery that is not true or false", Label("errors", "sns-raw"), func(ctx SpecContext) {
		// Recorded: test_validate_set_sub_attributes.
		topic := createTopic(ctx, "sub-raw", nil)
		_, sub := subscribedQueue(ctx, topic, "sub-raw", nil, nil)
		_, err := snsc(ctx).SetSubscriptionAttributes(ctx, &sns.SetSubscriptionAttributesInput{SubscriptionArn: aws.String(sub), AttributeName: aws.String("RawMessageDelivery"), AttributeValue: aws.String("yes")})
		Expect(err).To(BeAWSError(http.StatusBadRequest, "InvalidParameter", "Invalid parameter: RawMessageDelivery: Invalid value [yes]. Must be true or false."))
	})

	It("refuses an unknown subscription attribute name", Label("errors"), func(ctx SpecContext) {
		// Recorded: test_validate_set_sub_attributes, "Invalid parameter: AttributeName".
		topic := createTopic(ctx, "sub-unknown", nil)
		_, sub := subscribedQueue(ctx, topic, "sub-unknown", nil, nil)
		_, err := snsc(ctx).SetSubscriptionAttributes(ctx, &sns.SetSubscriptionAttributesInput{SubscriptionArn: aws.String(sub), AttributeName: aws.String("Colour"), AttributeValue: aws.String("blue")})
		Expect(err).To(BeAWSError(http.StatusBadRequest, "InvalidParameter", "Invalid parameter: AttributeName"))
	})

	It("reports FilterPolicyScope only once a FilterPolicy is set", Label("sns-filter"), func(ctx SpecContext) {
		// Recorded: test_filter_policy... subscription attributes.
		topic := createTopic(ctx, "sub-scope", nil)
		_, sub := subscribedQueue(ctx, topic, "sub-scope", nil, nil)
		Expect(subscriptionAttributes(ctx, sub)).NotTo(HaveKey("FilterPolicyScope"))
		_, err := snsc(ctx).SetSubscriptionAttributes(ctx, &sns.SetSubscriptionAttributesInput{SubscriptionArn: aws.String(sub), AttributeName: aws.String("FilterPolicy"), AttributeValue: aws.String(`{"a":["b"]}`)})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() map[string]string { return subscriptionAttributes(ctx, sub) }).WithContext(ctx).Should(And(
			HaveKeyWithValue("FilterPolicy", `{"a":["b"]}`), HaveKeyWithValue("FilterPolicyScope", "MessageAttributes")))
	})

	It("refuses a FilterPolicyScope other than MessageAttributes or MessageBody", Label("errors", "sns-filter"), func(ctx SpecContext) {
		// Recorded (spec filter-policy §5): "Invalid parameter:
		// FilterPolicyScope: Invalid value [RandomValue]. Please use either
		// MessageBody or MessageAttributes".
		topic := createTopic(ctx, "sub-badscope", nil)
		_, sub := subscribedQueue(ctx, topic, "sub-badscope", nil, nil)
		_, err := snsc(ctx).SetSubscriptionAttributes(ctx, &sns.SetSubscriptionAttributesInput{SubscriptionArn: aws.String(sub), AttributeName: aws.String("FilterPolicyScope"), AttributeValue: aws.String("RandomValue")})
		Expect(err).To(BeAWSError(http.StatusBadRequest, "InvalidParameter", "Invalid parameter: FilterPolicyScope: Invalid value [RandomValue]. Please use either MessageBody or MessageAttributes"))
	})
})

var _ = Describe("SNS Publish", Label("sns-core"), func() {
	It("refuses an empty message", Label("errors"), func(ctx SpecContext) {
		// Recorded (spec sns.md, Publish row): "Invalid parameter: Empty message".
		topic := createTopic(ctx, "pub-empty", nil)
		Expect(publishErr(ctx, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("")})).To(
			BeAWSError(http.StatusBadRequest, "InvalidParameter", "Invalid parameter: Empty message"))
	})

	It("refuses a message over 262144 bytes", Label("errors"), func(ctx SpecContext) {
		// API_Publish: at most 256 KiB; recorded "Invalid parameter: Message too long".
		topic := createTopic(ctx, "pub-long", nil)
		Expect(publishErr(ctx, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String(strings.Repeat("x", 262145))})).To(
			BeAWSError(http.StatusBadRequest, "InvalidParameter", "Invalid parameter: Message too long"))
	})

	It("accepts a message of exactly 262144 bytes", func(ctx SpecContext) {
		topic := createTopic(ctx, "pub-max", nil)
		Expect(publishErr(ctx, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String(strings.Repeat("x", 262144))})).To(Succeed())
	})

	It("answers NotFound for a missing topic", Label("errors"), func(ctx SpecContext) {
		Expect(publishErr(ctx, &sns.PublishInput{TopicArn: aws.String(missingTopicARN(ctx)), Message: aws.String("x")})).To(
			BeAWSError(http.StatusNotFound, "NotFound", "Topic does not exist"))
	})

	It("refuses an empty Subject", Label("errors"), func(ctx SpecContext) {
		// API_Publish: Subject must not be empty; recorded "Invalid parameter: Subject".
		topic := createTopic(ctx, "pub-subject", nil)
		Expect(publishErr(ctx, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("x"), Subject: aws.String("")})).To(
			BeAWSError(http.StatusBadRequest, "InvalidParameter", "Invalid parameter: Subject"))
	})

	It("refuses a Subject with a line break", Label("errors"), func(ctx SpecContext) {
		// API_Publish: no line breaks or control characters. The message is
		// only known for an empty Subject, so its start is checked.
		topic := createTopic(ctx, "pub-subject-nl", nil)
		Expect(publishErr(ctx, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("x"), Subject: aws.String("two\nlines")})).To(
			BeAWSError(http.StatusBadRequest, "InvalidParameter", HavePrefix("Invalid parameter: Subject")))
	})

	It("accepts the topic's ARN as TargetArn", func(ctx SpecContext) {
		// API_Publish: TargetArn may name a topic.
		topic := createTopic(ctx, "pub-target", nil)
		out, err := snsc(ctx).Publish(ctx, &sns.PublishInput{TargetArn: aws.String(topic), Message: aws.String("x")})
		Expect(err).NotTo(HaveOccurred())
		Expect(aws.ToString(out.MessageId)).To(MatchRegexp(`^[0-9a-f-]{36}$`))
	})

	It("refuses a MessageDeduplicationId on a standard topic", Label("errors"), func(ctx SpecContext) {
		// Recorded (spec sns.md §5, Standard topic row).
		topic := createTopic(ctx, "pub-dedup", nil)
		Expect(publishErr(ctx, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("x"), MessageDeduplicationId: aws.String("d")})).To(
			BeAWSError(http.StatusBadRequest, "InvalidParameter", "Invalid parameter: MessageDeduplicationId Reason: The request includes MessageDeduplicationId parameter that is not valid for this topic type"))
	})

	DescribeTable("refuses malformed message attributes with ParameterValueInvalid", Label("errors"),
		// Recorded (spec sns.md §5, DataType, Value field and Name rows,
		// from localstack's test_sns snapshot) and sns-message-attributes.html.
		func(ctx SpecContext, name string, v snstypes.MessageAttributeValue, msg string) {
			topic := createTopic(ctx, "pub-attr", nil)
			err := publishErr(ctx, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("x"),
				MessageAttributes: map[string]snstypes.MessageAttributeValue{name: v}})
			Expect(err).To(BeAWSError(http.StatusBadRequest, "ParameterValueInvalid", msg))
		},
		Entry("an unknown data type", "attr1", snstypes.MessageAttributeValue{DataType: aws.String("Colour"), StringValue: aws.String("x")},
			"The message attribute 'attr1' has an invalid message attribute type, the set of supported type prefixes is Binary, Number, and String."),
		Entry("an empty String value", "attr1", snstypes.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String("")},
			"The message attribute 'attr1' must contain non-empty message attribute value for message attribute type 'String'."),
		Entry("a String without StringValue", "attr1", snstypes.MessageAttributeValue{DataType: aws.String("String"), BinaryValue: []byte("x")},
			"The message attribute 'attr1' with type 'String' must use field 'String'."),
		Entry("a Binary without BinaryValue", "attr1", snstypes.MessageAttributeValue{DataType: aws.String("Binary"), StringValue: aws.String("x")},
			"The message attribute 'attr1' with type 'Binary' must use field 'Binary'."),
		Entry("a name with a bad character", "a^b", snsAttr("x"),
			"Invalid non-alphanumeric character '#x5E' was found in the message attribute name. Can only include alphanumeric characters, hyphens, underscores, or dots."),
		Entry("a name starting with a dot", ".ab", snsAttr("x"), "Invalid message attribute name starting with character '.' was found."),
		Entry("a name ending with a dot", "ab.", snsAttr("x"), "Invalid message attribute name ending with character '.' was found."),
		Entry("a name with two dots in a row", "a..b", snsAttr("x"), "Message attribute name can not have successive '.' character."),
	)

	Describe("with MessageStructure json", func() {
		It("delivers the sqs entry to queues", func(ctx SpecContext) {
			// API_Publish: a protocol's key overrides "default".
			topic := createTopic(ctx, "ms-sqs", nil)
			q, _ := subscribedQueue(ctx, topic, "ms-sqs", nil, nil)
			deliverable(ctx, topic, q, true, nil)
			Expect(publishErr(ctx, &sns.PublishInput{TopicArn: aws.String(topic), MessageStructure: aws.String("json"),
				Message: aws.String(`{"default":"for everyone","sqs":"for queues","email":"for mail"}`)})).To(Succeed())
			Expect(texts(receiveUntil(ctx, q, true, "for queues"), true)).NotTo(ContainElement("for everyone"))
		})

		It("delivers the default entry when there is no sqs entry", func(ctx SpecContext) {
			topic := createTopic(ctx, "ms-default", nil)
			q, _ := subscribedQueue(ctx, topic, "ms-default", nil, map[string]string{"RawMessageDelivery": "true"})
			deliverable(ctx, topic, q, false, nil)
			Expect(publishErr(ctx, &sns.PublishInput{TopicArn: aws.String(topic), MessageStructure: aws.String("json"),
				Message: aws.String(`{"default":"for everyone","http":"for hooks"}`)})).To(Succeed())
			receiveUntil(ctx, q, false, "for everyone")
		})

		It("refuses a message without a default entry", Label("errors"), func(ctx SpecContext) {
			// Recorded (spec sns.md §5, MessageStructure row).
			topic := createTopic(ctx, "ms-nodefault", nil)
			Expect(publishErr(ctx, &sns.PublishInput{TopicArn: aws.String(topic), MessageStructure: aws.String("json"), Message: aws.String(`{"sqs":"x"}`)})).To(
				BeAWSError(http.StatusBadRequest, "InvalidParameter", "Invalid parameter: Message Structure - No default entry in JSON message body"))
		})

		It("refuses a message that is not JSON", Label("errors"), func(ctx SpecContext) {
			topic := createTopic(ctx, "ms-notjson", nil)
			Expect(publishErr(ctx, &sns.PublishInput{TopicArn: aws.String(topic), MessageStructure: aws.String("json"), Message: aws.String(`not json`)})).To(
				BeAWSError(http.StatusBadRequest, "InvalidParameter", "Invalid parameter: Message Structure - JSON message body failed to parse"))
		})
	})

	It("omits Subject from the envelope when none was given", func(ctx SpecContext) {
		// sns-message-and-json-formats.html: Subject appears only if given.
		topic := createTopic(ctx, "env-nosubject", nil)
		q, _ := subscribedQueue(ctx, topic, "env-nosubject", nil, nil)
		deliverable(ctx, topic, q, true, nil)
		Expect(publishErr(ctx, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("no subject")})).To(Succeed())
		msgs := receiveUntil(ctx, q, true, "no subject")
		Expect(envelope(msgs[len(msgs)-1])).NotTo(HaveKey("Subject"))
		Expect(envelope(msgs[len(msgs)-1])).NotTo(HaveKey("MessageAttributes"))
	})

	It("puts the publish's MessageId in the envelope", func(ctx SpecContext) {
		topic := createTopic(ctx, "env-id", nil)
		q, _ := subscribedQueue(ctx, topic, "env-id", nil, nil)
		deliverable(ctx, topic, q, true, nil)
		out, err := snsc(ctx).Publish(ctx, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("with id")})
		Expect(err).NotTo(HaveOccurred())
		msgs := receiveUntil(ctx, q, true, "with id")
		Expect(envelope(msgs[len(msgs)-1])).To(HaveKeyWithValue("MessageId", aws.ToString(out.MessageId)))
	})

	It("carries String.Array and custom-typed attributes in the envelope as strings", func(ctx SpecContext) {
		// sns-message-attributes.html: String.Array and Number.<custom>.
		topic := createTopic(ctx, "env-types", nil)
		q, _ := subscribedQueue(ctx, topic, "env-types", nil, nil)
		deliverable(ctx, topic, q, true, nil)
		Expect(publishErr(ctx, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("typed"), MessageAttributes: map[string]snstypes.MessageAttributeValue{
			"list":  {DataType: aws.String("String.Array"), StringValue: aws.String(`["a",1,true]`)},
			"float": {DataType: aws.String("Number.float"), StringValue: aws.String("1.5")},
		}})).To(Succeed())
		msgs := receiveUntil(ctx, q, true, "typed")
		Expect(envelope(msgs[len(msgs)-1])["MessageAttributes"]).To(Equal(map[string]any{
			"list":  map[string]any{"Type": "String.Array", "Value": `["a",1,true]`},
			"float": map[string]any{"Type": "Number.float", "Value": "1.5"},
		}))
	})
})

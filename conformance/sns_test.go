package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// SNS specs: fanout from a topic to SQS queues, as AWS delivers it. Every
// queue gets the policy AWS requires before SNS may send to it, so these
// specs hold on AWS as on fanout (where policies are only checked with
// --enforce-policies).

var (
	snsOnce   sync.Once
	snsClient *sns.Client
)

// snsc returns the SNS client of this run's target.
func snsc(ctx context.Context) *sns.Client {
	GinkgoHelper()
	snsOnce.Do(func() {
		if onAWS {
			cfg, err := config.LoadDefaultConfig(ctx)
			Expect(err).NotTo(HaveOccurred())
			snsClient = sns.NewFromConfig(cfg)
			return
		}
		snsClient = sns.NewFromConfig(sdkConfig(), func(o *sns.Options) { o.BaseEndpoint = aws.String(endpoint) })
	})
	return snsClient
}

// createTopic creates a topic named from the run's prefix (with .fifo for
// FIFO topics) and deletes it when the spec ends.
func createTopic(ctx context.Context, what string, attrs map[string]string) string {
	GinkgoHelper()
	n := queueName(what)
	if attrs["FifoTopic"] == "true" {
		n += ".fifo"
	}
	out, err := snsc(ctx).CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String(n), Attributes: attrs})
	Expect(err).NotTo(HaveOccurred())
	arn := aws.ToString(out.TopicArn)
	DeferCleanup(func(ctx SpecContext) {
		_, err := snsc(ctx).DeleteTopic(ctx, &sns.DeleteTopicInput{TopicArn: aws.String(arn)})
		Expect(err).NotTo(HaveOccurred())
	})
	return arn
}

// subscribedQueue creates a queue whose policy lets topicArn send to it and
// subscribes it with attrs. FIFO queues get the .fifo suffix.
func subscribedQueue(ctx context.Context, topicArn, what string, queueAttrs, subAttrs map[string]string) (queue, string) {
	GinkgoHelper()
	var q queue
	if queueAttrs["FifoQueue"] == "true" {
		n := queueName(what) + ".fifo"
		out, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(n), Attributes: queueAttrs})
		Expect(err).NotTo(HaveOccurred())
		url := aws.ToString(out.QueueUrl)
		DeferCleanup(func(ctx SpecContext) { deleteQuietly(ctx, client, url) })
		attrs := queueAttrsOf(ctx, url)
		q = queue{Name: n, URL: url, ARN: attrs["QueueArn"]}
	} else {
		q = createQueue(ctx, what, queueAttrs)
	}
	policy := `{"Version":"2012-10-17","Statement":[{"Sid":"topic","Effect":"Allow","Principal":{"Service":"sns.amazonaws.com"},` +
		`"Action":"sqs:SendMessage","Resource":"` + q.ARN + `","Condition":{"ArnEquals":{"aws:SourceArn":"` + topicArn + `"}}}]}`
	_, err := client.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(q.URL), Attributes: map[string]string{"Policy": policy}})
	Expect(err).NotTo(HaveOccurred())
	out, err := snsc(ctx).Subscribe(ctx, &sns.SubscribeInput{
		TopicArn: aws.String(topicArn), Protocol: aws.String("sqs"), Endpoint: aws.String(q.ARN),
		Attributes: subAttrs, ReturnSubscriptionArn: true,
	})
	Expect(err).NotTo(HaveOccurred())
	sub := aws.ToString(out.SubscriptionArn)
	DeferCleanup(func(ctx SpecContext) {
		_, err := snsc(ctx).Unsubscribe(ctx, &sns.UnsubscribeInput{SubscriptionArn: aws.String(sub)})
		var nf *snstypes.NotFoundException
		if err != nil && !errors.As(err, &nf) {
			Expect(err).NotTo(HaveOccurred())
		}
	})
	return q, sub
}

func queueAttrsOf(ctx context.Context, url string) map[string]string {
	GinkgoHelper()
	return queueAttrs(ctx, client, url, types.QueueAttributeNameQueueArn)
}

// receiveUntil receives (and deletes) from q until a message whose body (or
// enveloped Message) is last has arrived, and returns everything received.
// On AWS a new subscription or policy takes a moment to apply, so a spec
// first confirms delivery with probes (see deliverable).
func receiveUntil(ctx context.Context, q queue, enveloped bool, last string) []types.Message {
	GinkgoHelper()
	var got []types.Message
	Eventually(func(g Gomega) {
		out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(q.URL), MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
			MessageAttributeNames: []string{"All"}, MessageSystemAttributeNames: []types.MessageSystemAttributeName{"All"},
		})
		g.Expect(err).NotTo(HaveOccurred())
		for _, m := range out.Messages {
			_, err := client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(q.URL), ReceiptHandle: m.ReceiptHandle})
			g.Expect(err).NotTo(HaveOccurred())
		}
		got = append(got, out.Messages...)
		g.Expect(texts(got, enveloped)).To(ContainElement(last))
	}).WithContext(ctx).Should(Succeed())
	return got
}

// texts returns the bodies, or for enveloped messages their Message.
func texts(msgs []types.Message, enveloped bool) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = aws.ToString(m.Body)
		if enveloped {
			out[i] = envelope(m)["Message"].(string)
		}
	}
	return out
}

func envelope(m types.Message) map[string]any {
	GinkgoHelper()
	var env map[string]any
	Expect(json.Unmarshal([]byte(aws.ToString(m.Body)), &env)).To(Succeed(), "body: %s", aws.ToString(m.Body))
	return env
}

// deliverable publishes probes to topicArn until q receives one (AWS applies
// new subscriptions and filter policies within moments, fanout at once), and
// drains them.
func deliverable(ctx context.Context, topicArn string, q queue, enveloped bool, attrs map[string]snstypes.MessageAttributeValue) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		_, err := snsc(ctx).Publish(ctx, &sns.PublishInput{TopicArn: aws.String(topicArn), Message: aws.String("probe"), MessageAttributes: attrs})
		g.Expect(err).NotTo(HaveOccurred())
		out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(q.URL), MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
		g.Expect(err).NotTo(HaveOccurred())
		for _, m := range out.Messages {
			_, _ = client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(q.URL), ReceiptHandle: m.ReceiptHandle})
		}
		g.Expect(texts(out.Messages, enveloped)).To(ContainElement("probe"))
	}).WithContext(ctx).Should(Succeed())
	// Probes still in flight on AWS are told apart from a spec's messages
	// by their text.
}

func snsAttr(v string) snstypes.MessageAttributeValue {
	return snstypes.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
}

func without(list []string, drop string) []string {
	var out []string
	for _, s := range list {
		if s != drop {
			out = append(out, s)
		}
	}
	return out
}

var _ = Describe("SNS fanout to SQS", Label("sns-core"), func() {
	// Evidence: https://docs.aws.amazon.com/sns/latest/dg/sns-sqs-as-subscriber.html; https://docs.aws.amazon.com/sns/latest/dg/sns-message-and-json-formats.html.
	It("delivers one publish to three queues in signed envelopes", func(ctx SpecContext) {
		topic := createTopic(ctx, "fan", nil)
		type target struct {
			q   queue
			sub string
		}
		var targets []target
		for _, what := range []string{"fulfillment", "inventory", "email"} {
			q, sub := subscribedQueue(ctx, topic, what, nil, nil)
			targets = append(targets, target{q, sub})
		}
		for _, t := range targets {
			deliverable(ctx, topic, t.q, true, nil)
		}
		out, err := snsc(ctx).Publish(ctx, &sns.PublishInput{
			TopicArn: aws.String(topic), Subject: aws.String("Order placed"), Message: aws.String(`{"order":42}`),
			MessageAttributes: map[string]snstypes.MessageAttributeValue{"store": snsAttr("example_corp")},
		})
		Expect(err).NotTo(HaveOccurred())
		id := aws.ToString(out.MessageId)
		for _, t := range targets {
			msgs := receiveUntil(ctx, t.q, true, `{"order":42}`)
			var m types.Message
			for _, x := range msgs {
				if envelope(x)["MessageId"] == id {
					m = x
				}
			}
			env := envelope(m)
			Expect(env).To(HaveKeyWithValue("Type", "Notification"))
			Expect(env).To(HaveKeyWithValue("TopicArn", topic))
			Expect(env).To(HaveKeyWithValue("Subject", "Order placed"))
			Expect(env).To(HaveKeyWithValue("SignatureVersion", "1"))
			Expect(env["Signature"]).NotTo(BeEmpty())
			Expect(env["SigningCertURL"]).To(MatchRegexp(`/SimpleNotificationService-[0-9a-f]+\.pem$`))
			Expect(env["UnsubscribeURL"]).To(HaveSuffix("Action=Unsubscribe&SubscriptionArn=" + t.sub))
			Expect(env["Timestamp"]).To(MatchRegexp(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`))
			Expect(env["MessageAttributes"]).To(Equal(map[string]any{"store": map[string]any{"Type": "String", "Value": "example_corp"}}))
			// The envelope's fields come in AWS's order.
			body := aws.ToString(m.Body)
			var order []int
			for _, k := range []string{`"Type"`, `"MessageId"`, `"TopicArn"`, `"Subject"`, `"Message"`, `"Timestamp"`, `"SignatureVersion"`, `"Signature"`, `"SigningCertURL"`, `"UnsubscribeURL"`, `"MessageAttributes"`} {
				order = append(order, strings.Index(body, k+" : "))
			}
			Expect(order).NotTo(ContainElement(-1), "a field is missing from %s", body)
			for i := 1; i < len(order); i++ {
				Expect(order[i]).To(BeNumerically(">", order[i-1]), "field %d out of order in %s", i, body)
			}
			Expect(m.MessageAttributes).To(BeEmpty())
		}
	})

	// Evidence: https://docs.aws.amazon.com/sns/latest/dg/sns-large-payload-raw-message-delivery.html.
	It("delivers raw messages with SQS message attributes, and envelopes without", func(ctx SpecContext) {
		topic := createTopic(ctx, "raw", nil)
		raw, _ := subscribedQueue(ctx, topic, "raw", nil, map[string]string{"RawMessageDelivery": "true"})
		env, _ := subscribedQueue(ctx, topic, "env", nil, nil)
		deliverable(ctx, topic, raw, false, nil)
		deliverable(ctx, topic, env, true, nil)
		_, err := snsc(ctx).Publish(ctx, &sns.PublishInput{
			TopicArn: aws.String(topic), Message: aws.String("raw body"),
			MessageAttributes: map[string]snstypes.MessageAttributeValue{
				"store": snsAttr("example_corp"),
				"price": {DataType: aws.String("Number"), StringValue: aws.String("10.5")},
				"blob":  {DataType: aws.String("Binary"), BinaryValue: []byte{2, 3, 4}},
			},
		})
		Expect(err).NotTo(HaveOccurred())

		msgs := receiveUntil(ctx, raw, false, "raw body")
		m := msgs[len(msgs)-1]
		Expect(aws.ToString(m.Body)).To(Equal("raw body"))
		Expect(attrNames(m.MessageAttributes)).To(Equal([]string{"blob", "price", "store"}))
		Expect(aws.ToString(m.MessageAttributes["store"].DataType)).To(Equal("String"))
		Expect(aws.ToString(m.MessageAttributes["store"].StringValue)).To(Equal("example_corp"))
		Expect(aws.ToString(m.MessageAttributes["price"].DataType)).To(Equal("Number"))
		Expect(aws.ToString(m.MessageAttributes["price"].StringValue)).To(Equal("10.5"))
		Expect(m.MessageAttributes["blob"].BinaryValue).To(Equal([]byte{2, 3, 4}))
		Expect(aws.ToString(m.MD5OfMessageAttributes)).To(Equal(attributesMD5(m.MessageAttributes)))

		msgs = receiveUntil(ctx, env, true, "raw body")
		e := envelope(msgs[len(msgs)-1])
		Expect(msgs[len(msgs)-1].MessageAttributes).To(BeEmpty())
		Expect(e["MessageAttributes"]).To(Equal(map[string]any{
			"store": map[string]any{"Type": "String", "Value": "example_corp"},
			"price": map[string]any{"Type": "Number", "Value": "10.5"},
			"blob":  map[string]any{"Type": "Binary", "Value": "AgME"},
		}))
	})

	// Evidence: https://docs.aws.amazon.com/sns/latest/dg/sns-fifo-topics.html; https://docs.aws.amazon.com/sns/latest/dg/fifo-message-dedup.html.
	It("keeps a FIFO topic's order per group in a FIFO queue and deduplicates", func(ctx SpecContext) {
		topic := createTopic(ctx, "fifo", map[string]string{"FifoTopic": "true", "ContentBasedDeduplication": "true"})
		q, _ := subscribedQueue(ctx, topic, "fifo", map[string]string{"FifoQueue": "true"}, nil)
		var seqs []string
		for _, body := range []string{"first", "second", "third", "second"} {
			out, err := snsc(ctx).Publish(ctx, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String(body), MessageGroupId: aws.String("orders")})
			Expect(err).NotTo(HaveOccurred())
			Expect(aws.ToString(out.SequenceNumber)).NotTo(BeEmpty())
			seqs = append(seqs, aws.ToString(out.SequenceNumber))
		}
		// The duplicate "second" is not delivered again.
		msgs := receiveUntil(ctx, q, true, "third")
		Expect(texts(msgs, true)).To(Equal([]string{"first", "second", "third"}))
		for i, m := range msgs {
			e := envelope(m)
			Expect(e).To(HaveKeyWithValue("SequenceNumber", seqs[i]))
			Expect(m.Attributes).To(HaveKeyWithValue("MessageGroupId", "orders"))
			Expect(m.Attributes["MessageDeduplicationId"]).NotTo(BeEmpty())
		}
		expectEmpty(ctx, client, q.URL)
	})

	// Evidence: https://docs.aws.amazon.com/sns/latest/dg/sns-subscription-filter-policies.html; localstack tests/aws/services/sns/test_sns_filter_policy.snapshot.json (recorded against AWS) test_filter_policy.
	It("applies a subscription's filter policy, and delivers everything once it is removed", func(ctx SpecContext) {
		topic := createTopic(ctx, "filter", nil)
		q, sub := subscribedQueue(ctx, topic, "filtered", nil, map[string]string{
			"RawMessageDelivery": "true", "FilterPolicy": `{"store":["example_corp"]}`,
		})
		corp := map[string]snstypes.MessageAttributeValue{"store": snsAttr("example_corp")}
		deliverable(ctx, topic, q, false, corp)
		publish := func(msg string, attrs map[string]snstypes.MessageAttributeValue) {
			_, err := snsc(ctx).Publish(ctx, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String(msg), MessageAttributes: attrs})
			Expect(err).NotTo(HaveOccurred())
		}
		publish("filtered away", map[string]snstypes.MessageAttributeValue{"store": snsAttr("other")})
		publish("no attributes", nil)
		publish("matches", corp)
		Expect(without(texts(receiveUntil(ctx, q, false, "matches"), false), "probe")).To(Equal([]string{"matches"}))

		_, err := snsc(ctx).SetSubscriptionAttributes(ctx, &sns.SetSubscriptionAttributesInput{
			SubscriptionArn: aws.String(sub), AttributeName: aws.String("FilterPolicy"), AttributeValue: aws.String(""),
		})
		Expect(err).NotTo(HaveOccurred())
		attrs, err := snsc(ctx).GetSubscriptionAttributes(ctx, &sns.GetSubscriptionAttributesInput{SubscriptionArn: aws.String(sub)})
		Expect(err).NotTo(HaveOccurred())
		Expect(attrs.Attributes).NotTo(HaveKey("FilterPolicy"))
		// AWS applies the change within moments: publish until an
		// unmatched message gets through.
		Eventually(func(g Gomega) {
			publish("unfiltered", nil)
			out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(q.URL), MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(texts(out.Messages, false)).To(ContainElement("unfiltered"))
		}).WithContext(ctx).Should(Succeed())
	})

	// Evidence: https://docs.aws.amazon.com/sns/latest/dg/subscription-filter-policy-constraints.html; localstack tests/aws/services/sns/test_sns.snapshot.json (recorded against AWS) test_subscribe_invalid_filter_policy.
	It("rejects an invalid filter policy with InvalidParameter", func(ctx SpecContext) {
		topic := createTopic(ctx, "badfilter", nil)
		q := createQueue(ctx, "badfilter", nil)
		_, err := snsc(ctx).Subscribe(ctx, &sns.SubscribeInput{
			TopicArn: aws.String(topic), Protocol: aws.String("sqs"), Endpoint: aws.String(q.ARN),
			Attributes: map[string]string{"FilterPolicy": `{"store":[]}`},
		})
		Expect(err).To(BeAPIError[*snstypes.InvalidParameterException]())
		Expect(errorMessage(err)).To(Equal("Invalid parameter: Attributes Reason: FilterPolicy: Empty arrays are not allowed"))
	})

	// Evidence: https://docs.aws.amazon.com/sns/latest/api/API_GetTopicAttributes.html (NotFound).
	It("answers NotFound for a topic that does not exist", func(ctx SpecContext) {
		arn := strings.Replace(createTopic(ctx, "probe", nil), "probe", "missing", 1)
		_, err := snsc(ctx).GetTopicAttributes(ctx, &sns.GetTopicAttributesInput{TopicArn: aws.String(arn)})
		Expect(err).To(BeAPIError[*snstypes.NotFoundException]())
		Expect(errorMessage(err)).To(Equal("Topic does not exist"))
	})
})

var _ = Describe("SNS deliveries fanout counts", Label(emulatorOnly, "sns-core"), func() {
	// Evidence: https://docs.aws.amazon.com/sns/latest/dg/sns-message-delivery-retries.html (client-side errors are not retried).
	It("counts a delivery to a deleted queue as failed", func(ctx SpecContext) {
		topic := createTopic(ctx, "gone", nil)
		q, sub := subscribedQueue(ctx, topic, "gone", nil, nil)
		deleteQuietly(ctx, client, q.URL)
		_, err := snsc(ctx).Publish(ctx, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("lost")})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			for _, c := range server.Deliveries().Stats().Subscriptions {
				if c.SubscriptionArn == sub {
					g.Expect(c.Failed).To(BeEquivalentTo(1))
					return
				}
			}
			g.Expect(sub).To(BeEmpty(), "no counts for the subscription")
		}).Should(Succeed())
	})
})

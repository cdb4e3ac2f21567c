package conformance

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Delivery specs: what SNS does with a message it cannot deliver. A
// subscription's RedrivePolicy dead-letter queue gets it, with the body the
// endpoint would have received.
// https://docs.aws.amazon.com/sns/latest/dg/sns-dead-letter-queues.html

// dlqFor creates a queue that topicArn's subscriptions may dead-letter to:
// AWS requires the DLQ's policy to let SNS send to it, as for subscribed
// queues.
func dlqFor(ctx context.Context, topicArn string) queue {
	GinkgoHelper()
	q := createQueue(ctx, "dlq", nil)
	policy := `{"Version":"2012-10-17","Statement":[{"Sid":"topic","Effect":"Allow","Principal":{"Service":"sns.amazonaws.com"},` +
		`"Action":"sqs:SendMessage","Resource":"` + q.ARN + `","Condition":{"ArnEquals":{"aws:SourceArn":"` + topicArn + `"}}}]}`
	_, err := client.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(q.URL), Attributes: map[string]string{"Policy": policy}})
	Expect(err).NotTo(HaveOccurred())
	return q
}

type sqsMessage = types.Message

func redriveTo(q queue) string { return `{"deadLetterTargetArn":"` + q.ARN + `"}` }

var _ = Describe("SNS delivery failures", Label("sns-core", "sns-dlq"), func() {
	// Deleting a subscribed queue makes every delivery a client-side error
	// (NonExistentQueue), which SNS does not retry: the message goes to
	// the subscription's DLQ at once. On AWS the deletion takes a moment to
	// show, so the spec publishes until a probe arrives.
	// Evidence: https://docs.aws.amazon.com/sns/latest/dg/sns-dead-letter-queues.html.
	It("sends deliveries to a deleted queue to the subscription's DLQ, enveloped", func(ctx SpecContext) {
		topic := createTopic(ctx, "gone", nil)
		dlq := dlqFor(ctx, topic)
		q, _ := subscribedQueue(ctx, topic, "gone", nil, map[string]string{"RedrivePolicy": redriveTo(dlq)})
		_, err := client.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(q.URL)})
		Expect(err).NotTo(HaveOccurred())
		probeUntilDelivered(ctx, topic, dlq, true)
	})

	// Evidence: https://docs.aws.amazon.com/sns/latest/dg/sns-dead-letter-queues.html; localstack tests/aws/services/sns/test_sns.snapshot.json (recorded against AWS) test_redrive_policy_sqs_queue_subscription[True].
	It("keeps a raw subscription's body and message attributes in the DLQ", func(ctx SpecContext) {
		topic := createTopic(ctx, "gone-raw", nil)
		dlq := dlqFor(ctx, topic)
		q, _ := subscribedQueue(ctx, topic, "gone-raw", nil, map[string]string{"RedrivePolicy": redriveTo(dlq), "RawMessageDelivery": "true"})
		_, err := client.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(q.URL)})
		Expect(err).NotTo(HaveOccurred())
		m := probeUntilDelivered(ctx, topic, dlq, false)
		Expect(aws.ToString(m.MessageAttributes["color"].StringValue)).To(Equal("blue"))
		Expect(aws.ToString(m.MessageAttributes["color"].DataType)).To(Equal("String"))
	})

	Context("to HTTP endpoints", Label(emulatorOnly), func() {
		// Confirming an HTTP subscription needs an endpoint AWS can reach;
		// these specs run against fanout only, on its clock.
		// Evidence: https://docs.aws.amazon.com/sns/latest/dg/sns-message-delivery-retries.html; https://docs.aws.amazon.com/sns/latest/dg/SendMessageToHttp.retry.html.
		It("asks for confirmation, retries on AWS's schedule and dead-letters once the clock has moved past it", func(ctx SpecContext) {
			hook := newRecordingHook(http.StatusInternalServerError)
			topic := createTopic(ctx, "http", nil)
			dlq := dlqFor(ctx, topic)
			_, err := snsc(ctx).Subscribe(ctx, &sns.SubscribeInput{
				TopicArn: aws.String(topic), Protocol: aws.String("http"), Endpoint: aws.String(hook.URL),
				Attributes: map[string]string{"RedrivePolicy": redriveTo(dlq)},
			})
			Expect(err).NotTo(HaveOccurred())
			var token string
			Eventually(func() string { token = hook.token(); return token }).ShouldNot(BeEmpty())
			confirmed, err := snsc(ctx).ConfirmSubscription(ctx, &sns.ConfirmSubscriptionInput{TopicArn: aws.String(topic), Token: aws.String(token)})
			Expect(err).NotTo(HaveOccurred())

			_, err = snsc(ctx).Publish(ctx, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("undeliverable")})
			Expect(err).NotTo(HaveOccurred())
			// The default HTTP/S policy: 4 attempts, 20 s apart.
			advanceClock("60s")
			Expect(texts(receiveAll(ctx, dlq, 1, 30), true)).To(Equal([]string{"undeliverable"}))
			Expect(hook.notifications()).To(Equal(4))

			var out struct {
				Deliveries []struct {
					Status       string
					AttemptCount int
				}
			}
			body := adminGet("/_fanout/deliveries?type=Notification&subscription=" + aws.ToString(confirmed.SubscriptionArn))
			Expect(json.Unmarshal([]byte(body), &out)).To(Succeed())
			Expect(out.Deliveries).To(HaveLen(1))
			Expect(out.Deliveries[0].Status).To(Equal("dead-lettered"))
			Expect(out.Deliveries[0].AttemptCount).To(Equal(4))
		})
	})
})

// probeUntilDelivered publishes probes with a message attribute until one
// arrives in q, and returns it.
func probeUntilDelivered(ctx context.Context, topic string, q queue, enveloped bool) sqsMessage {
	GinkgoHelper()
	var got sqsMessage
	Eventually(func(g Gomega) {
		_, err := snsc(ctx).Publish(ctx, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("probe"),
			MessageAttributes: map[string]snstypes.MessageAttributeValue{"color": {DataType: aws.String("String"), StringValue: aws.String("blue")}}})
		g.Expect(err).NotTo(HaveOccurred())
		out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(q.URL), MaxNumberOfMessages: 1,
			WaitTimeSeconds: 1, MessageAttributeNames: []string{"All"}})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(out.Messages).NotTo(BeEmpty())
		got = out.Messages[0]
	}).WithContext(ctx).Should(Succeed())
	Expect(texts([]sqsMessage{got}, enveloped)).To(Equal([]string{"probe"}))
	return got
}

// advanceClock moves fanout's clock; the answer comes once what fell due
// has run.
func advanceClock(d string) {
	GinkgoHelper()
	resp, err := http.Post(server.URL()+"/_fanout/clock", "application/json", strings.NewReader(`{"advance":"`+d+`"}`))
	Expect(err).NotTo(HaveOccurred())
	resp.Body.Close()
	Expect(resp.StatusCode).To(Equal(http.StatusOK))
}

func adminGet(path string) string {
	GinkgoHelper()
	resp, err := http.Get(server.URL() + path)
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	return string(b)
}

// recordingHook is a local HTTP endpoint: it answers confirmations with 200
// and notifications with status, and remembers what it got.
type recordingHook struct {
	*httptest.Server
	mu     sync.Mutex
	tokens []string
	count  int
}

func newRecordingHook(status int) *recordingHook {
	h := &recordingHook{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		defer h.mu.Unlock()
		if r.Header.Get("x-amz-sns-message-type") == "SubscriptionConfirmation" {
			var m struct{ Token string }
			_ = json.Unmarshal(b, &m)
			h.tokens = append(h.tokens, m.Token)
			return
		}
		h.count++
		w.WriteHeader(status)
	}))
	DeferCleanup(h.Close)
	return h
}

func (h *recordingHook) token() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.tokens) == 0 {
		return ""
	}
	return h.tokens[0]
}

func (h *recordingHook) notifications() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.count
}

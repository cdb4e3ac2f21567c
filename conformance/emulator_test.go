package conformance

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fanout/fanout/clock"
)

// These specs check AWS behaviour over windows of time too long to wait for
// in real time, on a second fanout whose clock only moves when told. They
// describe AWS's behaviour but can only run on the emulator.
var _ = Describe("Time windows on a manual clock", Label(emulatorOnly, "sqs-standard"), func() {
	var (
		mc  *sqs.Client
		clk *clock.Manual
	)
	BeforeEach(func() { mc, clk = manualServer() })

	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_DeleteQueue.html (wait 60 seconds).
	It("refuses to re-create a queue within 60 s of deleting it with QueueDeletedRecently", func(ctx SpecContext) {
		q := createQueueOn(ctx, mc, "recreate", nil)
		_, err := mc.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(q.URL)})
		Expect(err).NotTo(HaveOccurred())

		create := func() error {
			_, err := mc.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(q.Name)})
			return err
		}
		err = create()
		Expect(err).To(BeAPIError[*types.QueueDeletedRecently]())
		Expect(err).To(HaveErrorCode("AWS.SimpleQueueService.QueueDeletedRecently"))
		Expect(errorMessage(err)).To(ContainSubstring("You must wait 60 seconds after deleting a queue"))

		clk.Advance(30 * time.Second)
		Expect(create()).To(BeAPIError[*types.QueueDeletedRecently]())

		clk.Advance(31 * time.Second)
		Expect(create()).To(Succeed())
		// The new queue starts empty and with default attributes.
		Expect(queueAttrs(ctx, mc, q.URL, types.QueueAttributeNameApproximateNumberOfMessages)).To(HaveKeyWithValue("ApproximateNumberOfMessages", "0"))
	})

	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SetQueueAttributes.html (MessageRetentionPeriod).
	It("drops messages older than MessageRetentionPeriod", func(ctx SpecContext) {
		q := createQueueOn(ctx, mc, "retention", map[string]string{"MessageRetentionPeriod": "60"})
		_, err := mc.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q.URL), MessageBody: aws.String("old")})
		Expect(err).NotTo(HaveOccurred())
		clk.Advance(30 * time.Second)
		_, err = mc.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q.URL), MessageBody: aws.String("young")})
		Expect(err).NotTo(HaveOccurred())
		Expect(queueAttrs(ctx, mc, q.URL, types.QueueAttributeNameApproximateNumberOfMessages)).To(HaveKeyWithValue("ApproximateNumberOfMessages", "2"))

		clk.Advance(31 * time.Second)
		Expect(queueAttrs(ctx, mc, q.URL, types.QueueAttributeNameApproximateNumberOfMessages)).To(HaveKeyWithValue("ApproximateNumberOfMessages", "1"))
		out, err := mc.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(q.URL), MaxNumberOfMessages: 10})
		Expect(err).NotTo(HaveOccurred())
		Expect(out.Messages).To(HaveLen(1))
		Expect(aws.ToString(out.Messages[0].Body)).To(Equal("young"))

		// Retention counts from the send, not from the receive: once the
		// visibility timeout has run out the message is past its retention.
		clk.Advance(35 * time.Second)
		Expect(queueAttrs(ctx, mc, q.URL, types.QueueAttributeNameApproximateNumberOfMessages, types.QueueAttributeNameApproximateNumberOfMessagesNotVisible)).
			To(Equal(map[string]string{"ApproximateNumberOfMessages": "0", "ApproximateNumberOfMessagesNotVisible": "0"}))
		expectEmpty(ctx, mc, q.URL)
	})

	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-visibility-timeout.html.
	It("returns a message when its visibility timeout has passed on the clock", func(ctx SpecContext) {
		q := createQueueOn(ctx, mc, "visclock", nil)
		_, err := mc.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q.URL), MessageBody: aws.String("tick")})
		Expect(err).NotTo(HaveOccurred())
		receive := func() *sqs.ReceiveMessageOutput {
			out, err := mc.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
				QueueUrl:                    aws.String(q.URL),
				MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameApproximateReceiveCount},
			})
			Expect(err).NotTo(HaveOccurred())
			return out
		}
		first := receive()
		Expect(first.Messages).To(HaveLen(1))
		Expect(queueAttrs(ctx, mc, q.URL, types.QueueAttributeNameApproximateNumberOfMessagesNotVisible)).To(HaveKeyWithValue("ApproximateNumberOfMessagesNotVisible", "1"))

		clk.Advance(29 * time.Second)
		Expect(receive().Messages).To(BeEmpty())
		clk.Advance(2 * time.Second)
		second := receive()
		Expect(second.Messages).To(HaveLen(1))
		Expect(second.Messages[0].Attributes).To(HaveKeyWithValue("ApproximateReceiveCount", "2"))

		// ChangeMessageVisibility counts the new timeout from now.
		clk.Advance(20 * time.Second)
		_, err = mc.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{
			QueueUrl: aws.String(q.URL), ReceiptHandle: second.Messages[0].ReceiptHandle, VisibilityTimeout: 60,
		})
		Expect(err).NotTo(HaveOccurred())
		clk.Advance(59 * time.Second)
		Expect(receive().Messages).To(BeEmpty())
		clk.Advance(2 * time.Second)
		Expect(receive().Messages).To(HaveLen(1))
	})

	// Evidence: localstack tests/aws/services/sqs/test_sqs.snapshot.json (recorded against AWS) (ChangeMessageVisibility after expiry answers 200).
	It("accepts ChangeMessageVisibility with a handle whose timeout has run out", func(ctx SpecContext) {
		// Recorded from AWS: the message is visible again but not yet
		// received again, and the call answers 200. What it then does to the
		// message is not pinned down, so it is not checked.
		q := createQueueOn(ctx, mc, "visrunout", nil)
		_, err := mc.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q.URL), MessageBody: aws.String("late")})
		Expect(err).NotTo(HaveOccurred())
		out, err := mc.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(q.URL)})
		Expect(err).NotTo(HaveOccurred())
		Expect(out.Messages).To(HaveLen(1))
		clk.Advance(31 * time.Second)
		_, err = mc.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{
			QueueUrl: aws.String(q.URL), ReceiptHandle: out.Messages[0].ReceiptHandle, VisibilityTimeout: 10,
		})
		Expect(err).NotTo(HaveOccurred())
	})

	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html (standard DLQs keep the original enqueue timestamp).
	It("keeps a dead-lettered message's enqueue time for retention in a standard DLQ", func(ctx SpecContext) {
		dlq := createQueueOn(ctx, mc, "dlqret", map[string]string{"MessageRetentionPeriod": "60"})
		src := createQueueOn(ctx, mc, "dlqret-src", map[string]string{
			"VisibilityTimeout": "0",
			"RedrivePolicy":     fmt.Sprintf(`{"deadLetterTargetArn":%q,"maxReceiveCount":1}`, dlq.ARN),
		})
		sent, err := mc.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(src.URL), MessageBody: aws.String("aging")})
		Expect(err).NotTo(HaveOccurred())
		receiveSys := func(url string) *sqs.ReceiveMessageOutput {
			out, err := mc.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
				QueueUrl: aws.String(url), VisibilityTimeout: 1,
				MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameSentTimestamp},
			})
			Expect(err).NotTo(HaveOccurred())
			return out
		}
		first := receiveSys(src.URL)
		Expect(first.Messages).To(HaveLen(1))
		sentAt := first.Messages[0].Attributes["SentTimestamp"]

		// Received once; 50 s later the next receive moves it to the DLQ.
		clk.Advance(50 * time.Second)
		Expect(receiveSys(src.URL).Messages).To(BeEmpty())
		Expect(queueAttrs(ctx, mc, dlq.URL, types.QueueAttributeNameApproximateNumberOfMessages)).To(HaveKeyWithValue("ApproximateNumberOfMessages", "1"))
		moved := receiveSys(dlq.URL)
		Expect(moved.Messages).To(HaveLen(1))
		Expect(aws.ToString(moved.Messages[0].MessageId)).To(Equal(aws.ToString(sent.MessageId)))
		Expect(moved.Messages[0].Attributes).To(HaveKeyWithValue("SentTimestamp", sentAt))

		// 61 s after the send it is past the DLQ's 60 s retention, though it
		// has been in the DLQ for only 11 s.
		clk.Advance(11 * time.Second)
		Expect(queueAttrs(ctx, mc, dlq.URL, types.QueueAttributeNameApproximateNumberOfMessages, types.QueueAttributeNameApproximateNumberOfMessagesNotVisible)).
			To(Equal(map[string]string{"ApproximateNumberOfMessages": "0", "ApproximateNumberOfMessagesNotVisible": "0"}))
		expectEmpty(ctx, mc, dlq.URL)
	})

	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-message-timers.html.
	It("delivers a message delayed by 900 s when the delay has passed", func(ctx SpecContext) {
		q := createQueueOn(ctx, mc, "delayclock", nil)
		_, err := mc.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q.URL), MessageBody: aws.String("slow"), DelaySeconds: 900})
		Expect(err).NotTo(HaveOccurred())
		Expect(queueAttrs(ctx, mc, q.URL, types.QueueAttributeNameApproximateNumberOfMessagesDelayed)).To(HaveKeyWithValue("ApproximateNumberOfMessagesDelayed", "1"))

		clk.Advance(899 * time.Second)
		expectEmpty(ctx, mc, q.URL)
		clk.Advance(2 * time.Second)
		Expect(queueAttrs(ctx, mc, q.URL, types.QueueAttributeNameApproximateNumberOfMessagesDelayed, types.QueueAttributeNameApproximateNumberOfMessages)).
			To(Equal(map[string]string{"ApproximateNumberOfMessagesDelayed": "0", "ApproximateNumberOfMessages": "1"}))
		out, err := mc.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(q.URL)})
		Expect(err).NotTo(HaveOccurred())
		Expect(out.Messages).To(HaveLen(1))
	})

	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_GetQueueAttributes.html.
	It("moves LastModifiedTimestamp, not CreatedTimestamp, on SetQueueAttributes", func(ctx SpecContext) {
		q := createQueueOn(ctx, mc, "modified", nil)
		stamps := func() (created, modified int64) {
			a := queueAttrs(ctx, mc, q.URL, types.QueueAttributeNameCreatedTimestamp, types.QueueAttributeNameLastModifiedTimestamp)
			var err error
			created, err = strconv.ParseInt(a["CreatedTimestamp"], 10, 64)
			Expect(err).NotTo(HaveOccurred())
			modified, err = strconv.ParseInt(a["LastModifiedTimestamp"], 10, 64)
			Expect(err).NotTo(HaveOccurred())
			return created, modified
		}
		created, modified := stamps()
		Expect(created).To(BeNumerically("~", clk.Now().Unix(), 1))
		Expect(modified).To(Equal(created))

		clk.Advance(100 * time.Second)
		_, err := mc.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(q.URL), Attributes: map[string]string{"VisibilityTimeout": "40"}})
		Expect(err).NotTo(HaveOccurred())
		created2, modified2 := stamps()
		Expect(created2).To(Equal(created))
		Expect(modified2).To(BeNumerically("~", created+100, 1))
	})

	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-short-and-long-polling.html.
	It("ends an empty long poll when WaitTimeSeconds passes on the clock", func(ctx SpecContext) {
		q := createQueueOn(ctx, mc, "pollclock", nil)
		type result struct {
			n   int
			err error
		}
		done := make(chan result, 1)
		go func() {
			defer GinkgoRecover()
			out, err := mc.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(q.URL), WaitTimeSeconds: 20})
			if err != nil {
				done <- result{err: err}
				return
			}
			done <- result{n: len(out.Messages)}
		}()
		// Real time alone does not end it.
		Consistently(done, 300*time.Millisecond).ShouldNot(Receive())
		// 20 s on the clock does. (Advance again in case the first one came
		// before the poll started waiting.)
		var r result
		Eventually(func(g Gomega) {
			clk.Advance(20 * time.Second)
			g.Expect(done).To(Receive(&r))
		}).WithContext(ctx).Should(Succeed())
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.n).To(Equal(0))
	})

	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_PurgeQueue.html.
	It("allows another PurgeQueue 60 s after the last", func(ctx SpecContext) {
		q := createQueueOn(ctx, mc, "purgeclock", nil)
		purge := func() error {
			_, err := mc.PurgeQueue(ctx, &sqs.PurgeQueueInput{QueueUrl: aws.String(q.URL)})
			return err
		}
		Expect(purge()).To(Succeed())
		clk.Advance(59 * time.Second)
		Expect(purge()).To(BeAPIError[*types.PurgeQueueInProgress]())
		clk.Advance(2 * time.Second)
		Expect(purge()).To(Succeed())
	})
})

var _ = Describe("fanout's own endpoints", Label(emulatorOnly, "admin"), func() {
	// Evidence: fanout's own admin API (README, Everything fanout adds).
	It("reports health at GET /_fanout/health", func(ctx SpecContext) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, server.URL()+"/_fanout/health", nil)
		Expect(err).NotTo(HaveOccurred())
		resp, err := http.DefaultClient.Do(req)
		Expect(err).NotTo(HaveOccurred())
		defer resp.Body.Close()
		Expect(resp.StatusCode).To(Equal(http.StatusOK))
		var health struct{ Status string }
		Expect(json.NewDecoder(resp.Body).Decode(&health)).To(Succeed())
		Expect(health.Status).To(Equal("ok"))
	})
})

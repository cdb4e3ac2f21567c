package conformance

import (
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// redrivePolicy is a RedrivePolicy value naming dlq.
func redrivePolicy(dlqArn string, maxReceiveCount int) string {
	return fmt.Sprintf(`{"deadLetterTargetArn":%q,"maxReceiveCount":%d}`, dlqArn, maxReceiveCount)
}

var _ = Describe("Dead-letter queue configuration", Label("sqs-dlq"), func() {
	setRedrive := func(ctx SpecContext, q queue, policy string) error {
		_, err := client.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{
			QueueUrl: aws.String(q.URL), Attributes: map[string]string{"RedrivePolicy": policy},
		})
		return err
	}
	noRedrive := func(ctx SpecContext, q queue) {
		GinkgoHelper()
		Expect(queueAttrs(ctx, client, q.URL, types.QueueAttributeNameAll)).NotTo(HaveKey("RedrivePolicy"))
	}

	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SetQueueAttributes.html (RedrivePolicy); localstack tests/aws/services/sqs/test_sqs.snapshot.json (recorded against AWS).
	It("refuses maxReceiveCount outside 1 to 1000 with AWS's message and accepts the bounds", func(ctx SpecContext) {
		dlq := createQueue(ctx, "rp-count-dlq", nil)
		src := createQueue(ctx, "rp-count-src", nil)
		for _, n := range []int{0, 1001} {
			raw := redrivePolicy(dlq.ARN, n)
			want := fmt.Sprintf("Value %s for parameter RedrivePolicy is invalid. Reason: Invalid value for maxReceiveCount: %d, valid values are from 1 to 1000 both inclusive.", raw, n)
			err := setRedrive(ctx, src, raw)
			Expect(err).To(HaveErrorCode("InvalidParameterValue"), "maxReceiveCount %d", n)
			Expect(errorMessage(err)).To(Equal(want))

			err = tryCreateQueue(ctx, queueName("rp-count-new"), map[string]string{"RedrivePolicy": raw})
			Expect(err).To(HaveErrorCode("InvalidParameterValue"), "maxReceiveCount %d", n)
			Expect(errorMessage(err)).To(Equal(want))
		}
		noRedrive(ctx, src)

		for _, n := range []int{1, 1000} {
			Expect(setRedrive(ctx, src, redrivePolicy(dlq.ARN, n))).To(Succeed(), "maxReceiveCount %d", n)
		}
		Eventually(func(g Gomega) {
			var rp struct {
				DeadLetterTargetArn string
				MaxReceiveCount     json.Number
			}
			g.Expect(json.Unmarshal([]byte(queueAttrs(ctx, client, src.URL, types.QueueAttributeNameRedrivePolicy)["RedrivePolicy"]), &rp)).To(Succeed())
			g.Expect(rp.DeadLetterTargetArn).To(Equal(dlq.ARN))
			g.Expect(rp.MaxReceiveCount.String()).To(Equal("1000"))
		}).WithContext(ctx).Should(Succeed())

		// An empty value removes the policy.
		Expect(setRedrive(ctx, src, "")).To(Succeed())
		Eventually(func() map[string]string {
			return queueAttrs(ctx, client, src.URL, types.QueueAttributeNameAll)
		}).WithContext(ctx).ShouldNot(HaveKey("RedrivePolicy"))
	})

	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html.
	It("refuses a dead-letter target that does not exist", func(ctx SpecContext) {
		src := createQueue(ctx, "rp-missing-src", nil)
		// A name in this run that no spec creates.
		raw := redrivePolicy(src.ARN+"-never-created", 3)
		err := setRedrive(ctx, src, raw)
		Expect(err).To(HaveErrorCode("InvalidParameterValue"))
		Expect(errorMessage(err)).To(Equal("Value " + raw + " for parameter RedrivePolicy is invalid. Reason: Dead letter target does not exist."))
		noRedrive(ctx, src)
	})

	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html (a FIFO queue's DLQ must be FIFO).
	It("refuses a dead-letter queue of the other queue type", func(ctx SpecContext) {
		stdDLQ := createQueue(ctx, "rp-type-std", nil)
		fifoDLQ := createFIFO(ctx, "rp-type-fifo", nil)
		fifoSrc := createFIFO(ctx, "rp-type-fifo-src", nil)
		stdSrc := createQueue(ctx, "rp-type-std-src", nil)
		for _, c := range []struct {
			src queue
			dlq queue
		}{{fifoSrc, stdDLQ}, {stdSrc, fifoDLQ}} {
			raw := redrivePolicy(c.dlq.ARN, 3)
			err := setRedrive(ctx, c.src, raw)
			Expect(err).To(HaveErrorCode("InvalidParameterValue"), c.src.Name)
			Expect(errorMessage(err)).To(Equal("Value " + raw + " for parameter RedrivePolicy is invalid. Reason: Dead-letter queue must be same type of queue as the source."))
			noRedrive(ctx, c.src)
		}
		// The same type is fine.
		Expect(setRedrive(ctx, fifoSrc, redrivePolicy(fifoDLQ.ARN, 3))).To(Succeed())
	})

	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SetQueueAttributes.html (RedriveAllowPolicy).
	It("lets a dead-letter queue's RedriveAllowPolicy deny all sources or allow only the ones it lists", func(ctx SpecContext) {
		// The error AWS answers a source its DLQ does not allow is not
		// recorded: these specs check that the call fails and that the
		// source gets no RedrivePolicy.
		refused := func(err error) {
			GinkgoHelper()
			Expect(err).To(HaveOccurred())
			Expect(apiError(err)).NotTo(BeNil(), "not an API error: %v", err)
		}
		allowed := createQueue(ctx, "allow-src", nil)
		other := createQueue(ctx, "allow-src", nil)

		deny := createQueue(ctx, "allow-deny", map[string]string{"RedriveAllowPolicy": `{"redrivePermission":"denyAll"}`})
		refused(setRedrive(ctx, allowed, redrivePolicy(deny.ARN, 3)))
		noRedrive(ctx, allowed)

		byQueue := createQueue(ctx, "allow-byqueue", map[string]string{
			"RedriveAllowPolicy": fmt.Sprintf(`{"redrivePermission":"byQueue","sourceQueueArns":[%q]}`, allowed.ARN),
		})
		var rap struct {
			RedrivePermission string
			SourceQueueArns   []string
		}
		Expect(json.Unmarshal([]byte(queueAttrs(ctx, client, byQueue.URL, types.QueueAttributeNameRedriveAllowPolicy)["RedriveAllowPolicy"]), &rap)).To(Succeed())
		Expect(rap.RedrivePermission).To(Equal("byQueue"))
		Expect(rap.SourceQueueArns).To(Equal([]string{allowed.ARN}))

		refused(setRedrive(ctx, other, redrivePolicy(byQueue.ARN, 3)))
		noRedrive(ctx, other)
		Expect(setRedrive(ctx, allowed, redrivePolicy(byQueue.ARN, 3))).To(Succeed())
		Eventually(func(g Gomega) {
			out, err := client.ListDeadLetterSourceQueues(ctx, &sqs.ListDeadLetterSourceQueuesInput{QueueUrl: aws.String(byQueue.URL)})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(out.QueueUrls).To(ConsistOf(allowed.URL))
		}).WithContext(ctx).Should(Succeed())

		// allowAll is the default.
		open := createQueue(ctx, "allow-all", map[string]string{"RedriveAllowPolicy": `{"redrivePermission":"allowAll"}`})
		Expect(setRedrive(ctx, other, redrivePolicy(open.ARN, 3))).To(Succeed())
	})

	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ListDeadLetterSourceQueues.html.
	It("pages ListDeadLetterSourceQueues with MaxResults and NextToken", func(ctx SpecContext) {
		dlq := createQueue(ctx, "dlq-page", nil)
		var want []string
		for range 3 {
			want = append(want, createQueue(ctx, "dlq-page-src", map[string]string{"RedrivePolicy": redrivePolicy(dlq.ARN, 5)}).URL)
		}
		Eventually(func(g Gomega) {
			var got []string
			var token *string
			for pages := 0; ; pages++ {
				g.Expect(pages).To(BeNumerically("<", 3), "more pages than expected")
				out, err := client.ListDeadLetterSourceQueues(ctx, &sqs.ListDeadLetterSourceQueuesInput{
					QueueUrl: aws.String(dlq.URL), MaxResults: aws.Int32(2), NextToken: token,
				})
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(len(out.QueueUrls)).To(BeNumerically("<=", 2))
				if pages == 0 {
					g.Expect(out.NextToken).NotTo(BeNil(), "three sources do not fit a page of two")
				}
				got = append(got, out.QueueUrls...)
				if out.NextToken == nil {
					break
				}
				token = out.NextToken
			}
			g.Expect(got).To(ConsistOf(want))
		}).WithContext(ctx).Should(Succeed())
	})
})

var _ = Describe("Dead-lettering FIFO messages", Label("sqs-dlq", "sqs-fifo"), func() {
	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html; https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/FIFO-queues-understanding-logic.html.
	It("moves a FIFO message past maxReceiveCount to a FIFO dead-letter queue and keeps the order of the rest of its group", func(ctx SpecContext) {
		dlq := createFIFO(ctx, "dlq-fifo", nil)
		// VisibilityTimeout 0: a received message is visible again at once.
		src := createFIFO(ctx, "dlq-fifo-src", map[string]string{"VisibilityTimeout": "0", "RedrivePolicy": redrivePolicy(dlq.ARN, 1)})
		var ids []string
		for i := 1; i <= 4; i++ {
			ids = append(ids, aws.ToString(sendFIFO(ctx, src, fmt.Sprintf("g-%d", i), "g", fmt.Sprintf("d-%d", i)).MessageId))
		}

		first := receiveOne(ctx, src, nil)
		Expect(aws.ToString(first.Body)).To(Equal("g-1"))
		// The next receive would be g-1's second: it goes to the DLQ and the
		// rest of the group follows in order. (Received with a timeout this
		// time, so that their handles can delete them.)
		rest := drainFIFO(ctx, src, 3, 10, 30)
		Expect(bodiesOf(rest)).To(Equal([]string{"g-2", "g-3", "g-4"}))
		Expect(idsOf(rest)).To(Equal(ids[1:]))

		var moved types.Message
		Eventually(func(g Gomega) {
			out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
				QueueUrl: aws.String(dlq.URL), MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
				MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
			})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(out.Messages).To(HaveLen(1))
			moved = out.Messages[0]
		}).WithContext(ctx).Should(Succeed())
		Expect(aws.ToString(moved.MessageId)).To(Equal(ids[0]))
		Expect(aws.ToString(moved.Body)).To(Equal("g-1"))
		Expect(moved.Attributes).To(HaveKeyWithValue("MessageGroupId", "g"))
		Expect(moved.Attributes).To(HaveKeyWithValue("DeadLetterQueueSourceArn", src.ARN))
	})
})

package conformance

import (
	"fmt"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// FIFO semantics under concurrent clients, and batch edges. Evidence:
// FIFO-queues-exactly-once-processing.html (a deduplication id is accepted
// once in 5 minutes, whoever sends it), FIFO-queues-understanding-logic.html
// (one group's messages are not returned while one of them is in flight),
// API_DeleteMessageBatch / API_ChangeMessageVisibilityBatch (per-entry
// failures answer 200 with the entry in Failed).

func fifoQueue(ctx SpecContext, what string, attrs map[string]string) queue {
	GinkgoHelper()
	if attrs == nil {
		attrs = map[string]string{}
	}
	attrs["FifoQueue"] = "true"
	out, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(queueName(what) + ".fifo"), Attributes: attrs})
	Expect(err).NotTo(HaveOccurred())
	url := aws.ToString(out.QueueUrl)
	DeferCleanup(func(ctx SpecContext) { deleteQuietly(ctx, client, url) })
	return queue{URL: url, ARN: queueAttrsOf(ctx, url)["QueueArn"]}
}

var _ = Describe("FIFO queues under concurrent clients", Label("sqs-fifo"), func() {
	It("enqueues a deduplication id sent by eight clients at once exactly once, answering all with one MessageId", func(ctx SpecContext) {
		q := fifoQueue(ctx, "conc-dedup", nil)
		var wg sync.WaitGroup
		ids := make([]string, 8)
		errs := make([]error, 8)
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer GinkgoRecover()
				defer wg.Done()
				out, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q.URL), MessageBody: aws.String(fmt.Sprintf("copy %d", i)),
					MessageGroupId: aws.String("g"), MessageDeduplicationId: aws.String("same")})
				errs[i] = err
				if err == nil {
					ids[i] = aws.ToString(out.MessageId)
				}
			}()
		}
		wg.Wait()
		for i := range 8 {
			Expect(errs[i]).NotTo(HaveOccurred())
			Expect(ids[i]).To(Equal(ids[0]))
		}
		msgs := receiveAll(ctx, q, 1, 60)
		Expect(aws.ToString(msgs[0].MessageId)).To(Equal(ids[0]))
		expectEmpty(ctx, client, q.URL)
	})

	It("gives a group's messages to one of several concurrent receivers at a time", func(ctx SpecContext) {
		q := fifoQueue(ctx, "conc-lock", map[string]string{"ContentBasedDeduplication": "true"})
		for i := range 4 {
			_, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q.URL), MessageBody: aws.String(fmt.Sprintf("m%d", i)), MessageGroupId: aws.String("g")})
			Expect(err).NotTo(HaveOccurred())
		}
		var wg sync.WaitGroup
		got := make([][]string, 4)
		for r := range 4 {
			wg.Add(1)
			go func() {
				defer GinkgoRecover()
				defer wg.Done()
				out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(q.URL), MaxNumberOfMessages: 1, VisibilityTimeout: 60, WaitTimeSeconds: emptyWait})
				Expect(err).NotTo(HaveOccurred())
				got[r] = texts(out.Messages, false)
			}()
		}
		wg.Wait()
		var all []string
		for _, g := range got {
			all = append(all, g...)
		}
		// The first message of the group went to one receiver; the group
		// then stayed locked for the others.
		Expect(all).To(Equal([]string{"m0"}))
	})

	It("keeps one group's order while another group is received concurrently", func(ctx SpecContext) {
		q := fifoQueue(ctx, "conc-groups", map[string]string{"ContentBasedDeduplication": "true"})
		for i := range 3 {
			for _, g := range []string{"a", "b"} {
				_, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q.URL), MessageBody: aws.String(fmt.Sprintf("%s%d", g, i)), MessageGroupId: aws.String(g)})
				Expect(err).NotTo(HaveOccurred())
			}
		}
		var order []string
		Eventually(func(g Gomega) {
			out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(q.URL), MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
				MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameMessageGroupId}})
			g.Expect(err).NotTo(HaveOccurred())
			for _, m := range out.Messages {
				order = append(order, aws.ToString(m.Body))
				_, err := client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(q.URL), ReceiptHandle: m.ReceiptHandle})
				g.Expect(err).NotTo(HaveOccurred())
			}
			g.Expect(order).To(HaveLen(6))
		}).WithContext(ctx).Should(Succeed())
		var a, b []string
		for _, s := range order {
			if s[0] == 'a' {
				a = append(a, s)
			} else {
				b = append(b, s)
			}
		}
		Expect(a).To(Equal([]string{"a0", "a1", "a2"}))
		Expect(b).To(Equal([]string{"b0", "b1", "b2"}))
	})
})

var _ = Describe("Batch per-entry failures", Label("sqs-standard", "sqs-batch"), func() {
	It("fails a DeleteMessageBatch entry with a malformed handle on its own", Label("errors"), func(ctx SpecContext) {
		q := createQueue(ctx, "be-del", nil)
		send(ctx, q, "x")
		m := receiveOne(ctx, q, nil)
		out, err := client.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(q.URL), Entries: []types.DeleteMessageBatchRequestEntry{
			{Id: aws.String("good"), ReceiptHandle: m.ReceiptHandle},
			{Id: aws.String("bad"), ReceiptHandle: aws.String("garbage")},
		}})
		Expect(err).NotTo(HaveOccurred())
		Expect(out.Successful).To(HaveLen(1))
		Expect(aws.ToString(out.Successful[0].Id)).To(Equal("good"))
		Expect(out.Failed).To(HaveLen(1))
		Expect(aws.ToString(out.Failed[0].Id)).To(Equal("bad"))
		Expect(aws.ToString(out.Failed[0].Code)).To(Equal("ReceiptHandleIsInvalid"))
		Expect(out.Failed[0].SenderFault).To(BeTrue())
	})

	It("fails a ChangeMessageVisibilityBatch entry with a timeout above 43200 on its own", Label("errors"), func(ctx SpecContext) {
		q := createQueue(ctx, "be-vis", nil)
		send(ctx, q, "x")
		m := receiveOne(ctx, q, nil)
		out, err := client.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: aws.String(q.URL), Entries: []types.ChangeMessageVisibilityBatchRequestEntry{
			{Id: aws.String("good"), ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 60},
			{Id: aws.String("bad"), ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 43201},
		}})
		Expect(err).NotTo(HaveOccurred())
		Expect(out.Successful).To(HaveLen(1))
		Expect(out.Failed).To(HaveLen(1))
		Expect(aws.ToString(out.Failed[0].Id)).To(Equal("bad"))
		Expect(aws.ToString(out.Failed[0].Code)).To(Equal("InvalidParameterValue"))
	})

	It("fails a SendMessageBatch entry with DelaySeconds above 900 on its own", Label("errors"), func(ctx SpecContext) {
		q := createQueue(ctx, "be-delay", nil)
		out, err := client.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(q.URL), Entries: []types.SendMessageBatchRequestEntry{
			{Id: aws.String("good"), MessageBody: aws.String("ok")},
			{Id: aws.String("bad"), MessageBody: aws.String("late"), DelaySeconds: 901},
		}})
		Expect(err).NotTo(HaveOccurred())
		Expect(out.Successful).To(HaveLen(1))
		Expect(out.Failed).To(HaveLen(1))
		Expect(aws.ToString(out.Failed[0].Code)).To(Equal("InvalidParameterValue"))
		Expect(aws.ToString(out.Failed[0].Message)).To(Equal("Value 901 for parameter DelaySeconds is invalid. Reason: DelaySeconds must be >= 0 and <= 900."))
	})

	It("accepts a batch of exactly 10 entries", func(ctx SpecContext) {
		// API_SendMessageBatch: up to 10 entries.
		q := createQueue(ctx, "be-ten", nil)
		var e []types.SendMessageBatchRequestEntry
		for i := range 10 {
			e = append(e, types.SendMessageBatchRequestEntry{Id: aws.String(fmt.Sprint(i)), MessageBody: aws.String(fmt.Sprint(i))})
		}
		out, err := client.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(q.URL), Entries: e})
		Expect(err).NotTo(HaveOccurred())
		Expect(out.Successful).To(HaveLen(10))
		receiveAll(ctx, q, 10, 60)
	})
})

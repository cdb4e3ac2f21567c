package conformance

import (
	"context"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fanout/fanout/clock"
)

// deadLetterPipeOn creates on c a dead-letter queue and a source queue whose
// messages move to it when they would be received a second time
// (maxReceiveCount 1, VisibilityTimeout 0).
func deadLetterPipeOn(ctx context.Context, c *sqs.Client, what string) (src, dlq queue) {
	GinkgoHelper()
	dlq = createQueueOn(ctx, c, what+"-dlq", nil)
	src = createQueueOn(ctx, c, what+"-src", map[string]string{"VisibilityTimeout": "0", "RedrivePolicy": redrivePolicy(dlq.ARN, 1)})
	return src, dlq
}

// deadLetterOn sends bodies to src and receives them until they are all in
// dlq. It returns the MessageIds they were sent with.
func deadLetterOn(ctx context.Context, c *sqs.Client, src, dlq queue, bodies ...string) []string {
	GinkgoHelper()
	var ids []string
	for _, b := range bodies {
		out, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(src.URL), MessageBody: aws.String(b)})
		Expect(err).NotTo(HaveOccurred())
		ids = append(ids, aws.ToString(out.MessageId))
	}
	Eventually(func(g Gomega) {
		// The first receive counts them, the second moves them.
		for range 2 {
			_, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(src.URL), MaxNumberOfMessages: 10, WaitTimeSeconds: emptyWait})
			g.Expect(err).NotTo(HaveOccurred())
		}
		out, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
			QueueUrl: aws.String(dlq.URL), AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameApproximateNumberOfMessages},
		})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(out.Attributes).To(HaveKeyWithValue("ApproximateNumberOfMessages", strconv.Itoa(len(bodies))))
	}).WithContext(ctx).Should(Succeed())
	return ids
}

// moveTasksOn lists the move tasks of source on c, newest first, up to max.
func moveTasksOn(ctx context.Context, c *sqs.Client, source string, max int32) []types.ListMessageMoveTasksResultEntry {
	GinkgoHelper()
	in := &sqs.ListMessageMoveTasksInput{SourceArn: aws.String(source)}
	if max > 0 {
		in.MaxResults = aws.Int32(max)
	}
	out, err := c.ListMessageMoveTasks(ctx, in)
	Expect(err).NotTo(HaveOccurred())
	return out.Results
}

// completedTask waits for the newest move task of source to complete having
// moved n messages, and returns it.
func completedTask(ctx context.Context, source string, n int64) types.ListMessageMoveTasksResultEntry {
	GinkgoHelper()
	var task types.ListMessageMoveTasksResultEntry
	Eventually(func(g Gomega) {
		out, err := client.ListMessageMoveTasks(ctx, &sqs.ListMessageMoveTasksInput{SourceArn: aws.String(source)})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(out.Results).To(HaveLen(1))
		task = out.Results[0]
		g.Expect(aws.ToString(task.Status)).To(Equal("COMPLETED"))
		// AWS updates the count a little after the messages have moved.
		g.Expect(task.ApproximateNumberOfMessagesMoved).To(Equal(n))
	}).WithContext(ctx).Should(Succeed())
	return task
}

func expectStartedAround(task types.ListMessageMoveTasksResultEntry, at time.Time) {
	GinkgoHelper()
	// Epoch milliseconds.
	Expect(task.StartedTimestamp).To(BeNumerically("~", at.UnixMilli(), (5 * time.Minute).Milliseconds()))
}

var _ = Describe("Message move tasks", Label("sqs-move-tasks"), func() {
	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_StartMessageMoveTask.html.
	It("refuses a source that is not a dead-letter queue and a source or destination that does not exist", func(ctx SpecContext) {
		plain := createQueue(ctx, "move-plain", nil)
		start := func(source, dest string) error {
			in := &sqs.StartMessageMoveTaskInput{SourceArn: aws.String(source)}
			if dest != "" {
				in.DestinationArn = aws.String(dest)
			}
			_, err := client.StartMessageMoveTask(ctx, in)
			return err
		}
		err := start(plain.ARN, "")
		Expect(err).To(HaveErrorCode("InvalidParameterValue"))
		Expect(errorMessage(err)).To(Equal("Source queue must be configured as a Dead Letter Queue."))

		err = start(plain.ARN+"-never-created", "")
		Expect(err).To(BeAPIError[*types.ResourceNotFoundException]())
		Expect(errorMessage(err)).To(Equal("The resource that you specified for the SourceArn parameter doesn't exist."))

		_, dlq := deadLetterPipeOn(ctx, client, "move-nodest")
		err = start(dlq.ARN, plain.ARN+"-never-created")
		Expect(err).To(BeAPIError[*types.ResourceNotFoundException]())
		Expect(errorMessage(err)).To(Equal("The resource that you specified for the DestinationArn parameter doesn't exist."))
	})

	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_StartMessageMoveTask.html; https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-configure-dead-letter-queue-redrive.html.
	It("moves messages from a dead-letter queue back to their source as new messages with the same bodies", func(ctx SpecContext) {
		src, dlq := deadLetterPipeOn(ctx, client, "move-back")
		sentIDs := deadLetterOn(ctx, client, src, dlq, "back-1", "back-2")

		before := time.Now()
		out, err := client.StartMessageMoveTask(ctx, &sqs.StartMessageMoveTaskInput{SourceArn: aws.String(dlq.ARN)})
		Expect(err).NotTo(HaveOccurred())
		Expect(aws.ToString(out.TaskHandle)).NotTo(BeEmpty())

		// Received with a timeout, not the source's 0, so that they are
		// received once.
		moved := receiveAll(ctx, src, 2, 30)
		Expect(bodiesOf(moved)).To(ConsistOf("back-1", "back-2"))
		for _, m := range moved {
			Expect(sentIDs).NotTo(ContainElement(aws.ToString(m.MessageId)))
		}
		expectEmpty(ctx, client, dlq.URL)

		task := completedTask(ctx, dlq.ARN, 2)
		// Only a running task has a handle.
		Expect(task.TaskHandle).To(BeNil())
		Expect(aws.ToString(task.SourceArn)).To(Equal(dlq.ARN))
		Expect(task.DestinationArn).To(BeNil())
		Expect(task.ApproximateNumberOfMessagesToMove).To(HaveValue(BeEquivalentTo(2)))
		Expect(task.FailureReason).To(BeNil())
		expectStartedAround(task, before)
	})

	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_StartMessageMoveTask.html (DestinationArn).
	It("moves messages to an explicit DestinationArn", func(ctx SpecContext) {
		src, dlq := deadLetterPipeOn(ctx, client, "move-dest")
		dest := createQueue(ctx, "move-dest-target", nil)
		sentIDs := deadLetterOn(ctx, client, src, dlq, "to-1", "to-2", "to-3")

		_, err := client.StartMessageMoveTask(ctx, &sqs.StartMessageMoveTaskInput{SourceArn: aws.String(dlq.ARN), DestinationArn: aws.String(dest.ARN)})
		Expect(err).NotTo(HaveOccurred())

		moved := receiveAll(ctx, dest, 3, 0)
		Expect(bodiesOf(moved)).To(ConsistOf("to-1", "to-2", "to-3"))
		for _, m := range moved {
			Expect(sentIDs).NotTo(ContainElement(aws.ToString(m.MessageId)))
		}
		expectEmpty(ctx, client, dlq.URL)
		expectEmpty(ctx, client, src.URL)

		task := completedTask(ctx, dlq.ARN, 3)
		Expect(aws.ToString(task.DestinationArn)).To(Equal(dest.ARN))
		Expect(task.ApproximateNumberOfMessagesToMove).To(HaveValue(BeEquivalentTo(3)))
	})

	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_StartMessageMoveTask.html; https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_CancelMessageMoveTask.html.
	It("allows one running task per source and cancels a running task", func(ctx SpecContext) {
		src, dlq := deadLetterPipeOn(ctx, client, "move-cancel")
		dest := createQueue(ctx, "move-cancel-target", nil)
		deadLetterOn(ctx, client, src, dlq, "c-1", "c-2", "c-3", "c-4", "c-5")

		// One a second: five messages keep it running for seconds.
		start := func() (*sqs.StartMessageMoveTaskOutput, error) {
			return client.StartMessageMoveTask(ctx, &sqs.StartMessageMoveTaskInput{
				SourceArn: aws.String(dlq.ARN), DestinationArn: aws.String(dest.ARN), MaxNumberOfMessagesPerSecond: aws.Int32(1),
			})
		}
		before := time.Now()
		out, err := start()
		Expect(err).NotTo(HaveOccurred())
		handle := aws.ToString(out.TaskHandle)

		_, err = start()
		Expect(err).To(HaveErrorCode("InvalidParameterValue"))
		Expect(errorMessage(err)).To(Equal("There is already a task running. Only one active task is allowed for a source queue arn at a given time."))

		tasks := moveTasksOn(ctx, client, dlq.ARN, 10)
		Expect(tasks).To(HaveLen(1))
		running := tasks[0]
		Expect(aws.ToString(running.Status)).To(Equal("RUNNING"))
		Expect(aws.ToString(running.TaskHandle)).To(Equal(handle))
		Expect(aws.ToString(running.SourceArn)).To(Equal(dlq.ARN))
		Expect(aws.ToString(running.DestinationArn)).To(Equal(dest.ARN))
		Expect(running.MaxNumberOfMessagesPerSecond).To(HaveValue(BeEquivalentTo(1)))
		Expect(running.ApproximateNumberOfMessagesToMove).To(HaveValue(BeEquivalentTo(5)))
		Expect(running.ApproximateNumberOfMessagesMoved).To(BeNumerically("<=", 5))
		expectStartedAround(running, before)

		cancelled, err := client.CancelMessageMoveTask(ctx, &sqs.CancelMessageMoveTaskInput{TaskHandle: aws.String(handle)})
		Expect(err).NotTo(HaveOccurred())
		Expect(cancelled.ApproximateNumberOfMessagesMoved).To(BeNumerically("<=", 5))

		// AWS passes through CANCELLING.
		Eventually(func(g Gomega) {
			tasks := moveTasksOn(ctx, client, dlq.ARN, 0)
			g.Expect(tasks).To(HaveLen(1))
			g.Expect(aws.ToString(tasks[0].Status)).To(Equal("CANCELLED"))
			g.Expect(tasks[0].TaskHandle).To(BeNil())
		}).WithContext(ctx).Should(Succeed())

		_, err = client.CancelMessageMoveTask(ctx, &sqs.CancelMessageMoveTaskInput{TaskHandle: aws.String(handle)})
		Expect(err).To(BeAPIError[*types.ResourceNotFoundException]())
		Expect(errorMessage(err)).To(Equal("Task does not exist."))
	})

	// Recorded from AWS (LocalStack's AWS-validated snapshot of
	// test_move_task_workflow_with_default_destination): a task started
	// without MaxNumberOfMessagesPerSecond is listed without one. fanout
	// lists it with its internal default, 500.
	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ListMessageMoveTasks.html.
	It("lists no MaxNumberOfMessagesPerSecond for a task started without one", func(ctx SpecContext) {
		src, dlq := deadLetterPipeOn(ctx, client, "move-norate")
		deadLetterOn(ctx, client, src, dlq, "r-1")
		_, err := client.StartMessageMoveTask(ctx, &sqs.StartMessageMoveTaskInput{SourceArn: aws.String(dlq.ARN)})
		Expect(err).NotTo(HaveOccurred())
		tasks := moveTasksOn(ctx, client, dlq.ARN, 0)
		Expect(tasks).To(HaveLen(1))
		Expect(tasks[0].MaxNumberOfMessagesPerSecond).To(BeNil())
		completedTask(ctx, dlq.ARN, 1)
	})

	Describe("on a manual clock", Label(emulatorOnly), func() {
		var (
			mc  *sqs.Client
			clk *clock.Manual
		)
		BeforeEach(func() { mc, clk = manualServer() })

		// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ListMessageMoveTasks.html; https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_StartMessageMoveTask.html.
		It("reports a task RUNNING with its TaskHandle, moving at most MaxNumberOfMessagesPerSecond, then COMPLETED", func(ctx SpecContext) {
			src, dlq := deadLetterPipeOn(ctx, mc, "move-clock")
			deadLetterOn(ctx, mc, src, dlq, "k-1", "k-2", "k-3")

			startedAt := clk.Now()
			out, err := mc.StartMessageMoveTask(ctx, &sqs.StartMessageMoveTaskInput{SourceArn: aws.String(dlq.ARN), MaxNumberOfMessagesPerSecond: aws.Int32(1)})
			Expect(err).NotTo(HaveOccurred())
			handle := aws.ToString(out.TaskHandle)

			tasks := moveTasksOn(ctx, mc, dlq.ARN, 0)
			Expect(tasks).To(HaveLen(1))
			Expect(aws.ToString(tasks[0].Status)).To(Equal("RUNNING"))
			Expect(aws.ToString(tasks[0].TaskHandle)).To(Equal(handle))
			Expect(tasks[0].ApproximateNumberOfMessagesToMove).To(HaveValue(BeEquivalentTo(3)))
			Expect(tasks[0].StartedTimestamp).To(Equal(startedAt.UnixMilli()))

			var task types.ListMessageMoveTasksResultEntry
			for second := int64(1); ; second++ {
				Expect(second).To(BeNumerically("<=", 10), "not completed after 10 s")
				clk.Advance(time.Second)
				task = moveTasksOn(ctx, mc, dlq.ARN, 0)[0]
				Expect(task.ApproximateNumberOfMessagesMoved).To(BeNumerically("<=", second), "more than one a second")
				if aws.ToString(task.Status) != "RUNNING" {
					break
				}
				Expect(aws.ToString(task.TaskHandle)).To(Equal(handle))
			}
			Expect(aws.ToString(task.Status)).To(Equal("COMPLETED"))
			Expect(task.ApproximateNumberOfMessagesMoved).To(BeEquivalentTo(3))
			Expect(task.TaskHandle).To(BeNil())
			Expect(queueAttrs(ctx, mc, src.URL, types.QueueAttributeNameApproximateNumberOfMessages)).To(HaveKeyWithValue("ApproximateNumberOfMessages", "3"))
			Expect(queueAttrs(ctx, mc, dlq.URL, types.QueueAttributeNameApproximateNumberOfMessages)).To(HaveKeyWithValue("ApproximateNumberOfMessages", "0"))
		})
	})
})

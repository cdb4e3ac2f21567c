package conformance

import (
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Message move task errors and edges. Evidence: API_StartMessageMoveTask,
// API_ListMessageMoveTasks and API_CancelMessageMoveTask (parameters and
// their ranges, errors), and AWS's answers recorded in localstack's
// test_sqs_move_task.snapshot.json (AWS-validated).
var _ = Describe("Message move task errors", Label("sqs-move-tasks"), func() {
	It("lists no tasks for a dead-letter queue that never had one", func(ctx SpecContext) {
		_, dlq := deadLetterPipeOn(ctx, client, "mt-none")
		Expect(moveTasksOn(ctx, client, dlq.ARN, 0)).To(BeEmpty())
	})

	It("refuses a SourceArn that is not an ARN with InvalidParameterValue", Label("errors"), func(ctx SpecContext) {
		// Recorded from AWS (spec sqs.md, ListMessageMoveTasks row; localstack's move-task snapshot).
		_, err := client.ListMessageMoveTasks(ctx, &sqs.ListMessageMoveTasksInput{SourceArn: aws.String("not-an-arn")})
		Expect(err).To(BeAWSError(http.StatusBadRequest, "InvalidParameterValue",
			"You must use this format to specify the SourceArn: arn:<partition>:<service>:<region>:<account-id>:<resource-id>"))
	})

	It("refuses MaxNumberOfMessagesPerSecond above 500", Label("errors"), func(ctx SpecContext) {
		// API_StartMessageMoveTask: at most 500 messages per second.
		_, dlq := deadLetterPipeOn(ctx, client, "mt-rate")
		_, err := client.StartMessageMoveTask(ctx, &sqs.StartMessageMoveTaskInput{SourceArn: aws.String(dlq.ARN), MaxNumberOfMessagesPerSecond: aws.Int32(501)})
		Expect(err).To(HaveErrorCode("InvalidParameterValue"))
		Expect(httpStatus(err)).To(Equal(http.StatusBadRequest))
	})

	It("refuses a malformed task handle on CancelMessageMoveTask", Label("errors"), func(ctx SpecContext) {
		// Recorded from AWS (spec sqs.md, CancelMessageMoveTask row).
		_, err := client.CancelMessageMoveTask(ctx, &sqs.CancelMessageMoveTaskInput{TaskHandle: aws.String("not-a-handle")})
		Expect(err).To(BeAWSError(http.StatusBadRequest, "InvalidParameterValue", "Value for parameter TaskHandle is invalid."))
	})

	It("refuses ListMessageMoveTasks MaxResults above 10", Label("errors"), func(ctx SpecContext) {
		// API_ListMessageMoveTasks: MaxResults 1 to 10.
		_, dlq := deadLetterPipeOn(ctx, client, "mt-max")
		_, err := client.ListMessageMoveTasks(ctx, &sqs.ListMessageMoveTasksInput{SourceArn: aws.String(dlq.ARN), MaxResults: aws.Int32(11)})
		Expect(err).To(HaveErrorCode("InvalidParameterValue"))
		Expect(httpStatus(err)).To(Equal(http.StatusBadRequest))
	})
})

var _ = Describe("Dead-letter queue edges", Label("sqs-dlq"), func() {
	It("accepts maxReceiveCount as a JSON string or number", func(ctx SpecContext) {
		// API_SetQueueAttributes' RedrivePolicy example gives the count as a
		// string; the developer guide's JSON as a number.
		dlq := createQueue(ctx, "edge-dlq", nil)
		for _, count := range []string{`"5"`, `7`} {
			q := createQueue(ctx, "edge-src", map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"` + dlq.ARN + `","maxReceiveCount":` + count + `}`})
			Expect(queueAttrs(ctx, client, q.URL, types.QueueAttributeNameRedrivePolicy)).To(HaveKey("RedrivePolicy"))
		}
	})

	It("removes a RedrivePolicy set to the empty string", func(ctx SpecContext) {
		// API_SetQueueAttributes: an empty value removes the policy.
		dlq := createQueue(ctx, "edge-rm-dlq", nil)
		q := createQueue(ctx, "edge-rm", map[string]string{"RedrivePolicy": redrivePolicy(dlq.ARN, 3)})
		_, err := client.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(q.URL), Attributes: map[string]string{"RedrivePolicy": ""}})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() map[string]string {
			return queueAttrs(ctx, client, q.URL, types.QueueAttributeNameAll)
		}).WithContext(ctx).ShouldNot(HaveKey("RedrivePolicy"))
	})

	It("marks a dead-lettered message with DeadLetterQueueSourceArn", func(ctx SpecContext) {
		// API_ReceiveMessage: DeadLetterQueueSourceArn, "the ARN of the
		// source queue" of a message moved to a DLQ.
		src, dlq := deadLetterPipeOn(ctx, client, "edge-src-arn")
		deadLetterOn(ctx, client, src, dlq, "moved")
		m := receiveOne(ctx, dlq, &sqs.ReceiveMessageInput{MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameDeadLetterQueueSourceArn}})
		Expect(aws.ToString(m.Body)).To(Equal("moved"))
		Expect(m.Attributes).To(HaveKeyWithValue("DeadLetterQueueSourceArn", src.ARN))
	})
})

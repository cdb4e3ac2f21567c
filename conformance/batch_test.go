package conformance

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("Batches", Label("sqs-standard", "sqs-batch"), func() {
	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessageBatch.html; https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_DeleteMessageBatch.html; https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ChangeMessageVisibilityBatch.html.
	It("sends, changes visibility of and deletes messages in batches, reporting each failed entry", func(ctx SpecContext) {
		q := createQueue(ctx, "batch", nil)

		// One entry among good ones fails on its own and the others go
		// through. A body of nothing but U+0001 has no valid character to
		// keep, so AWS rejects it with InvalidMessageContents (recorded from
		// AWS; current AWS replaces invalid characters only when at least one
		// valid character remains).
		entries := []types.SendMessageBatchRequestEntry{
			{Id: aws.String("first"), MessageBody: aws.String("body-1")},
			{Id: aws.String("second"), MessageBody: aws.String("body-2"), MessageAttributes: map[string]types.MessageAttributeValue{"k": strAttr("v")}},
			{Id: aws.String("bad"), MessageBody: aws.String("\x01")},
			{Id: aws.String("third_3"), MessageBody: aws.String("body-3")},
		}
		sent, err := client.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(q.URL), Entries: entries})
		Expect(err).NotTo(HaveOccurred())
		Expect(sent.Successful).To(HaveLen(3))
		ids := map[string]string{} // batch entry id -> message id
		for _, s := range sent.Successful {
			ids[aws.ToString(s.Id)] = aws.ToString(s.MessageId)
			want := map[string]string{"first": "body-1", "second": "body-2", "third_3": "body-3"}[aws.ToString(s.Id)]
			Expect(aws.ToString(s.MD5OfMessageBody)).To(Equal(md5Hex([]byte(want))), aws.ToString(s.Id))
		}
		Expect(ids).To(HaveKey("first"))
		Expect(ids).To(HaveKey("second"))
		Expect(ids).To(HaveKey("third_3"))
		for _, s := range sent.Successful {
			if aws.ToString(s.Id) == "second" {
				Expect(aws.ToString(s.MD5OfMessageAttributes)).To(Equal(attributesMD5(entries[1].MessageAttributes)))
			} else {
				Expect(s.MD5OfMessageAttributes).To(BeNil())
			}
		}
		Expect(sent.Failed).To(HaveLen(1))
		Expect(aws.ToString(sent.Failed[0].Id)).To(Equal("bad"))
		Expect(aws.ToString(sent.Failed[0].Code)).To(Equal("InvalidMessageContents"))
		Expect(sent.Failed[0].SenderFault).To(BeTrue())

		got := receiveAll(ctx, q, 3, 0)
		var bodies []string
		for _, m := range got {
			bodies = append(bodies, aws.ToString(m.Body))
		}
		Expect(bodies).To(ConsistOf("body-1", "body-2", "body-3"))

		// Make them visible again, with one bad handle among the good ones.
		change := []types.ChangeMessageVisibilityBatchRequestEntry{{Id: aws.String("bogus"), ReceiptHandle: aws.String("garbage"), VisibilityTimeout: 0}}
		for i, m := range got {
			change = append(change, types.ChangeMessageVisibilityBatchRequestEntry{Id: aws.String("c" + strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 0})
		}
		changed, err := client.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: aws.String(q.URL), Entries: change})
		Expect(err).NotTo(HaveOccurred())
		Expect(entryIDs(changed.Successful)).To(ConsistOf("c0", "c1", "c2"))
		Expect(changed.Failed).To(HaveLen(1))
		Expect(aws.ToString(changed.Failed[0].Id)).To(Equal("bogus"))
		Expect(aws.ToString(changed.Failed[0].Code)).To(Equal("ReceiptHandleIsInvalid"))
		Expect(changed.Failed[0].SenderFault).To(BeTrue())

		again := receiveAll(ctx, q, 3, 0)
		del := []types.DeleteMessageBatchRequestEntry{{Id: aws.String("bogus"), ReceiptHandle: aws.String("garbage")}}
		for i, m := range again {
			del = append(del, types.DeleteMessageBatchRequestEntry{Id: aws.String("d" + strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle})
		}
		deleted, err := client.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(q.URL), Entries: del})
		Expect(err).NotTo(HaveOccurred())
		Expect(entryIDs(deleted.Successful)).To(ConsistOf("d0", "d1", "d2"))
		Expect(deleted.Failed).To(HaveLen(1))
		Expect(aws.ToString(deleted.Failed[0].Id)).To(Equal("bogus"))
		Expect(aws.ToString(deleted.Failed[0].Code)).To(Equal("ReceiptHandleIsInvalid"))
		Expect(deleted.Failed[0].SenderFault).To(BeTrue())

		Eventually(func() map[string]string {
			return queueAttrs(ctx, client, q.URL, types.QueueAttributeNameApproximateNumberOfMessages, types.QueueAttributeNameApproximateNumberOfMessagesNotVisible)
		}).WithContext(ctx).Should(Equal(map[string]string{"ApproximateNumberOfMessages": "0", "ApproximateNumberOfMessagesNotVisible": "0"}))
	})

	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessageBatch.html (Id: up to 80 characters).
	It("accepts batch entry ids of up to 80 characters", func(ctx SpecContext) {
		q := createQueue(ctx, "batchid", nil)
		id := strings.Repeat("a-_9", 20)
		out, err := client.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(q.URL), Entries: []types.SendMessageBatchRequestEntry{
			{Id: aws.String(id), MessageBody: aws.String("long id")},
		}})
		Expect(err).NotTo(HaveOccurred())
		Expect(out.Successful).To(HaveLen(1))
		Expect(aws.ToString(out.Successful[0].Id)).To(Equal(id))
	})

	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessageBatch.html (BatchRequestTooLong); https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/quotas-messages.html.
	It("refuses a batch whose messages add up to more than 1048576 bytes with BatchRequestTooLong", func(ctx SpecContext) {
		q := createQueue(ctx, "batchlong", nil)
		// One entry of exactly the maximum size (body and its attribute, 8
		// bytes), and one more byte in the second: 1048577 in all. Recorded
		// from AWS as a whole-batch error.
		_, err := client.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(q.URL), Entries: []types.SendMessageBatchRequestEntry{
			{Id: aws.String("big"), MessageBody: aws.String(strings.Repeat("a", 1048576-8)), MessageAttributes: map[string]types.MessageAttributeValue{"k": strAttr("x")}},
			{Id: aws.String("small"), MessageBody: aws.String("a")},
		}})
		Expect(err).To(BeAPIError[*types.BatchRequestTooLong]())
		Expect(err).To(HaveErrorCode("AWS.SimpleQueueService.BatchRequestTooLong"))
		Expect(errorMessage(err)).To(ContainSubstring("You have sent 1048577 bytes"))
	})

	Describe("batch-level errors", func() {
		var (
			q      queue
			handle *string // a real receipt handle, so only the batch is wrong
		)
		BeforeEach(func(ctx SpecContext) {
			q = createQueue(ctx, "batcherr", nil)
			send(ctx, q, "handle")
			handle = receiveOne(ctx, q, nil).ReceiptHandle
		})

		// batchCall sends one kind of batch whose entries have the given ids.
		type batchCall func(ctx context.Context, ids []string) error
		sendBatch := func(ctx context.Context, ids []string) error {
			entries := []types.SendMessageBatchRequestEntry{}
			for _, id := range ids {
				entries = append(entries, types.SendMessageBatchRequestEntry{Id: aws.String(id), MessageBody: aws.String("b")})
			}
			_, err := client.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(q.URL), Entries: entries})
			return err
		}
		deleteBatch := func(ctx context.Context, ids []string) error {
			entries := []types.DeleteMessageBatchRequestEntry{}
			for _, id := range ids {
				entries = append(entries, types.DeleteMessageBatchRequestEntry{Id: aws.String(id), ReceiptHandle: handle})
			}
			_, err := client.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(q.URL), Entries: entries})
			return err
		}
		changeBatch := func(ctx context.Context, ids []string) error {
			entries := []types.ChangeMessageVisibilityBatchRequestEntry{}
			for _, id := range ids {
				entries = append(entries, types.ChangeMessageVisibilityBatchRequestEntry{Id: aws.String(id), ReceiptHandle: handle, VisibilityTimeout: 30})
			}
			_, err := client.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: aws.String(q.URL), Entries: entries})
			return err
		}
		eleven := make([]string, 11)
		for i := range eleven {
			eleven[i] = fmt.Sprintf("e%d", i)
		}
		cases := []struct {
			what  string
			ids   []string
			check func(error)
		}{
			{"no entries", []string{}, func(err error) {
				Expect(err).To(BeAPIError[*types.EmptyBatchRequest]())
				Expect(err).To(HaveErrorCode("AWS.SimpleQueueService.EmptyBatchRequest"))
			}},
			{"more than 10 entries", eleven, func(err error) {
				Expect(err).To(BeAPIError[*types.TooManyEntriesInBatchRequest]())
				Expect(err).To(HaveErrorCode("AWS.SimpleQueueService.TooManyEntriesInBatchRequest"))
				Expect(errorMessage(err)).To(ContainSubstring("You have sent 11"))
			}},
			{"duplicate ids", []string{"same", "other", "same"}, func(err error) {
				Expect(err).To(BeAPIError[*types.BatchEntryIdsNotDistinct]())
				Expect(err).To(HaveErrorCode("AWS.SimpleQueueService.BatchEntryIdsNotDistinct"))
			}},
			{"an id with a bad character", []string{"ok", "not:ok"}, func(err error) {
				Expect(err).To(BeAPIError[*types.InvalidBatchEntryId]())
				Expect(err).To(HaveErrorCode("AWS.SimpleQueueService.InvalidBatchEntryId"))
			}},
			{"an id longer than 80 characters", []string{strings.Repeat("a", 81)}, func(err error) {
				Expect(err).To(BeAPIError[*types.InvalidBatchEntryId]())
			}},
		}
		calls := []struct {
			name string
			call batchCall
		}{{"SendMessageBatch", sendBatch}, {"DeleteMessageBatch", deleteBatch}, {"ChangeMessageVisibilityBatch", changeBatch}}
		for _, c := range calls {
			for _, k := range cases {
				It(fmt.Sprintf("%s refuses %s", c.name, k.what), func(ctx SpecContext) {
					k.check(c.call(ctx, k.ids))
				})
			}
		}
	})
})

func entryIDs[T any](entries []T) []string {
	var out []string
	for _, e := range entries {
		switch v := any(e).(type) {
		case types.ChangeMessageVisibilityBatchResultEntry:
			out = append(out, aws.ToString(v.Id))
		case types.DeleteMessageBatchResultEntry:
			out = append(out, aws.ToString(v.Id))
		}
	}
	return out
}

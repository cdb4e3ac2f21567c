package conformance

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("Queue lifecycle", func() {
	It("creates, finds, lists by prefix and deletes a queue", func(ctx SpecContext) {
		a := createQueue(ctx, "life-a", nil)
		b := createQueue(ctx, "life-b", nil)
		Expect(a.URL).To(HaveSuffix("/" + a.Name))

		url, err := client.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(a.Name)})
		Expect(err).NotTo(HaveOccurred())
		Expect(aws.ToString(url.QueueUrl)).To(Equal(a.URL))

		// ListQueues is eventually consistent on AWS.
		Eventually(func(g Gomega) {
			out, err := client.ListQueues(ctx, &sqs.ListQueuesInput{QueueNamePrefix: aws.String(prefix + "life-")})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(out.QueueUrls).To(ContainElements(a.URL, b.URL))
		}).WithContext(ctx).Should(Succeed())
		out, err := client.ListQueues(ctx, &sqs.ListQueuesInput{QueueNamePrefix: aws.String(a.Name)})
		Expect(err).NotTo(HaveOccurred())
		Expect(out.QueueUrls).To(ConsistOf(a.URL))

		_, err = client.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(a.URL)})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			_, err := client.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(a.Name)})
			g.Expect(err).To(BeAPIError[*types.QueueDoesNotExist]())
			g.Expect(err).To(HaveErrorCode("AWS.SimpleQueueService.NonExistentQueue"))
		}).WithContext(ctx).Should(Succeed())
		Eventually(func(g Gomega) {
			out, err := client.ListQueues(ctx, &sqs.ListQueuesInput{QueueNamePrefix: aws.String(prefix + "life-")})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(out.QueueUrls).To(ConsistOf(b.URL))
		}).WithContext(ctx).Should(Succeed())
	})

	It("is idempotent for equal attributes and refuses different ones with QueueNameExists", func(ctx SpecContext) {
		attrs := map[string]string{"VisibilityTimeout": "45", "DelaySeconds": "1"}
		q := createQueue(ctx, "idem", attrs)

		again, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(q.Name), Attributes: attrs})
		Expect(err).NotTo(HaveOccurred())
		Expect(aws.ToString(again.QueueUrl)).To(Equal(q.URL))

		// A subset of equal attributes, or none at all, also returns the queue.
		again, err = client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(q.Name), Attributes: map[string]string{"DelaySeconds": "1"}})
		Expect(err).NotTo(HaveOccurred())
		Expect(aws.ToString(again.QueueUrl)).To(Equal(q.URL))
		again, err = client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(q.Name)})
		Expect(err).NotTo(HaveOccurred())
		Expect(aws.ToString(again.QueueUrl)).To(Equal(q.URL))

		_, err = client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(q.Name), Attributes: map[string]string{"VisibilityTimeout": "46", "DelaySeconds": "1"}})
		Expect(err).To(BeAPIError[*types.QueueNameExists]())
		Expect(err).To(HaveErrorCode("QueueAlreadyExists"))
		Expect(errorMessage(err)).To(ContainSubstring("VisibilityTimeout"))
	})

	It("rejects an invalid queue name", func(ctx SpecContext) {
		_, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(prefix + "bad name!")})
		Expect(err).To(HaveErrorCode("InvalidParameterValue"))
	})
})

var _ = Describe("Queue attributes", func() {
	It("reports AWS's defaults for a new standard queue with All", func(ctx SpecContext) {
		before := time.Now().Add(-5 * time.Minute).Unix()
		q := createQueue(ctx, "defaults", nil)
		attrs := queueAttrs(ctx, client, q.URL, types.QueueAttributeNameAll)

		Expect(attrs).To(HaveKeyWithValue("VisibilityTimeout", "30"))
		Expect(attrs).To(HaveKeyWithValue("MaximumMessageSize", "1048576"))
		Expect(attrs).To(HaveKeyWithValue("MessageRetentionPeriod", "345600"))
		Expect(attrs).To(HaveKeyWithValue("DelaySeconds", "0"))
		Expect(attrs).To(HaveKeyWithValue("ReceiveMessageWaitTimeSeconds", "0"))
		Expect(attrs).To(HaveKeyWithValue("SqsManagedSseEnabled", "true"))
		Expect(attrs).To(HaveKeyWithValue("ApproximateNumberOfMessages", "0"))
		Expect(attrs).To(HaveKeyWithValue("ApproximateNumberOfMessagesNotVisible", "0"))
		Expect(attrs).To(HaveKeyWithValue("ApproximateNumberOfMessagesDelayed", "0"))
		Expect(attrs["QueueArn"]).To(MatchRegexp(`^arn:aws:sqs:%s:\d{12}:%s$`, region, q.Name))
		Expect(attrs["QueueArn"]).To(Equal(q.ARN))
		// Standard queues carry no FIFO attributes and no policies by default.
		Expect(attrs).NotTo(HaveKey("FifoQueue"))
		Expect(attrs).NotTo(HaveKey("ContentBasedDeduplication"))
		Expect(attrs).NotTo(HaveKey("Policy"))
		Expect(attrs).NotTo(HaveKey("RedrivePolicy"))
		// Timestamps are epoch seconds.
		for _, k := range []string{"CreatedTimestamp", "LastModifiedTimestamp"} {
			Expect(attrs).To(HaveKey(k))
			secs, err := strconv.ParseInt(attrs[k], 10, 64)
			Expect(err).NotTo(HaveOccurred(), "%s=%q", k, attrs[k])
			Expect(secs).To(BeNumerically(">=", before), k)
			Expect(secs).To(BeNumerically("<=", time.Now().Add(5*time.Minute).Unix()), k)
		}

		// Asking for some names returns just those.
		some := queueAttrs(ctx, client, q.URL, types.QueueAttributeNameVisibilityTimeout, types.QueueAttributeNameDelaySeconds)
		Expect(some).To(Equal(map[string]string{"VisibilityTimeout": "30", "DelaySeconds": "0"}))
	})

	It("round-trips SetQueueAttributes", func(ctx SpecContext) {
		q := createQueue(ctx, "setattrs", nil)
		set := map[string]string{
			"VisibilityTimeout":             "45",
			"MaximumMessageSize":            "2048",
			"MessageRetentionPeriod":        "120",
			"DelaySeconds":                  "5",
			"ReceiveMessageWaitTimeSeconds": "2",
		}
		_, err := client.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(q.URL), Attributes: set})
		Expect(err).NotTo(HaveOccurred())
		// AWS says attribute changes can take up to a minute to show.
		Eventually(func(g Gomega) {
			out, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
				QueueUrl: aws.String(q.URL), AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameAll},
			})
			g.Expect(err).NotTo(HaveOccurred())
			for k, v := range set {
				g.Expect(out.Attributes).To(HaveKeyWithValue(k, v))
			}
		}).WithContext(ctx).Should(Succeed())
	})

	It("refuses unknown attribute names with InvalidAttributeName", func(ctx SpecContext) {
		q := createQueue(ctx, "badattr", nil)
		_, err := client.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{
			QueueUrl: aws.String(q.URL), Attributes: map[string]string{"NoSuchAttribute": "1"},
		})
		Expect(err).To(BeAPIError[*types.InvalidAttributeName]())
		Expect(err).To(HaveErrorCode("InvalidAttributeName"))

		_, err = client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
			QueueUrl: aws.String(q.URL), AttributeNames: []types.QueueAttributeName{"NoSuchAttribute"},
		})
		Expect(err).To(BeAPIError[*types.InvalidAttributeName]())
		Expect(err).To(HaveErrorCode("InvalidAttributeName"))
	})
})

var _ = Describe("Tags", func() {
	It("tags, lists and untags a queue", func(ctx SpecContext) {
		name := queueName("tags")
		out, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Tags: map[string]string{"created": "yes"}})
		Expect(err).NotTo(HaveOccurred())
		url := aws.ToString(out.QueueUrl)
		DeferCleanup(func(ctx SpecContext) { deleteQuietly(ctx, client, url) })

		tags := func(g Gomega) map[string]string {
			out, err := client.ListQueueTags(ctx, &sqs.ListQueueTagsInput{QueueUrl: aws.String(url)})
			g.Expect(err).NotTo(HaveOccurred())
			return out.Tags
		}
		Eventually(tags).WithContext(ctx).Should(Equal(map[string]string{"created": "yes"}))

		_, err = client.TagQueue(ctx, &sqs.TagQueueInput{QueueUrl: aws.String(url), Tags: map[string]string{"team": "core", "Team": "Core", "empty": ""}})
		Expect(err).NotTo(HaveOccurred())
		// Keys are case-sensitive; an existing key is overwritten.
		_, err = client.TagQueue(ctx, &sqs.TagQueueInput{QueueUrl: aws.String(url), Tags: map[string]string{"created": "again"}})
		Expect(err).NotTo(HaveOccurred())
		Eventually(tags).WithContext(ctx).Should(Equal(map[string]string{"created": "again", "team": "core", "Team": "Core", "empty": ""}))

		// Untagging a key that is not there is not an error.
		_, err = client.UntagQueue(ctx, &sqs.UntagQueueInput{QueueUrl: aws.String(url), TagKeys: []string{"team", "empty", "absent"}})
		Expect(err).NotTo(HaveOccurred())
		Eventually(tags).WithContext(ctx).Should(Equal(map[string]string{"created": "again", "Team": "Core"}))

		_, err = client.UntagQueue(ctx, &sqs.UntagQueueInput{QueueUrl: aws.String(url), TagKeys: []string{"created", "Team"}})
		Expect(err).NotTo(HaveOccurred())
		Eventually(tags).WithContext(ctx).Should(BeEmpty())
	})
})

// policy is the part of an SQS queue policy these specs read.
type policy struct {
	Version   string
	ID        string `json:"Id"`
	Statement []struct {
		Sid       string
		Effect    string
		Principal struct{ AWS string }
		Action    string
		Resource  string
	}
}

var _ = Describe("Permissions", func() {
	It("reflects AddPermission and RemovePermission in the Policy attribute", func(ctx SpecContext) {
		q := createQueue(ctx, "perm", nil)
		// The queue's own account is a principal AWS accepts wherever this runs.
		account := q.ARN[len(fmt.Sprintf("arn:aws:sqs:%s:", region)):][:12]

		_, err := client.AddPermission(ctx, &sqs.AddPermissionInput{
			QueueUrl: aws.String(q.URL), Label: aws.String("send-label"),
			AWSAccountIds: []string{account}, Actions: []string{"SendMessage"},
		})
		Expect(err).NotTo(HaveOccurred())
		_, err = client.AddPermission(ctx, &sqs.AddPermissionInput{
			QueueUrl: aws.String(q.URL), Label: aws.String("recv-label"),
			AWSAccountIds: []string{account}, Actions: []string{"ReceiveMessage"},
		})
		Expect(err).NotTo(HaveOccurred())

		readPolicy := func(g Gomega) policy {
			attrs := queueAttrs(ctx, client, q.URL, types.QueueAttributeNamePolicy)
			g.Expect(attrs).To(HaveKey("Policy"))
			var p policy
			g.Expect(json.Unmarshal([]byte(attrs["Policy"]), &p)).To(Succeed())
			return p
		}
		Eventually(func(g Gomega) {
			p := readPolicy(g)
			g.Expect(p.Version).To(Equal("2008-10-17"))
			g.Expect(p.ID).To(Equal(q.ARN + "/SQSDefaultPolicy"))
			g.Expect(p.Statement).To(HaveLen(2))
			byLabel := map[string]int{}
			for i, s := range p.Statement {
				byLabel[s.Sid] = i
				g.Expect(s.Effect).To(Equal("Allow"))
				g.Expect(s.Principal.AWS).To(Equal("arn:aws:iam::" + account + ":root"))
				g.Expect(s.Resource).To(Equal(q.ARN))
			}
			g.Expect(byLabel).To(HaveKey("send-label"))
			g.Expect(byLabel).To(HaveKey("recv-label"))
			g.Expect(p.Statement[byLabel["send-label"]].Action).To(Equal("SQS:SendMessage"))
			g.Expect(p.Statement[byLabel["recv-label"]].Action).To(Equal("SQS:ReceiveMessage"))
		}).WithContext(ctx).Should(Succeed())

		// A label may be used once.
		_, err = client.AddPermission(ctx, &sqs.AddPermissionInput{
			QueueUrl: aws.String(q.URL), Label: aws.String("send-label"),
			AWSAccountIds: []string{account}, Actions: []string{"SendMessage"},
		})
		Expect(err).To(HaveErrorCode("InvalidParameterValue"))

		_, err = client.RemovePermission(ctx, &sqs.RemovePermissionInput{QueueUrl: aws.String(q.URL), Label: aws.String("send-label")})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			p := readPolicy(g)
			g.Expect(p.Statement).To(HaveLen(1))
			g.Expect(p.Statement[0].Sid).To(Equal("recv-label"))
		}).WithContext(ctx).Should(Succeed())

		_, err = client.RemovePermission(ctx, &sqs.RemovePermissionInput{QueueUrl: aws.String(q.URL), Label: aws.String("no-such-label")})
		Expect(err).To(HaveErrorCode("InvalidParameterValue"))

		// Removing the last statement removes the policy.
		_, err = client.RemovePermission(ctx, &sqs.RemovePermissionInput{QueueUrl: aws.String(q.URL), Label: aws.String("recv-label")})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() map[string]string {
			return queueAttrs(ctx, client, q.URL, types.QueueAttributeNameAll)
		}).WithContext(ctx).ShouldNot(HaveKey("Policy"))
	})
})

var _ = Describe("PurgeQueue", func() {
	It("empties the queue and refuses a second purge with PurgeQueueInProgress", func(ctx SpecContext) {
		q := createQueue(ctx, "purge", nil)
		for i := range 3 {
			send(ctx, q, fmt.Sprintf("purge-me-%d", i))
		}
		_, err := client.PurgeQueue(ctx, &sqs.PurgeQueueInput{QueueUrl: aws.String(q.URL)})
		Expect(err).NotTo(HaveOccurred())

		_, err = client.PurgeQueue(ctx, &sqs.PurgeQueueInput{QueueUrl: aws.String(q.URL)})
		Expect(err).To(BeAPIError[*types.PurgeQueueInProgress]())
		Expect(err).To(HaveErrorCode("AWS.SimpleQueueService.PurgeQueueInProgress"))

		// AWS purges within a minute; fanout at once.
		Eventually(func(g Gomega) {
			out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(q.URL), MaxNumberOfMessages: 10, WaitTimeSeconds: emptyWait})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(out.Messages).To(BeEmpty())
		}).WithContext(ctx).Should(Succeed())
	})
})

var _ = Describe("Dead-letter queues", func() {
	It("lists the source queues of a dead-letter queue", func(ctx SpecContext) {
		dlq := createQueue(ctx, "dlq-list", nil)
		redrive := fmt.Sprintf(`{"deadLetterTargetArn":%q,"maxReceiveCount":5}`, dlq.ARN)
		src1 := createQueue(ctx, "dlq-src", map[string]string{"RedrivePolicy": redrive})
		src2 := createQueue(ctx, "dlq-src", nil)
		_, err := client.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{
			QueueUrl: aws.String(src2.URL), Attributes: map[string]string{"RedrivePolicy": redrive},
		})
		Expect(err).NotTo(HaveOccurred())

		Eventually(func(g Gomega) {
			out, err := client.ListDeadLetterSourceQueues(ctx, &sqs.ListDeadLetterSourceQueuesInput{QueueUrl: aws.String(dlq.URL)})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(out.QueueUrls).To(ConsistOf(src1.URL, src2.URL))
		}).WithContext(ctx).Should(Succeed())

		attrs := queueAttrs(ctx, client, src1.URL, types.QueueAttributeNameRedrivePolicy)
		var rp struct {
			DeadLetterTargetArn string
			MaxReceiveCount     json.Number
		}
		Expect(json.Unmarshal([]byte(attrs["RedrivePolicy"]), &rp)).To(Succeed())
		Expect(rp.DeadLetterTargetArn).To(Equal(dlq.ARN))
		Expect(rp.MaxReceiveCount.String()).To(Equal("5"))

		out, err := client.ListDeadLetterSourceQueues(ctx, &sqs.ListDeadLetterSourceQueuesInput{QueueUrl: aws.String(src1.URL)})
		Expect(err).NotTo(HaveOccurred())
		Expect(out.QueueUrls).To(BeEmpty())
	})

	It("moves a message received more than maxReceiveCount times to the dead-letter queue", func(ctx SpecContext) {
		dlq := createQueue(ctx, "dlq-move", nil)
		// The queue's VisibilityTimeout is 0 so a received message is visible
		// again at once. (The Go SDK cannot ask for 0 on ReceiveMessage: it
		// leaves zero integers out of the request.)
		src := createQueue(ctx, "dlq-move-src", map[string]string{
			"VisibilityTimeout": "0",
			"RedrivePolicy":     fmt.Sprintf(`{"deadLetterTargetArn":%q,"maxReceiveCount":1}`, dlq.ARN),
		})
		id := send(ctx, src, "poison")

		first := receiveOne(ctx, src, nil)
		Expect(aws.ToString(first.MessageId)).To(Equal(id))
		// The next receive would be the second: the message goes to the DLQ
		// instead of being returned.
		expectEmpty(ctx, client, src.URL)

		var moved types.Message
		Eventually(func(g Gomega) {
			out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
				QueueUrl: aws.String(dlq.URL), WaitTimeSeconds: 1,
				MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
			})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(out.Messages).To(HaveLen(1))
			moved = out.Messages[0]
		}).WithContext(ctx).Should(Succeed())
		Expect(aws.ToString(moved.MessageId)).To(Equal(id))
		Expect(aws.ToString(moved.Body)).To(Equal("poison"))
		Expect(moved.Attributes).To(HaveKeyWithValue("DeadLetterQueueSourceArn", src.ARN))
	})
})

package conformance

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("Queue lifecycle", Label("sqs-standard"), func() {
	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_CreateQueue.html; https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ListQueues.html.
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

	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_CreateQueue.html (QueueNameExists); localstack tests/aws/services/sqs/test_sqs.snapshot.json (recorded against AWS).
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

		// The comparison is with the queue's current values, so after a
		// change the new value matches and the old one does not.
		_, err = client.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(q.URL), Attributes: map[string]string{"DelaySeconds": "2"}})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			again, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(q.Name), Attributes: map[string]string{"VisibilityTimeout": "45", "DelaySeconds": "2"}})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(aws.ToString(again.QueueUrl)).To(Equal(q.URL))
		}).WithContext(ctx).Should(Succeed())
		_, err = client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(q.Name), Attributes: attrs})
		Expect(err).To(BeAPIError[*types.QueueNameExists]())
		Expect(errorMessage(err)).To(ContainSubstring("DelaySeconds"))
	})

	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_CreateQueue.html; localstack tests/aws/services/sqs/test_sqs.snapshot.json (recorded against AWS).
	It("treats a default value given explicitly as equal to the default", func(ctx SpecContext) {
		q := createQueue(ctx, "idem-default", nil)
		again, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(q.Name), Attributes: map[string]string{"VisibilityTimeout": "30", "DelaySeconds": "0"}})
		Expect(err).NotTo(HaveOccurred())
		Expect(aws.ToString(again.QueueUrl)).To(Equal(q.URL))
	})

	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_CreateQueue.html (QueueName constraints); localstack tests/aws/services/sqs/test_sqs.snapshot.json (recorded against AWS).
	It("rejects invalid queue names and FIFO settings on a standard queue", func(ctx SpecContext) {
		create := func(name string, attrs map[string]string) error {
			_, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
			if err == nil {
				// Should it have been created after all, do not leave it.
				DeferCleanup(func(ctx SpecContext) {
					out, err := client.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name)})
					if err == nil {
						deleteQuietly(ctx, client, aws.ToString(out.QueueUrl))
					}
				})
			}
			return err
		}
		Expect(create(prefix+"bad name!", nil)).To(HaveErrorCode("InvalidParameterValue"))
		Expect(create(prefix+strings.Repeat("x", 81-len(prefix)), nil)).To(HaveErrorCode("InvalidParameterValue"))
		// .fifo names are for FIFO queues only, and FIFO queues need one.
		Expect(create(queueName("std")+".fifo", nil)).To(HaveErrorCode("InvalidParameterValue"))
		Expect(create(queueName("nosuffix"), map[string]string{"FifoQueue": "true"})).To(HaveErrorCode("InvalidParameterValue"))
		// A FIFO-only attribute is unknown to a standard queue.
		err := create(queueName("cbd"), map[string]string{"ContentBasedDeduplication": "true"})
		Expect(err).To(BeAPIError[*types.InvalidAttributeName]())
		Expect(errorMessage(err)).To(Equal("Unknown Attribute ContentBasedDeduplication."))
	})

	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ListQueues.html.
	It("pages ListQueues with MaxResults and NextToken", func(ctx SpecContext) {
		var want []string
		for range 3 {
			want = append(want, createQueue(ctx, "page", nil).URL)
		}
		Eventually(func(g Gomega) {
			var got []string
			var token *string
			for pages := 0; ; pages++ {
				g.Expect(pages).To(BeNumerically("<", 3), "more pages than expected")
				out, err := client.ListQueues(ctx, &sqs.ListQueuesInput{
					QueueNamePrefix: aws.String(prefix + "page-"), MaxResults: aws.Int32(2), NextToken: token,
				})
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(len(out.QueueUrls)).To(BeNumerically("<=", 2))
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

var _ = Describe("Queue attributes", Label("sqs-standard"), func() {
	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_GetQueueAttributes.html; https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SetQueueAttributes.html (defaults).
	It("reports AWS's defaults for a new standard queue with All", func(ctx SpecContext) {
		before := time.Now().Add(-5 * time.Minute).Unix()
		q := createQueue(ctx, "defaults", nil)
		attrs := queueAttrs(ctx, client, q.URL, types.QueueAttributeNameAll)

		// All is every attribute that has a value: for a new standard queue
		// exactly these.
		Expect(attrs).To(HaveLen(12))
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

	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SetQueueAttributes.html.
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

	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_GetQueueAttributes.html.
	It("returns no attributes when none are asked for", func(ctx SpecContext) {
		q := createQueue(ctx, "noattrs", nil)
		Expect(queueAttrs(ctx, client, q.URL)).To(BeEmpty())
	})

	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SetQueueAttributes.html (ranges; InvalidAttributeName, InvalidAttributeValue).
	It("refuses read-only attributes and values out of range", func(ctx SpecContext) {
		q := createQueue(ctx, "roattr", nil)
		set := func(k, v string) error {
			_, err := client.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(q.URL), Attributes: map[string]string{k: v}})
			return err
		}
		err := set("QueueArn", "arn:aws:sqs:"+region+":000000000000:other")
		Expect(err).To(BeAPIError[*types.InvalidAttributeName]())
		Expect(set("ApproximateNumberOfMessages", "5")).To(BeAPIError[*types.InvalidAttributeName]())
		Expect(set("VisibilityTimeout", "43201")).To(BeAPIError[*types.InvalidAttributeValue]())
		Expect(set("MessageRetentionPeriod", "59")).To(BeAPIError[*types.InvalidAttributeValue]())
		Expect(set("MaximumMessageSize", "1023")).To(BeAPIError[*types.InvalidAttributeValue]())
		Expect(set("DelaySeconds", "901")).To(BeAPIError[*types.InvalidAttributeValue]())
		Expect(set("ReceiveMessageWaitTimeSeconds", "21")).To(BeAPIError[*types.InvalidAttributeValue]())
		// The queue kept its values.
		Expect(queueAttrs(ctx, client, q.URL, types.QueueAttributeNameVisibilityTimeout)).To(HaveKeyWithValue("VisibilityTimeout", "30"))
	})

	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_GetQueueAttributes.html (InvalidAttributeName).
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

var _ = Describe("Tags", Label("sqs-standard"), func() {
	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_TagQueue.html; https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ListQueueTags.html; https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_UntagQueue.html.
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
		untagged := createQueue(ctx, "untagged", nil)
		none, err := client.ListQueueTags(ctx, &sqs.ListQueueTagsInput{QueueUrl: aws.String(untagged.URL)})
		Expect(err).NotTo(HaveOccurred())
		Expect(none.Tags).To(BeEmpty())

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

var _ = Describe("Permissions", Label("sqs-standard"), func() {
	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_AddPermission.html; https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_RemovePermission.html; localstack tests/aws/services/sqs/test_sqs.snapshot.json (recorded against AWS).
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

		// Only SQS actions may be granted.
		_, err = client.AddPermission(ctx, &sqs.AddPermissionInput{
			QueueUrl: aws.String(q.URL), Label: aws.String("bad-action"),
			AWSAccountIds: []string{account}, Actions: []string{"EatMessage"},
		})
		Expect(err).To(HaveErrorCode("InvalidParameterValue"))
		Expect(errorMessage(err)).To(ContainSubstring("Value SQS:EatMessage for parameter ActionName is invalid"))

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

		// Removing the last statement removes the policy (as does setting
		// Policy to "", below).
		_, err = client.RemovePermission(ctx, &sqs.RemovePermissionInput{QueueUrl: aws.String(q.URL), Label: aws.String("recv-label")})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() map[string]string {
			return queueAttrs(ctx, client, q.URL, types.QueueAttributeNameAll)
		}).WithContext(ctx).ShouldNot(HaveKey("Policy"))
	})

	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SetQueueAttributes.html (Policy).
	It("sets a Policy and removes it with an empty value", func(ctx SpecContext) {
		q := createQueue(ctx, "policy", nil)
		doc := fmt.Sprintf(`{"Version":"2012-10-17","Id":"conformance","Statement":[{"Sid":"s1","Effect":"Deny","Principal":{"AWS":"*"},"Action":"sqs:SendMessage","Resource":%q,"Condition":{"Bool":{"aws:SecureTransport":"false"}}}]}`, q.ARN)
		_, err := client.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(q.URL), Attributes: map[string]string{"Policy": doc}})
		Expect(err).NotTo(HaveOccurred())
		// Only what AWS is known to keep as given is compared: it may
		// normalise the rest of the document.
		Eventually(func(g Gomega) {
			attrs := queueAttrs(ctx, client, q.URL, types.QueueAttributeNamePolicy)
			g.Expect(attrs).To(HaveKey("Policy"))
			var p policy
			g.Expect(json.Unmarshal([]byte(attrs["Policy"]), &p)).To(Succeed())
			g.Expect(p.ID).To(Equal("conformance"))
			g.Expect(p.Statement).To(HaveLen(1))
			g.Expect(p.Statement[0].Sid).To(Equal("s1"))
			g.Expect(p.Statement[0].Effect).To(Equal("Deny"))
			g.Expect(p.Statement[0].Action).To(Equal("sqs:SendMessage"))
			g.Expect(p.Statement[0].Resource).To(Equal(q.ARN))
		}).WithContext(ctx).Should(Succeed())

		_, err = client.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(q.URL), Attributes: map[string]string{"Policy": ""}})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() map[string]string {
			return queueAttrs(ctx, client, q.URL, types.QueueAttributeNameAll)
		}).WithContext(ctx).ShouldNot(HaveKey("Policy"))
	})
})

var _ = Describe("PurgeQueue", Label("sqs-standard"), func() {
	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_PurgeQueue.html.
	It("empties the queue and refuses a second purge with PurgeQueueInProgress", func(ctx SpecContext) {
		q := createQueue(ctx, "purge", nil)
		for i := range 3 {
			send(ctx, q, fmt.Sprintf("purge-me-%d", i))
		}
		// Purging takes in-flight and delayed messages too.
		receiveOne(ctx, q, nil)
		_, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q.URL), MessageBody: aws.String("delayed"), DelaySeconds: 600})
		Expect(err).NotTo(HaveOccurred())

		_, err = client.PurgeQueue(ctx, &sqs.PurgeQueueInput{QueueUrl: aws.String(q.URL)})
		Expect(err).NotTo(HaveOccurred())

		_, err = client.PurgeQueue(ctx, &sqs.PurgeQueueInput{QueueUrl: aws.String(q.URL)})
		Expect(err).To(BeAPIError[*types.PurgeQueueInProgress]())
		Expect(err).To(HaveErrorCode("AWS.SimpleQueueService.PurgeQueueInProgress"))

		// AWS purges within a minute; fanout at once.
		Eventually(func(g Gomega) {
			out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(q.URL), MaxNumberOfMessages: 10, WaitTimeSeconds: emptyWait})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(out.Messages).To(BeEmpty())
			g.Expect(queueAttrs(ctx, client, q.URL, types.QueueAttributeNameApproximateNumberOfMessages,
				types.QueueAttributeNameApproximateNumberOfMessagesNotVisible, types.QueueAttributeNameApproximateNumberOfMessagesDelayed)).
				To(Equal(map[string]string{"ApproximateNumberOfMessages": "0", "ApproximateNumberOfMessagesNotVisible": "0", "ApproximateNumberOfMessagesDelayed": "0"}))
		}).WithContext(ctx).Should(Succeed())
	})
})

var _ = Describe("Dead-letter queues", Label("sqs-dlq"), func() {
	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ListDeadLetterSourceQueues.html.
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

	// Evidence: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html.
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

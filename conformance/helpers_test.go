package conformance

import (
	"context"
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gcustom"
)

// queue is a queue a spec created.
type queue struct {
	Name, URL, ARN string
}

var queueSeq atomic.Int64

// queueName returns a name unique in this run: prefix + what + a sequence
// number, so no spec re-creates a name another one deleted (AWS refuses
// that for 60 seconds).
func queueName(what string) string {
	return fmt.Sprintf("%s%s-%d", prefix, what, queueSeq.Add(1))
}

// createQueue creates a standard queue on c with the given attributes and
// removes it when the spec ends.
func createQueueOn(ctx context.Context, c *sqs.Client, what string, attrs map[string]string) queue {
	GinkgoHelper()
	name := queueName(what)
	out, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
	Expect(err).NotTo(HaveOccurred())
	url := aws.ToString(out.QueueUrl)
	DeferCleanup(func(ctx SpecContext) { deleteQuietly(ctx, c, url) })
	got, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(url), AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn},
	})
	Expect(err).NotTo(HaveOccurred())
	return queue{Name: name, URL: url, ARN: got.Attributes["QueueArn"]}
}

func createQueue(ctx context.Context, what string, attrs map[string]string) queue {
	GinkgoHelper()
	return createQueueOn(ctx, client, what, attrs)
}

// deleteQuietly deletes a queue a spec may already have deleted.
func deleteQuietly(ctx context.Context, c *sqs.Client, url string) {
	GinkgoHelper()
	_, err := c.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(url)})
	var gone *types.QueueDoesNotExist
	if err != nil && !errors.As(err, &gone) {
		Expect(err).NotTo(HaveOccurred(), "cleaning up %s", url)
	}
}

// HaveErrorCode matches an error whose smithy APIError code is code. The Go
// SDK reports the Query-protocol code of the x-amzn-query-error header, e.g.
// AWS.SimpleQueueService.NonExistentQueue for QueueDoesNotExist.
func HaveErrorCode(code string) OmegaMatcher {
	return WithTransform(func(err error) string {
		var ae smithy.APIError
		if errors.As(err, &ae) {
			return ae.ErrorCode()
		}
		if err == nil {
			return "<no error>"
		}
		return "<not an API error: " + err.Error() + ">"
	}, Equal(code))
}

// BeAPIError matches an error that errors.As finds a T in, e.g.
// BeAPIError[*types.QueueDoesNotExist]().
func BeAPIError[T error]() OmegaMatcher {
	return gcustom.MakeMatcher(func(err error) (bool, error) {
		var t T
		return err != nil && errors.As(err, &t), nil
	}).WithMessage(fmt.Sprintf("be an error of type %T", *new(T)))
}

// apiError returns the smithy APIError in err, or nil.
func apiError(err error) smithy.APIError {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae
	}
	return nil
}

// errorMessage returns the API error's message.
func errorMessage(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorMessage()
	}
	return ""
}

// send sends body and returns the message id.
func send(ctx context.Context, q queue, body string) string {
	GinkgoHelper()
	out, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q.URL), MessageBody: aws.String(body)})
	Expect(err).NotTo(HaveOccurred())
	return aws.ToString(out.MessageId)
}

// receiveOne receives exactly one message with in's options (QueueUrl is
// filled in), long polling up to a second so AWS asks all its servers.
func receiveOne(ctx context.Context, q queue, in *sqs.ReceiveMessageInput) types.Message {
	GinkgoHelper()
	if in == nil {
		in = &sqs.ReceiveMessageInput{}
	}
	in.QueueUrl = aws.String(q.URL)
	if in.WaitTimeSeconds == 0 {
		in.WaitTimeSeconds = 1
	}
	out, err := client.ReceiveMessage(ctx, in)
	Expect(err).NotTo(HaveOccurred())
	Expect(out.Messages).To(HaveLen(1))
	return out.Messages[0]
}

// expectEmpty asserts that a receive on q returns no message.
func expectEmpty(ctx context.Context, c *sqs.Client, url string) {
	GinkgoHelper()
	out, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl: aws.String(url), MaxNumberOfMessages: 10, WaitTimeSeconds: emptyWait,
	})
	Expect(err).NotTo(HaveOccurred())
	Expect(out.Messages).To(BeEmpty())
}

// receiveAll collects n messages from q (several receives on AWS, which may
// return fewer than are available), hiding each for visibility seconds (0:
// the queue's VisibilityTimeout; the SDK leaves a zero out of the request).
func receiveAll(ctx context.Context, q queue, n int, visibility int32) []types.Message {
	GinkgoHelper()
	var got []types.Message
	Eventually(func(g Gomega) {
		out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(q.URL), MaxNumberOfMessages: 10, WaitTimeSeconds: 1, VisibilityTimeout: visibility,
		})
		g.Expect(err).NotTo(HaveOccurred())
		got = append(got, out.Messages...)
		g.Expect(len(got)).To(BeNumerically(">=", n))
	}).WithContext(ctx).Should(Succeed())
	Expect(got).To(HaveLen(n))
	return got
}

// queueAttrs reads the named attributes of q.
func queueAttrs(ctx context.Context, c *sqs.Client, url string, names ...types.QueueAttributeName) map[string]string {
	GinkgoHelper()
	out, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url), AttributeNames: names})
	Expect(err).NotTo(HaveOccurred())
	return out.Attributes
}

func md5Hex(b []byte) string {
	sum := md5.Sum(b)
	return hex.EncodeToString(sum[:])
}

// attributesMD5 computes MD5OfMessageAttributes the way the SQS developer
// guide describes it: names in byte order; for each, length-prefixed name,
// length-prefixed data type, a transport byte (1 string, 2 binary) and the
// length-prefixed value. It returns "" for no attributes.
func attributesMD5(attrs map[string]types.MessageAttributeValue) string {
	if len(attrs) == 0 {
		return ""
	}
	names := make([]string, 0, len(attrs))
	for n := range attrs {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf []byte
	field := func(b []byte) {
		buf = binary.BigEndian.AppendUint32(buf, uint32(len(b)))
		buf = append(buf, b...)
	}
	for _, n := range names {
		v := attrs[n]
		field([]byte(n))
		field([]byte(aws.ToString(v.DataType)))
		if strings.HasPrefix(aws.ToString(v.DataType), "Binary") {
			buf = append(buf, 2)
			field(v.BinaryValue)
		} else {
			buf = append(buf, 1)
			field([]byte(aws.ToString(v.StringValue)))
		}
	}
	return md5Hex(buf)
}

func strAttr(v string) types.MessageAttributeValue {
	return types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
}

func attrNames(attrs map[string]types.MessageAttributeValue) []string {
	names := make([]string, 0, len(attrs))
	for n := range attrs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// httpStatus is the HTTP status of an API error's response, or 0.
func httpStatus(err error) int {
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

// BeAWSError matches an SDK error with the given HTTP status, error code
// and message (a string for equality, or a matcher).
func BeAWSError(status int, code string, msg any) OmegaMatcher {
	m, ok := msg.(OmegaMatcher)
	if !ok {
		m = Equal(msg)
	}
	return And(
		HaveErrorCode(code),
		WithTransform(httpStatus, Equal(status)),
		WithTransform(errorMessage, m),
	)
}

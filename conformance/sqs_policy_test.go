package conformance

import (
	"context"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fanout/fanout"
	"github.com/fanout/fanout/internal/sdktest"
)

// enforcesPoliciesEnv says an emulator endpoint enforces queue policies
// (fanout --enforce-policies), so the specs that need it run there too.
const enforcesPoliciesEnv = "FANOUT_CONFORMANCE_ENFORCES_POLICIES"

// twoAccountsEnforcing is twoAccounts on a target that enforces resource
// policies, as AWS always does: in-process, a fanout of its own started
// with EnforcePolicies; an emulator endpoint only when enforcesPoliciesEnv
// says it enforces them.
func twoAccountsEnforcing(ctx context.Context) (accountClients, accountClients) {
	GinkgoHelper()
	switch {
	case onAWS:
		return twoAccounts(ctx)
	case inProcess:
		s, err := fanout.Start(context.Background(), fanout.Options{Region: region, Account: account, EnforcePolicies: true})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(s.Close()).To(Succeed()) })
		return accountOn(s.URL(), "111111111111"), accountOn(s.URL(), "222222222222")
	case os.Getenv(enforcesPoliciesEnv) == "true":
		return twoAccounts(ctx)
	}
	Skip("the target may not enforce queue policies: set " + enforcesPoliciesEnv + "=true if it does")
	return accountClients{}, accountClients{}
}

func accountOn(url, id string) accountClients {
	cfg := aws.Config{Region: region, Credentials: credentials.NewStaticCredentialsProvider(id, "secret", ""), HTTPClient: sdktest.HTTPClient()}
	return accountClients{
		sqs:     sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(url) }),
		sns:     sns.NewFromConfig(cfg, func(o *sns.Options) { o.BaseEndpoint = aws.String(url) }),
		account: id,
	}
}

// On AWS a call on another account's queue needs both the caller's IAM
// policy (the second profile is assumed to allow sqs:*) and the queue's
// Policy to allow it. A policy change takes a while to apply on AWS, hence
// Eventually after each.
var _ = Describe("Cross-account queue access", Label(multiAccount), func() {
	It("refuses another account until the queue's Policy grants it the action, and never grants what only the owner may do", func(ctx SpecContext) {
		a, b := twoAccountsEnforcing(ctx)
		q := createQueueOn(ctx, a.sqs, "shared", nil)
		sendAs := func(c *sqs.Client) error {
			_, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &q.URL, MessageBody: aws.String("across")})
			return err
		}
		Expect(sendAs(b.sqs)).To(HaveErrorCode("AccessDenied"))
		_, err := a.sqs.AddPermission(ctx, &sqs.AddPermissionInput{QueueUrl: &q.URL, Label: aws.String("send"),
			AWSAccountIds: []string{b.account}, Actions: []string{"SendMessage"}})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() error { return sendAs(b.sqs) }).WithContext(ctx).Should(Succeed())
		_, err = b.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &q.URL})
		Expect(err).To(HaveErrorCode("AccessDenied"), "only SendMessage was granted")
		_, err = b.sqs.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: &q.URL, Attributes: map[string]string{"DelaySeconds": "1"}})
		Expect(err).To(HaveErrorCode("AccessDenied"), "cross-account permissions never apply to SetQueueAttributes")

		policy := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::` + b.account + `:root"},"Action":"sqs:*","Resource":"` + q.ARN + `"}]}`
		_, err = a.sqs.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: &q.URL, Attributes: map[string]string{"Policy": policy}})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() error {
			_, err := b.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &q.URL})
			return err
		}).WithContext(ctx).Should(Succeed())
		_, err = b.sqs.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: &q.URL})
		Expect(err).To(HaveErrorCode("AccessDenied"), "only the owner deletes a queue, whatever its Policy")
		_, err = b.sqs.ListMessageMoveTasks(ctx, &sqs.ListMessageMoveTasksInput{SourceArn: &q.ARN})
		Expect(err).To(HaveErrorCode("AccessDenied"), "cross-account permissions never apply to move tasks")
	})
})

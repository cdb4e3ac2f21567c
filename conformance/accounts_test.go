package conformance

import (
	"context"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fanout/fanout/internal/sdktest"
)

// multiAccount labels specs that need two accounts. On AWS they run only
// when FANOUT_CONFORMANCE_SECOND_PROFILE names an AWS profile of another
// account (the default credentials are the first), and skip otherwise; on
// an emulator the two accounts are 12-digit access key ids.
const multiAccount = "multi-account"

const secondProfileEnv = "FANOUT_CONFORMANCE_SECOND_PROFILE"

// accountClients are SQS and SNS clients of one account.
type accountClients struct {
	sqs     *sqs.Client
	sns     *sns.Client
	account string
}

// twoAccounts returns clients of two accounts, skipping the spec on AWS
// without a second profile.
func twoAccounts(ctx context.Context) (accountClients, accountClients) {
	GinkgoHelper()
	if onAWS {
		profile := os.Getenv(secondProfileEnv)
		if profile == "" {
			Skip("needs a second AWS account: set " + secondProfileEnv)
		}
		first, err := config.LoadDefaultConfig(ctx)
		Expect(err).NotTo(HaveOccurred())
		second, err := config.LoadDefaultConfig(ctx, config.WithSharedConfigProfile(profile))
		Expect(err).NotTo(HaveOccurred())
		return awsAccount(ctx, first), awsAccount(ctx, second)
	}
	return emulatorAccount("111111111111"), emulatorAccount("222222222222")
}

func emulatorAccount(id string) accountClients {
	cfg := aws.Config{Region: region, Credentials: credentials.NewStaticCredentialsProvider(id, "secret", ""), HTTPClient: sdktest.HTTPClient()}
	return accountClients{
		sqs:     sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(endpoint) }),
		sns:     sns.NewFromConfig(cfg, func(o *sns.Options) { o.BaseEndpoint = aws.String(endpoint) }),
		account: id,
	}
}

func awsAccount(ctx context.Context, cfg aws.Config) accountClients {
	GinkgoHelper()
	c := accountClients{sqs: sqs.NewFromConfig(cfg), sns: sns.NewFromConfig(cfg)}
	// The account is the one in a queue ARN the account creates.
	q := createQueueOn(ctx, c.sqs, "whoami", nil)
	c.account = strings.Split(q.ARN, ":")[4]
	return c
}

var _ = Describe("Accounts", Label(multiAccount), func() {
	It("keeps the same queue name apart in two accounts, each URL and ARN naming its account", func(ctx SpecContext) {
		a, b := twoAccounts(ctx)
		qa := createQueueOn(ctx, a.sqs, "same", nil)
		out, err := b.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: &qa.Name})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func(ctx SpecContext) { deleteQuietly(ctx, b.sqs, *out.QueueUrl) })
		qb := queue{Name: qa.Name, URL: *out.QueueUrl, ARN: queueAttrs(ctx, b.sqs, *out.QueueUrl, "QueueArn")["QueueArn"]}
		Expect(qa.ARN).To(HaveSuffix(":" + a.account + ":" + qa.Name))
		Expect(qb.ARN).To(HaveSuffix(":" + b.account + ":" + qa.Name))
		Expect(qa.URL).To(ContainSubstring("/" + a.account + "/"))
		send(ctx, qa, "for a")
		Expect(*receiveOne(ctx, qa, &sqs.ReceiveMessageInput{}).Body).To(Equal("for a"))
		expectEmpty(ctx, b.sqs, qb.URL)
	})

	It("refuses a dead-letter queue of another account", func(ctx SpecContext) {
		a, b := twoAccounts(ctx)
		dlq := createQueueOn(ctx, b.sqs, "other-dlq", nil)
		src := createQueueOn(ctx, a.sqs, "src", nil)
		_, err := a.sqs.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: &src.URL, Attributes: map[string]string{
			"RedrivePolicy": `{"deadLetterTargetArn":"` + dlq.ARN + `","maxReceiveCount":"3"}`}})
		Expect(err).To(HaveErrorCode("InvalidParameterValue"))
	})

	// AWS: a topic owner subscribing a queue of another account gets a
	// pending subscription and SNS sends a SubscriptionConfirmation into
	// the queue for the queue's owner to confirm.
	It("asks the queue's owner to confirm a subscription the topic's owner made", func(ctx SpecContext) {
		a, b := twoAccounts(ctx)
		topic := createTopicOn(ctx, a.sns, "xacct")
		q := createQueueOn(ctx, b.sqs, "xacct-inbox", map[string]string{"Policy": `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"sns.amazonaws.com"},"Action":"sqs:SendMessage","Resource":"*","Condition":{"ArnEquals":{"aws:SourceArn":"` + topic + `"}}}]}`})
		out, err := a.sns.Subscribe(ctx, &sns.SubscribeInput{TopicArn: &topic, Protocol: aws.String("sqs"), Endpoint: &q.ARN})
		Expect(err).NotTo(HaveOccurred())
		Expect(*out.SubscriptionArn).To(Equal("pending confirmation"))
		var body string
		Eventually(func() string {
			r, err := b.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &q.URL, WaitTimeSeconds: 1,
				MessageSystemAttributeNames: []types.MessageSystemAttributeName{"All"}})
			if err == nil && len(r.Messages) == 1 {
				body = *r.Messages[0].Body
			}
			return body
		}).WithContext(ctx).Should(ContainSubstring("SubscriptionConfirmation"))
		Expect(body).To(ContainSubstring(`"SubscribeURL"`))
	})
})

// createTopicOn creates a topic with another account's client and deletes
// it when the spec ends.
func createTopicOn(ctx context.Context, c *sns.Client, what string) string {
	GinkgoHelper()
	out, err := c.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String(queueName(what))})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx SpecContext) { _, _ = c.DeleteTopic(ctx, &sns.DeleteTopicInput{TopicArn: out.TopicArn}) })
	return *out.TopicArn
}

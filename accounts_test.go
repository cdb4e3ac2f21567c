package fanout_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"

	"github.com/fanout/fanout"
	"github.com/fanout/fanout/internal/sdktest"
)

// nsClients are SDK clients signing with an access key id and a region:
// a 12-digit key id names the account, as with LocalStack.
type nsClients struct {
	sqs *sqs.Client
	sns *sns.Client
}

func clientsAs(s *fanout.Server, key, region string) nsClients {
	cfg := aws.Config{Region: region, Credentials: credentials.NewStaticCredentialsProvider(key, "secret", ""), HTTPClient: sdktest.HTTPClient()}
	return nsClients{
		sqs: sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(s.URL()) }),
		sns: sns.NewFromConfig(cfg, func(o *sns.Options) { o.BaseEndpoint = aws.String(s.URL()) }),
	}
}

func startServer(t *testing.T, opts fanout.Options) *fanout.Server {
	t.Helper()
	s, err := fanout.Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func errCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

func queueArn(t *testing.T, c *sqs.Client, url string) string {
	t.Helper()
	a, err := c.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{QueueUrl: &url, AttributeNames: []sqstypes.QueueAttributeName{"QueueArn"}})
	if err != nil {
		t.Fatal(err)
	}
	return a.Attributes["QueueArn"]
}

// TestAccountsAndRegionsAreNamespaces: the same queue and topic names in
// two accounts and two regions are four queues and four topics, each URL
// and ARN naming its own account and region; a default-key client sees
// only the default namespace.
func TestAccountsAndRegionsAreNamespaces(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := startServer(t, fanout.Options{})
	type ns struct{ key, account, region string }
	all := []ns{
		{"111111111111", "111111111111", "us-east-1"},
		{"111111111111", "111111111111", "eu-west-1"},
		{"222222222222", "222222222222", "eu-west-1"},
		{"test", "000000000000", "ap-south-1"},
	}
	urls := map[ns]string{}
	for _, n := range all {
		c := clientsAs(s, n.key, n.region)
		q, err := c.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("orders")})
		if err != nil {
			t.Fatal(n, err)
		}
		if !strings.HasSuffix(*q.QueueUrl, "/"+n.account+"/orders") {
			t.Errorf("%v: queue URL %s", n, *q.QueueUrl)
		}
		urls[n] = *q.QueueUrl
		if arn := queueArn(t, c.sqs, *q.QueueUrl); arn != "arn:aws:sqs:"+n.region+":"+n.account+":orders" {
			t.Errorf("%v: queue ARN %s", n, arn)
		}
		tp, err := c.sns.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("events")})
		if err != nil {
			t.Fatal(n, err)
		}
		if *tp.TopicArn != "arn:aws:sns:"+n.region+":"+n.account+":events" {
			t.Errorf("%v: topic ARN %s", n, *tp.TopicArn)
		}
		if _, err := c.sqs.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: q.QueueUrl, MessageBody: aws.String(n.account + "/" + n.region)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range all {
		c := clientsAs(s, n.key, n.region)
		out, err := c.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(urls[n]), MaxNumberOfMessages: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Messages) != 1 || *out.Messages[0].Body != n.account+"/"+n.region {
			t.Errorf("%v: received %d messages", n, len(out.Messages))
		}
		topics, err := c.sns.ListTopics(ctx, &sns.ListTopicsInput{})
		if err != nil || len(topics.Topics) != 1 {
			t.Errorf("%v: %d topics, %v", n, len(topics.Topics), err)
		}
	}
	// The default namespace has none of them; an unused one is empty.
	def := clientsAs(s, "test", "us-east-1")
	if l, err := def.sqs.ListQueues(ctx, &sqs.ListQueuesInput{}); err != nil || len(l.QueueUrls) != 0 {
		t.Errorf("default namespace lists %v, %v", l.QueueUrls, err)
	}
	if l, err := clientsAs(s, "333333333333", "us-west-2").sns.ListTopics(ctx, &sns.ListTopicsInput{}); err != nil || len(l.Topics) != 0 {
		t.Errorf("unused namespace lists %v, %v", l.Topics, err)
	}
	// A queue URL names its account: another account's client reaches it
	// by URL (policies aside); a URL of an account with no such queue is
	// QueueDoesNotExist.
	other := clientsAs(s, "222222222222", "us-east-1")
	if _, err := other.sqs.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(urls[all[0]]), MessageBody: aws.String("x")}); err != nil {
		t.Errorf("send by URL to another account's queue: %v", err)
	}
	_, err := other.sqs.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(s.URL() + "/999999999999/orders"), MessageBody: aws.String("x")})
	if errCode(err) != "AWS.SimpleQueueService.NonExistentQueue" && errCode(err) != "QueueDoesNotExist" {
		t.Errorf("queue of an unused account: %v", err)
	}
	// The queue URL's host names the region: sqs.<region>.<domain>.
	hostURL := "http://sqs.eu-west-1.localhost.localstack.cloud:" + s.URL()[strings.LastIndexByte(s.URL(), ':')+1:] + "/222222222222/orders"
	if _, err := other.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &hostURL}); err != nil {
		t.Errorf("queue URL with the region in its host: %v", err)
	}
	// GetQueueUrl with QueueOwnerAWSAccountId.
	g, err := other.sqs.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("orders"), QueueOwnerAWSAccountId: aws.String("111111111111")})
	if err != nil || !strings.HasSuffix(*g.QueueUrl, "/111111111111/orders") {
		t.Errorf("GetQueueUrl of another owner: %v %v", g, err)
	}
}

// TestTopicDeliversAcrossAccountsAndRegions: a topic in one account and
// region delivers to a queue of another, as on AWS; subscribing a queue ARN
// of a namespace where nothing exists is refused at Subscribe.
func TestTopicDeliversAcrossAccountsAndRegions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := startServer(t, fanout.Options{})
	pub := clientsAs(s, "111111111111", "us-east-1")
	sub := clientsAs(s, "222222222222", "eu-west-1")
	q, err := sub.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("inbox")})
	if err != nil {
		t.Fatal(err)
	}
	arn := queueArn(t, sub.sqs, *q.QueueUrl)
	tp, err := pub.sns.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("events")})
	if err != nil {
		t.Fatal(err)
	}
	// The queue's owner subscribes, in the topic's region, as AWS asks for
	// a subscription across accounts and regions (no confirmation then).
	owner := clientsAs(s, "222222222222", "us-east-1")
	if _, err := owner.sns.Subscribe(ctx, &sns.SubscribeInput{TopicArn: tp.TopicArn, Protocol: aws.String("sqs"), Endpoint: &arn,
		Attributes: map[string]string{"RawMessageDelivery": "true"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := pub.sns.Publish(ctx, &sns.PublishInput{TopicArn: tp.TopicArn, Message: aws.String("hello")}); err != nil {
		t.Fatal(err)
	}
	if err := s.Deliveries().Settle(ctx); err != nil {
		t.Fatal(err)
	}
	out, err := sub.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: q.QueueUrl})
	if err != nil || len(out.Messages) != 1 || *out.Messages[0].Body != "hello" {
		t.Fatalf("received %d messages, %v", len(out.Messages), err)
	}
	// The case: an eu-west-1 ARN where every queue is in us-east-1.
	_, err = pub.sns.Subscribe(ctx, &sns.SubscribeInput{TopicArn: tp.TopicArn, Protocol: aws.String("sqs"),
		Endpoint: aws.String("arn:aws:sqs:eu-west-1:111111111111:inbox")})
	if errCode(err) != "InvalidParameter" || !strings.Contains(err.Error(), "no queue exists in account 111111111111, region eu-west-1") {
		t.Errorf("subscribe to an unused namespace's queue: %v", err)
	}
	// A topic ARN of another region than the call's is InvalidParameter.
	_, err = sub.sns.Publish(ctx, &sns.PublishInput{TopicArn: tp.TopicArn, Message: aws.String("x")})
	if errCode(err) != "InvalidParameter" {
		t.Errorf("publish to a topic of another region: %v", err)
	}
}

// TestResetAccount: POST /_fanout/reset?account= empties one account only.
func TestResetAccount(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := startServer(t, fanout.Options{})
	a, b := clientsAs(s, "111111111111", "us-east-1"), clientsAs(s, "222222222222", "us-east-1")
	for _, c := range []nsClients{a, b} {
		if _, err := c.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("q")}); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := http.Post(s.URL()+"/_fanout/reset?account=111111111111", "", nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("reset: %v %v", resp, err)
	}
	resp.Body.Close()
	if l, _ := a.sqs.ListQueues(ctx, &sqs.ListQueuesInput{}); len(l.QueueUrls) != 0 {
		t.Errorf("account reset kept %v", l.QueueUrls)
	}
	if l, _ := b.sqs.ListQueues(ctx, &sqs.ListQueuesInput{}); len(l.QueueUrls) != 1 {
		t.Errorf("other account lost its queue: %v", l.QueueUrls)
	}
	if resp, _ := http.Post(s.URL()+"/_fanout/reset?account=12", "", nil); resp == nil || resp.StatusCode != 400 {
		t.Errorf("bad account: %v", resp)
	}
	if err := s.Reset(); err != nil {
		t.Fatal(err)
	}
	if l, _ := b.sqs.ListQueues(ctx, &sqs.ListQueuesInput{}); len(l.QueueUrls) != 0 {
		t.Errorf("full reset kept %v", l.QueueUrls)
	}
}

// TestAccountsWithTheCLI: Debian's AWS CLI (SQS over Query) with
// --region eu-west-1 and a 12-digit access key gets that region and
// account in its queue's ARN, and SNS's topic ARN likewise.
func TestAccountsWithTheCLI(t *testing.T) {
	t.Parallel()
	const cli = "/usr/bin/aws"
	if _, err := os.Stat(cli); err != nil {
		if os.Getenv("FANOUT_REQUIRE_CLI") != "" {
			t.Fatal(err)
		}
		t.Skip("/usr/bin/aws (Debian's awscli package) is not installed")
	}
	s := startServer(t, fanout.Options{})
	home := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(cli, append([]string{"--endpoint-url", s.URL(), "--region", "eu-west-1", "--output", "text"}, args...)...)
		cmd.Env = append(os.Environ(), "HOME="+home, "AWS_ACCESS_KEY_ID=123456789012", "AWS_SECRET_ACCESS_KEY=x",
			"AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null", "AWS_MAX_ATTEMPTS=1", "AWS_PAGER=")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	url := run("sqs", "create-queue", "--queue-name", "cli")
	if !strings.HasSuffix(url, "/123456789012/cli") {
		t.Errorf("queue URL %s", url)
	}
	if arn := run("sqs", "get-queue-attributes", "--queue-url", url, "--attribute-names", "QueueArn", "--query", "Attributes.QueueArn"); arn != "arn:aws:sqs:eu-west-1:123456789012:cli" {
		t.Errorf("queue ARN %s", arn)
	}
	if arn := run("sns", "create-topic", "--name", "cli"); arn != "arn:aws:sns:eu-west-1:123456789012:cli" {
		t.Errorf("topic ARN %s", arn)
	}
	if got := s.SQS().ListQueues(""); len(got) != 0 {
		t.Errorf("the default namespace has %v", got)
	}
}

// TestCrossAccountRules: with --enforce-policies a topic's Policy decides
// another account's Publish and Subscribe, and the queue's Policy decides
// delivery (aws:SourceAccount here). A queue owner subscribing its queue to
// another account's topic is confirmed at once; the topic owner subscribing
// another account's queue waits for the queue owner to confirm, with the
// SubscriptionConfirmation in the queue, as on AWS. A dead-letter queue
// stays in its source queue's account.
func TestCrossAccountRules(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := startServer(t, fanout.Options{EnforcePolicies: true})
	a, b := clientsAs(s, "111111111111", "us-east-1"), clientsAs(s, "222222222222", "us-east-1")
	tp, err := a.sns.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("events")})
	if err != nil {
		t.Fatal(err)
	}
	q, err := b.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("inbox"), Attributes: map[string]string{
		"Policy": `{"Statement":[{"Effect":"Allow","Principal":{"Service":"sns.amazonaws.com"},"Action":"sqs:SendMessage","Condition":{"StringEquals":{"aws:SourceAccount":"111111111111"}}}]}`}})
	if err != nil {
		t.Fatal(err)
	}
	arn := queueArn(t, b.sqs, *q.QueueUrl)

	_, err = b.sns.Publish(ctx, &sns.PublishInput{TopicArn: tp.TopicArn, Message: aws.String("x")})
	if errCode(err) != "AuthorizationError" || !strings.Contains(err.Error(), "arn:aws:iam::222222222222:root is not authorized to perform: SNS:Publish") {
		t.Fatalf("publish from another account without a policy: %v", err)
	}
	_, err = b.sns.Subscribe(ctx, &sns.SubscribeInput{TopicArn: tp.TopicArn, Protocol: aws.String("sqs"), Endpoint: &arn})
	if errCode(err) != "AuthorizationError" {
		t.Fatalf("subscribe from another account without a policy: %v", err)
	}
	if _, err := a.sns.AddPermission(ctx, &sns.AddPermissionInput{TopicArn: tp.TopicArn, Label: aws.String("b"),
		AWSAccountId: []string{"222222222222"}, ActionName: []string{"Publish", "Subscribe"}}); err != nil {
		t.Fatal(err)
	}
	sub, err := b.sns.Subscribe(ctx, &sns.SubscribeInput{TopicArn: tp.TopicArn, Protocol: aws.String("sqs"), Endpoint: &arn,
		Attributes: map[string]string{"RawMessageDelivery": "true"}})
	if err != nil || strings.Contains(*sub.SubscriptionArn, "pending") {
		t.Fatalf("the queue owner subscribes: %v %v", sub, err)
	}
	if _, err := b.sns.Publish(ctx, &sns.PublishInput{TopicArn: tp.TopicArn, Message: aws.String("from b")}); err != nil {
		t.Fatal(err)
	}
	_ = s.Deliveries().Settle(ctx)
	out, err := b.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: q.QueueUrl})
	if err != nil || len(out.Messages) != 1 || *out.Messages[0].Body != "from b" {
		t.Fatalf("delivery allowed by aws:SourceAccount: %v %v", out, err)
	}
	if _, err := b.sqs.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: q.QueueUrl, ReceiptHandle: out.Messages[0].ReceiptHandle}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.sns.Unsubscribe(ctx, &sns.UnsubscribeInput{SubscriptionArn: sub.SubscriptionArn}); err != nil {
		t.Fatal(err)
	}

	// The topic owner subscribes b's queue: b must confirm.
	sub, err = a.sns.Subscribe(ctx, &sns.SubscribeInput{TopicArn: tp.TopicArn, Protocol: aws.String("sqs"), Endpoint: &arn})
	if err != nil || *sub.SubscriptionArn != "pending confirmation" {
		t.Fatalf("the topic owner subscribes another account's queue: %v %v", sub, err)
	}
	_ = s.Deliveries().Settle(ctx)
	out, err = b.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: q.QueueUrl})
	if err != nil || len(out.Messages) != 1 || !strings.Contains(*out.Messages[0].Body, `"Type" : "SubscriptionConfirmation"`) && !strings.Contains(*out.Messages[0].Body, `"Type":"SubscriptionConfirmation"`) {
		t.Fatalf("confirmation in the queue: %v %v", out, err)
	}
	body := *out.Messages[0].Body
	i := strings.Index(body, `"Token"`)
	token := body[i:]
	token = token[strings.IndexByte(token, ':')+1:]
	token = strings.Trim(token[:strings.IndexByte(token, ',')], ` "`)
	c, err := b.sns.ConfirmSubscription(ctx, &sns.ConfirmSubscriptionInput{TopicArn: tp.TopicArn, Token: &token})
	if err != nil || !strings.HasPrefix(*c.SubscriptionArn, *tp.TopicArn+":") {
		t.Fatalf("confirm: %v %v", c, err)
	}

	// A dead-letter queue of another account is refused.
	_, err = a.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("src"), Attributes: map[string]string{
		"RedrivePolicy": `{"deadLetterTargetArn":"` + arn + `","maxReceiveCount":"3"}`}})
	if errCode(err) == "" {
		t.Errorf("a dead-letter queue in another account was accepted")
	} else {
		t.Logf("cross-account DLQ: %v", err)
	}
}

// TestQueueURLStyles: --queue-url-style returns LocalStack's shapes, and
// each shape is accepted back, naming its region.
func TestQueueURLStyles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range []struct{ style, want string }{
		{"", "http://127.0.0.1:PORT/111111111111/q"},
		{"standard", "http://sqs.eu-west-1.localhost.localstack.cloud:PORT/111111111111/q"},
		{"domain", "http://eu-west-1.queue.localhost.localstack.cloud:PORT/111111111111/q"},
		{"path", "http://127.0.0.1:PORT/queue/eu-west-1/111111111111/q"},
	} {
		s := startServer(t, fanout.Options{QueueURLStyle: c.style})
		port := s.URL()[strings.LastIndexByte(s.URL(), ':')+1:]
		cl := clientsAs(s, "111111111111", "eu-west-1")
		q, err := cl.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("q")})
		if err != nil {
			t.Fatal(err)
		}
		if want := strings.ReplaceAll(c.want, "PORT", port); *q.QueueUrl != want {
			t.Errorf("style %q: %s, want %s", c.style, *q.QueueUrl, want)
		}
		// A client of another region reaches it by a URL that names the region.
		other := clientsAs(s, "111111111111", "us-west-2")
		if c.style != "" {
			if _, err := other.sqs.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: q.QueueUrl, MessageBody: aws.String("x")}); err != nil {
				t.Errorf("style %q: send by its URL from another region: %v", c.style, err)
			}
		}
	}
	if _, err := fanout.New(fanout.Options{QueueURLStyle: "virtual"}); err == nil {
		t.Error("an unknown style was accepted")
	}
}

// TestLocalStackMessagesOfAnotherAccount: LocalStack's /_aws/sqs/messages
// finds a queue of any account and region, by path or by QueueUrl.
func TestLocalStackMessagesOfAnotherAccount(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := startServer(t, fanout.Options{})
	c := clientsAs(s, "111111111111", "eu-west-1")
	q, err := c.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("peek")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.sqs.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: q.QueueUrl, MessageBody: aws.String("peeked")}); err != nil {
		t.Fatal(err)
	}
	port := s.URL()[strings.LastIndexByte(s.URL(), ':')+1:]
	for _, path := range []string{
		"/_aws/sqs/messages/eu-west-1/111111111111/peek",
		"/_aws/sqs/messages?QueueUrl=" + url.QueryEscape("http://sqs.eu-west-1.localhost.localstack.cloud:"+port+"/111111111111/peek"),
	} {
		resp, err := http.Get(s.URL() + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(b), "peeked") {
			t.Errorf("%s: %d %s", path, resp.StatusCode, b)
		}
	}
	resp, err := http.Get(s.URL() + "/_aws/sqs/messages/us-east-1/111111111111/peek")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("another region's queue: %d", resp.StatusCode)
	}
}

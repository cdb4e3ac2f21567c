package fanout_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/fanout/fanout"
)

func httpStatus(err error) int {
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

// TestCrossAccountSQSPolicy: with --enforce-policies a call on another
// account's queue needs the queue's Policy to grant the caller's account
// the action (AccessDenied, 403, otherwise), on both SQS protocols; the
// actions AWS never grants across accounts stay denied whatever the
// policy; without the flag every call goes through.
func TestCrossAccountSQSPolicy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := startServer(t, fanout.Options{EnforcePolicies: true})
	owner := clientsAs(s, "111111111111", "us-east-1")
	other := clientsAs(s, "222222222222", "us-east-1")
	created, err := owner.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("shared")})
	if err != nil {
		t.Fatal(err)
	}
	url := *created.QueueUrl
	send := func(c *sqs.Client) error {
		_, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("hi")})
		return err
	}
	// No policy: the other account is refused, the owner is not.
	if err := send(other.sqs); errCode(err) != "AccessDenied" || httpStatus(err) != http.StatusForbidden {
		t.Fatalf("send without a policy: %v (status %d), want AccessDenied 403", err, httpStatus(err))
	}
	// The Query protocol, through Debian's AWS CLI 2.9.
	if _, err := os.Stat("/usr/bin/aws"); err == nil {
		cmd := exec.Command("/usr/bin/aws", "--endpoint-url", s.URL(), "--region", "us-east-1", "sqs", "send-message", "--queue-url", url, "--message-body", "hi")
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "AWS_ACCESS_KEY_ID=222222222222", "AWS_SECRET_ACCESS_KEY=x",
			"AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null", "AWS_MAX_ATTEMPTS=1", "AWS_PAGER=")
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "(AccessDenied)") || !strings.Contains(string(out), "User: arn:aws:iam::222222222222:root is not authorized to perform: sqs:sendmessage on resource: arn:aws:sqs:us-east-1:111111111111:shared because no resource-based policy allows the sqs:sendmessage action") {
			t.Fatalf("send over Query without a policy: %v %s", err, out)
		}
	}
	if err := send(owner.sqs); err != nil {
		t.Fatal(err)
	}
	// AddPermission grants SendMessage (and so SendMessageBatch) to the other account.
	if _, err := owner.sqs.AddPermission(ctx, &sqs.AddPermissionInput{QueueUrl: &url, Label: aws.String("send"),
		AWSAccountIds: []string{"222222222222"}, Actions: []string{"SendMessage"}}); err != nil {
		t.Fatal(err)
	}
	if err := send(other.sqs); err != nil {
		t.Fatalf("send with a grant: %v", err)
	}
	if _, err := other.sqs.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &url, Entries: []sqstypes.SendMessageBatchRequestEntry{{Id: aws.String("a"), MessageBody: aws.String("b")}}}); err != nil {
		t.Fatalf("batch with a SendMessage grant: %v", err)
	}
	if _, err := other.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url}); errCode(err) != "AccessDenied" {
		t.Fatalf("receive with only SendMessage granted: %v, want AccessDenied", err)
	}
	// A Policy naming the account's root ARN and sqs:* grants the rest, but
	// not what AWS keeps to the owner.
	policy := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::222222222222:root"},"Action":"sqs:*","Resource":"*"}]}`
	if _, err := owner.sqs.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: &url, Attributes: map[string]string{"Policy": policy}}); err != nil {
		t.Fatal(err)
	}
	got, err := other.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: 10})
	if err != nil || len(got.Messages) == 0 {
		t.Fatalf("receive with sqs:*: %v, %d messages", err, len(got.Messages))
	}
	if _, err := other.sqs.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: got.Messages[0].ReceiptHandle}); err != nil {
		t.Fatalf("delete with sqs:*: %v", err)
	}
	if _, err := other.sqs.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("shared"), QueueOwnerAWSAccountId: aws.String("111111111111")}); err != nil {
		t.Fatalf("GetQueueUrl with sqs:*: %v", err)
	}
	for name, call := range map[string]func() error{
		"SetQueueAttributes": func() error {
			_, err := other.sqs.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: &url, Attributes: map[string]string{"DelaySeconds": "1"}})
			return err
		},
		"DeleteQueue": func() error { _, err := other.sqs.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: &url}); return err },
		"TagQueue": func() error {
			_, err := other.sqs.TagQueue(ctx, &sqs.TagQueueInput{QueueUrl: &url, Tags: map[string]string{"a": "b"}})
			return err
		},
		"ListMessageMoveTasks": func() error {
			_, err := other.sqs.ListMessageMoveTasks(ctx, &sqs.ListMessageMoveTasksInput{SourceArn: aws.String(queueArn(t, owner.sqs, url))})
			return err
		},
	} {
		if err := call(); errCode(err) != "AccessDenied" {
			t.Errorf("%s by another account, even with sqs:*: %v, want AccessDenied", name, err)
		}
	}
	// An explicit Deny wins over the Allow.
	deny := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"sqs:*","Resource":"*"},{"Effect":"Deny","Principal":{"AWS":"222222222222"},"Action":"sqs:SendMessage","Resource":"*"}]}`
	if _, err := owner.sqs.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: &url, Attributes: map[string]string{"Policy": deny}}); err != nil {
		t.Fatal(err)
	}
	if err := send(other.sqs); errCode(err) != "AccessDenied" {
		t.Fatalf("send with a Deny: %v, want AccessDenied", err)
	}

	// Without the flag, nothing is checked.
	open := startServer(t, fanout.Options{})
	a, b := clientsAs(open, "111111111111", "us-east-1"), clientsAs(open, "222222222222", "us-east-1")
	q, err := a.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("open")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.sqs.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: q.QueueUrl, MessageBody: aws.String("hi")}); err != nil {
		t.Fatalf("cross-account send without --enforce-policies: %v", err)
	}
}

// TestMoveTasksOfAnotherNamespace: ListMessageMoveTasks and
// CancelMessageMoveTask find a task in the account and region its source
// ARN (inside the handle) names, whatever the caller's region; a handle of
// a namespace that has nothing is ResourceNotFoundException; with
// --enforce-policies another account's task is AccessDenied.
func TestMoveTasksOfAnotherNamespace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, enforce := range []bool{false, true} {
		s := startServer(t, fanout.Options{EnforcePolicies: enforce})
		owner := clientsAs(s, "111111111111", "eu-west-1")
		dlq, err := owner.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("dlq")})
		if err != nil {
			t.Fatal(err)
		}
		dlqArn := queueArn(t, owner.sqs, *dlq.QueueUrl)
		if _, err := owner.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("src"), Attributes: map[string]string{
			"RedrivePolicy": `{"deadLetterTargetArn":"` + dlqArn + `","maxReceiveCount":"1"}`}}); err != nil {
			t.Fatal(err)
		}
		if _, err := owner.sqs.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: dlq.QueueUrl, MessageBody: aws.String("dead")}); err != nil {
			t.Fatal(err)
		}
		start, err := owner.sqs.StartMessageMoveTask(ctx, &sqs.StartMessageMoveTaskInput{SourceArn: &dlqArn})
		if err != nil {
			t.Fatal(err)
		}
		// The owner's key, signing for another region: the ARN decides.
		elsewhere := clientsAs(s, "111111111111", "us-east-1")
		list, err := elsewhere.sqs.ListMessageMoveTasks(ctx, &sqs.ListMessageMoveTasksInput{SourceArn: &dlqArn})
		if err != nil || len(list.Results) != 1 || *list.Results[0].TaskHandle != *start.TaskHandle {
			t.Fatalf("enforce=%v: list from another region: %v %+v", enforce, err, list)
		}
		other := clientsAs(s, "222222222222", "eu-west-1")
		_, err = other.sqs.CancelMessageMoveTask(ctx, &sqs.CancelMessageMoveTaskInput{TaskHandle: start.TaskHandle})
		if enforce && errCode(err) != "AccessDenied" {
			t.Fatalf("cancel by another account with --enforce-policies: %v, want AccessDenied", err)
		}
		if enforce {
			if _, err = elsewhere.sqs.CancelMessageMoveTask(ctx, &sqs.CancelMessageMoveTaskInput{TaskHandle: start.TaskHandle}); err != nil {
				t.Fatalf("cancel by the owner from another region: %v", err)
			}
		} else if err != nil {
			t.Fatalf("cancel by another account without --enforce-policies: %v", err)
		}
		list, err = owner.sqs.ListMessageMoveTasks(ctx, &sqs.ListMessageMoveTasksInput{SourceArn: &dlqArn})
		if err != nil || len(list.Results) != 1 || list.Results[0].Status == nil || *list.Results[0].Status != "CANCELLED" {
			t.Fatalf("enforce=%v: after cancel: %v %+v", enforce, err, list)
		}
		// A handle whose source is in a namespace with nothing in it.
		_, err = owner.sqs.CancelMessageMoveTask(ctx, &sqs.CancelMessageMoveTaskInput{TaskHandle: aws.String(
			"eyJ0YXNrSWQiOiJ4Iiwic291cmNlQXJuIjoiYXJuOmF3czpzcXM6YXAtc291dGgtMTozMzMzMzMzMzMzMzM6ZGxxIn0=")})
		if errCode(err) != "ResourceNotFoundException" {
			t.Fatalf("enforce=%v: handle of an empty namespace: %v, want ResourceNotFoundException", enforce, err)
		}
	}
}

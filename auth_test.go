package fanout_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go"

	"github.com/fanout/fanout"
	"github.com/fanout/fanout/internal/sdktest"
)

const (
	authKey    = "AKIAFANOUTTEST000001"
	authSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
)

func startAuth(t *testing.T) *fanout.Server {
	return startServer(t, fanout.Options{Credentials: []fanout.Credential{{AccessKeyID: authKey, SecretAccessKey: authSecret, Account: "111111111111"}}})
}

func authClients(s *fanout.Server, key, secret string) (*sqs.Client, *sns.Client) {
	cfg := aws.Config{
		Region:           "us-east-1",
		Credentials:      credentials.NewStaticCredentialsProvider(key, secret, ""),
		HTTPClient:       sdktest.HTTPClient(),
		RetryMaxAttempts: 1,
	}
	return sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(s.URL()) }),
		sns.NewFromConfig(cfg, func(o *sns.Options) { o.BaseEndpoint = aws.String(s.URL()) })
}

func errorCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode() + ": " + ae.ErrorMessage()
	}
	if err == nil {
		return "no error"
	}
	return err.Error()
}

// TestCredentialsWithSDKClients: with --credentials, aws-sdk-go-v2's own
// signer decides, over SQS's JSON protocol and SNS's Query protocol: the
// right key passes, a wrong secret is SignatureDoesNotMatch, an unknown key
// InvalidClientTokenId, both 403 as on AWS.
func TestCredentialsWithSDKClients(t *testing.T) {
	t.Parallel()
	s := startAuth(t)
	ctx := context.Background()
	q, n := authClients(s, authKey, authSecret)
	if _, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("authq")}); err != nil {
		t.Fatalf("right key, SQS: %v", err)
	}
	if _, err := n.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("autht")}); err != nil {
		t.Fatalf("right key, SNS: %v", err)
	}
	for _, c := range []struct{ key, secret, want string }{
		{authKey, "wrong", "SignatureDoesNotMatch: The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details."},
		{"AKIAUNKNOWN", authSecret, "InvalidClientTokenId: The security token included in the request is invalid."},
	} {
		q, n := authClients(s, c.key, c.secret)
		_, err := q.ListQueues(ctx, &sqs.ListQueuesInput{})
		if got := errorCode(err); got != c.want {
			t.Errorf("SQS JSON, key %s: %s", c.key, got)
		}
		var re interface{ HTTPStatusCode() int }
		if !errors.As(err, &re) || re.HTTPStatusCode() != 403 {
			t.Errorf("SQS JSON, key %s: status %v", c.key, err)
		}
		_, err = n.ListTopics(ctx, &sns.ListTopicsInput{})
		if got := errorCode(err); got != c.want {
			t.Errorf("SNS Query, key %s: %s", c.key, got)
		}
	}
}

// signedQuery is an SQS Query call signed by the SDK's signer at time at.
func signedQuery(t *testing.T, s *fanout.Server, secret string, at time.Time, body string) *http.Request {
	t.Helper()
	req := formRequest(t, "POST", s.URL()+"/", formType, body)
	sum := sha256.Sum256([]byte(body))
	if err := v4.NewSigner().SignHTTP(context.Background(), aws.Credentials{AccessKeyID: authKey, SecretAccessKey: secret}, req, hex.EncodeToString(sum[:]), "sqs", "us-east-1", at); err != nil {
		t.Fatal(err)
	}
	return req
}

// TestCredentialsTimeAndPresigned: AWS's 15-minute rule, in both
// directions, with its messages; presigned URLs (signature in the query
// string) pass with the right key, fail with a wrong one, and expire.
func TestCredentialsTimeAndPresigned(t *testing.T) {
	t.Parallel()
	s := startAuth(t)
	const list = "Action=ListQueues&Version=2012-11-05"
	if code, body, _ := raw(t, signedQuery(t, s, authSecret, time.Now(), list)); code != 200 {
		t.Fatalf("now: %d %s", code, body)
	}
	if code, body, _ := raw(t, signedQuery(t, s, authSecret, time.Now().Add(-10*time.Minute), list)); code != 200 {
		t.Fatalf("10 minutes ago is within the rule: %d %s", code, body)
	}
	code, body, _ := raw(t, signedQuery(t, s, authSecret, time.Now().Add(-20*time.Minute), list))
	if code != 403 || !strings.Contains(body, "<Code>SignatureDoesNotMatch</Code><Message>Signature expired: ") || !strings.Contains(body, " - 15 min.)</Message>") {
		t.Fatalf("20 minutes ago: %d %s", code, body)
	}
	code, body, _ = raw(t, signedQuery(t, s, authSecret, time.Now().Add(20*time.Minute), list))
	if code != 403 || !strings.Contains(body, "<Code>SignatureDoesNotMatch</Code><Message>Signature not yet current: ") || !strings.Contains(body, " + 15 min.)</Message>") {
		t.Fatalf("20 minutes ahead: %d %s", code, body)
	}
	// A tampered body: signed for one call, sent with another.
	req := signedQuery(t, s, authSecret, time.Now(), list)
	tampered := formRequest(t, "POST", s.URL()+"/", formType, "Action=CreateQueue&Version=2012-11-05&QueueName=evil")
	tampered.Header = req.Header.Clone()
	tampered.Header.Del("Content-Length")
	if code, body, _ = raw(t, tampered); code != 403 || !strings.Contains(body, "<Code>SignatureDoesNotMatch</Code>") {
		t.Fatalf("tampered body: %d %s", code, body)
	}

	presign := func(secret string, at time.Time, expires string) *http.Request {
		req := formRequest(t, "GET", s.URL()+"/?"+list+"&X-Amz-Expires="+expires, "", "")
		sum := sha256.Sum256(nil)
		u, _, err := v4.NewSigner().PresignHTTP(context.Background(), aws.Credentials{AccessKeyID: authKey, SecretAccessKey: secret}, req, hex.EncodeToString(sum[:]), "sqs", "us-east-1", at)
		if err != nil {
			t.Fatal(err)
		}
		return formRequest(t, "GET", u, "", "")
	}
	// With --credentials a presigned GET is served, as on AWS: no page can
	// forge one without the secret.
	if code, body, _ = raw(t, presign(authSecret, time.Now(), "300")); code != 200 || !strings.Contains(body, "<ListQueuesResponse") {
		t.Fatalf("presigned GET: %d %s", code, body)
	}
	if code, body, _ = raw(t, presign("wrong", time.Now(), "300")); code != 403 || !strings.Contains(body, "<Code>SignatureDoesNotMatch</Code>") {
		t.Fatalf("presigned GET, wrong secret: %d %s", code, body)
	}
	if code, body, _ = raw(t, presign(authSecret, time.Now().Add(-2*time.Minute), "60")); code != 400 || !strings.Contains(body, "<Code>RequestExpired</Code>") {
		t.Fatalf("presigned GET, expired: %d %s", code, body)
	}
	// Unsigned calls get AWS's answer in each protocol.
	if code, body, _ = raw(t, formRequest(t, "POST", s.URL()+"/", formType, list)); code != 403 || !strings.Contains(body, "<Code>MissingAuthenticationToken</Code>") {
		t.Fatalf("unsigned Query: %d %s", code, body)
	}
	req = formRequest(t, "POST", s.URL()+"/", "application/x-amz-json-1.0", "{}")
	req.Header.Set("X-Amz-Target", "AmazonSQS.ListQueues")
	code, body, h := raw(t, req)
	if code != 403 || !strings.Contains(body, `"__type":"com.amazon.coral.service#MissingAuthenticationTokenException"`) || h.Get("X-Amzn-Query-Error") != "MissingAuthenticationToken;Sender" {
		t.Fatalf("unsigned JSON: %d %s %v", code, body, h)
	}
}

// TestCredentialsWithCurlCLIAndBoto3: the signers of curl (--aws-sigv4),
// the AWS CLI 2.9 (SQS over Query), the AWS CLI 1.x and boto3 pass with the
// right key and fail with a wrong secret or an unknown key.
func TestCredentialsWithCurlCLIAndBoto3(t *testing.T) {
	t.Parallel()
	s := startAuth(t)
	type tool struct {
		name string
		argv func(key, secret string) []string
	}
	py := `import sys, boto3, botocore.exceptions as e
c = boto3.client(sys.argv[1], endpoint_url=sys.argv[2], region_name="us-east-1", aws_access_key_id=sys.argv[3], aws_secret_access_key=sys.argv[4])
try:
    c.list_queues() if sys.argv[1] == "sqs" else c.list_topics()
    print("OK")
except e.ClientError as x:
    print(x.response["Error"]["Code"])`
	tools := []tool{
		{"curl", func(k, sec string) []string {
			return []string{"curl", "-s", s.URL() + "/", "--aws-sigv4", "aws:amz:us-east-1:sqs", "--user", k + ":" + sec, "-d", "Action=ListQueues", "-d", "Version=2012-11-05"}
		}},
		{"/usr/bin/aws", func(k, sec string) []string {
			return []string{"/usr/bin/aws", "--endpoint-url", s.URL(), "sqs", "list-queues"}
		}},
		{"aws", func(k, sec string) []string { return []string{"aws", "--endpoint-url", s.URL(), "sns", "list-topics"} }},
		{"python3", func(k, sec string) []string { return []string{"python3", "-c", py, "sqs", s.URL(), k, sec} }},
		{"python3", func(k, sec string) []string { return []string{"python3", "-c", py, "sns", s.URL(), k, sec} }},
	}
	home := t.TempDir()
	for _, tl := range tools {
		path, err := exec.LookPath(tl.name)
		if err != nil {
			if os.Getenv("FANOUT_REQUIRE_CLI") != "" {
				t.Fatalf("%s: %v", tl.name, err)
			}
			t.Logf("skipping %s: %v", tl.name, err)
			continue
		}
		if tl.name == "aws" && filepath.Clean(path) == "/usr/bin/aws" {
			continue // only the Debian CLI is on PATH: already run
		}
		for _, c := range []struct{ key, secret, want string }{
			{authKey, authSecret, ""},
			{authKey, "wrong", "SignatureDoesNotMatch"},
			{"AKIAUNKNOWN", authSecret, "InvalidClientTokenId"},
		} {
			if strings.Contains(tl.name, "aws") && c.want == "InvalidClientTokenId" {
				continue // each CLI run costs seconds; the SDKs cover the unknown key
			}
			argv := tl.argv(c.key, c.secret)
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Env = append(os.Environ(), "HOME="+home, "AWS_ACCESS_KEY_ID="+c.key, "AWS_SECRET_ACCESS_KEY="+c.secret,
				"AWS_DEFAULT_REGION=us-east-1", "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null", "AWS_MAX_ATTEMPTS=1", "AWS_PAGER=")
			out, err := cmd.CombinedOutput()
			got := string(out)
			switch {
			case c.want == "" && (err != nil || strings.Contains(got, "Error") || strings.Contains(got, "InvalidClientTokenId")):
				t.Errorf("%v, right key: %v %s", argv[:3], err, got)
			case c.want != "" && !strings.Contains(got, c.want):
				t.Errorf("%v, key %s secret %s: want %s, got %v %s", argv[:3], c.key, c.secret, c.want, err, got)
			}
		}
	}
}

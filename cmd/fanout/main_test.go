package main

import (
	"bufio"
	"context"
	"encoding/json"
	"github.com/fanout/fanout/internal/sdktest"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// buildBinary builds cmd/fanout once for the tests of this package.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "fanout")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

var endpointRE = regexp.MustCompile(`endpoint=(http://\S+)`)

// startBinary runs the binary and returns its endpoint, read from its log line.
func startBinary(t *testing.T, bin string, env []string, args ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := bufio.NewScanner(stderr)
	found := make(chan string, 1)
	go func() {
		for lines.Scan() {
			if m := endpointRE.FindStringSubmatch(lines.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	select {
	case ep := <-found:
		return cmd, ep
	case <-time.After(10 * time.Second):
		t.Fatal("fanout did not log its endpoint")
	}
	return nil, ""
}

func TestBinaryServesHealthAndShutsDownCleanly(t *testing.T) {
	bin := buildBinary(t)
	cmd, ep := startBinary(t, bin, []string{"FANOUT_REGION=eu-west-1"}, "--addr", "127.0.0.1:0", "--log-level", "info")
	resp, err := http.Get(ep + "/_fanout/health")
	if err != nil {
		t.Fatal(err)
	}
	var health struct {
		Status, Version string
		UptimeSeconds   float64
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err := json.Unmarshal(b, &health); err != nil || resp.StatusCode != 200 || health.Status != "ok" || health.Version == "" {
		t.Fatalf("health %d %s", resp.StatusCode, b)
	}

	c := sqs.NewFromConfig(aws.Config{Region: "eu-west-1", Credentials: credentials.NewStaticCredentialsProvider("a", "b", ""), HTTPClient: sdktest.HTTPClient()},
		func(o *sqs.Options) { o.BaseEndpoint = aws.String(ep) })
	q, err := c.CreateQueue(context.Background(), &sqs.CreateQueueInput{QueueName: aws.String("sig")})
	if err != nil {
		t.Fatal(err)
	}
	attrs, _ := c.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{QueueUrl: q.QueueUrl, AttributeNames: []types.QueueAttributeName{"QueueArn"}})
	if !strings.HasPrefix(attrs.Attributes["QueueArn"], "arn:aws:sqs:eu-west-1:000000000000:") {
		t.Fatalf("FANOUT_REGION not applied: %v", attrs.Attributes)
	}
	// A long poll in progress returns, empty, when the server is told to stop.
	polled := make(chan error, 1)
	go func() {
		out, err := c.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: q.QueueUrl, WaitTimeSeconds: 20})
		if err == nil && len(out.Messages) != 0 {
			err = io.ErrUnexpectedEOF
		}
		polled <- err
	}()
	time.Sleep(200 * time.Millisecond) // let the poll reach the server
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-polled:
		if err != nil {
			t.Fatalf("long poll on shutdown: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("long poll outlived the server")
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("did not exit after SIGTERM")
	}
}

func TestBadFlagsFail(t *testing.T) {
	t.Parallel()
	if err := run([]string{"--log-level", "loud"}); err == nil {
		t.Fatal("bad log level accepted")
	}
	if err := run([]string{"--nope"}); err == nil {
		t.Fatal("unknown flag accepted")
	}
}

// TestAWSCLISmoke drives the built binary with Debian's AWS CLI 2.9, which
// speaks the SQS Query protocol. .ci/run installs it; set FANOUT_REQUIRE_CLI=1
// to fail instead of skipping where it is missing.
func TestAWSCLISmoke(t *testing.T) {
	if _, err := os.Stat("/usr/bin/aws"); err != nil {
		if os.Getenv("FANOUT_REQUIRE_CLI") != "" {
			t.Fatal("/usr/bin/aws (Debian's awscli package) is required")
		}
		t.Skip("Debian's awscli is not installed (apt-get install awscli); .ci/run installs it")
	}
	script := filepath.Join("..", "..", ".ci", "cli-smoke.sh")
	if _, err := os.Stat(script); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", filepath.Join(".ci", "cli-smoke.sh"))
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("cli smoke: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

// TestBoto3Smoke drives the built binary with boto3, a second real client:
// SQS over AWS JSON 1.0 through botocore's serializers and MD5 checks, and
// SNS over the Query protocol. It skips where no python3 with boto3 is
// found (the machine image ships one), unless FANOUT_REQUIRE_BOTO3 is set.
func TestBoto3Smoke(t *testing.T) {
	if err := exec.Command("python3", "-c", "import boto3").Run(); err != nil {
		if os.Getenv("FANOUT_REQUIRE_BOTO3") != "" {
			t.Fatalf("python3 with boto3 is required: %v", err)
		}
		t.Skip("no python3 with boto3 on PATH")
	}
	bin := buildBinary(t)
	_, ep := startBinary(t, bin, nil, "--addr", "127.0.0.1:0")
	out, err := exec.Command("python3", filepath.Join("..", "..", ".ci", "boto3-smoke.py"), ep).CombinedOutput()
	if err != nil {
		t.Fatalf("boto3 smoke: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "0 failed") {
		t.Fatalf("boto3 smoke: %s", out)
	}
	t.Logf("%s", out)
}

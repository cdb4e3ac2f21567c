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
	cmd, ep := startBinary(t, bin, []string{"FANOUT_REGION=eu-west-1", "FANOUT_ADDR=127.0.0.1:1", "FANOUT_PPROF="},
		"serve", "--addr", "127.0.0.1:0", "--log-level", "info") // the flag wins over FANOUT_ADDR
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

func TestCommandLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args   []string
		status int
		out    []string // in stdout
		errOut string   // in the one line of stderr
	}{
		{args: []string{"--help"}, out: []string{"serve", "filter", "version", "/_fanout/health", "/_fanout/clock", "/_fanout/reset"}},
		{args: []string{"-h"}, out: []string{"fanout [serve] [flags]"}},
		{args: []string{"help"}, out: []string{"fanout filter [flags]", "/_fanout/sqs/queues"}},
		{args: []string{"help", "serve"}, out: []string{"-addr", "-endpoint-timeout", "FANOUT_ADDR"}},
		{args: []string{"serve", "--help"}, out: []string{"-addr", "-region"}},
		{args: []string{"help", "filter"}, out: []string{"--policy"}},
		{args: []string{"version"}, out: []string{"fanout 0.1.0-dev"}},
		{args: []string{"--version"}, out: []string{"fanout 0.1.0-dev"}},
		{args: []string{"serve", "--version"}, out: []string{"fanout 0.1.0-dev"}},
		{args: []string{"frobnicate"}, status: 2, errOut: `unknown command "frobnicate"`},
		{args: []string{"help", "bogus"}, status: 2, errOut: `unknown command "bogus"`},
		{args: []string{"version", "now"}, status: 2, errOut: `unexpected argument "now"`},
		{args: []string{"serve", "--addr", "127.0.0.1:0", "extra"}, status: 2, errOut: `unexpected argument "extra"`},
		{args: []string{"--addr", "127.0.0.1:0", "serve"}, status: 2, errOut: `unexpected argument "serve"`},
		{args: []string{"serve", "--nope"}, status: 2, errOut: "flag provided but not defined: -nope"},
		{args: []string{"--log-level", "loud"}, status: 2, errOut: `--log-level "loud"`},
		{args: []string{"--clock", "sundial"}, status: 2, errOut: `--clock "sundial"`},
		{args: []string{"--log-format", "xml"}, status: 2, errOut: `--log-format "xml"`},
		{args: []string{"--region", "Mars"}, status: 2, errOut: `--region "Mars" is not an AWS region name`},
		{args: []string{"--region", "us-east"}, status: 2, errOut: `--region "us-east"`},
		{args: []string{"--account", "12345"}, status: 2, errOut: `--account "12345" is not a 12-digit`},
		{args: []string{"--compat", "moto"}, status: 2, errOut: `--compat "moto": use localstack`},
		{args: []string{"--queue-url-style", "virtual"}, status: 2, errOut: `--queue-url-style "virtual"`},
		{args: []string{"--account", "12345678901a"}, status: 2, errOut: `--account`},
		{args: []string{"--endpoint-timeout", "5"}, status: 2, errOut: "invalid value"},
		{args: []string{"--lambda", "nourl"}, status: 2, errOut: `"nourl" is not NAME=URL`},
		{args: []string{"--data-dir", "d", "--durability", "fast"}, status: 2, errOut: `--durability "fast": use strict or relaxed`},
		{args: []string{"--durability", "relaxed"}, status: 2, errOut: "need --data-dir"},
		{args: []string{"--sync-interval", "1s"}, status: 2, errOut: "need --data-dir"},
		{args: []string{"--data-dir", "d", "--sync-interval", "1s"}, status: 2, errOut: "--sync-interval is for --durability relaxed"},
		{args: []string{"--data-dir", "d", "--durability", "relaxed", "--sync-interval", "0s"}, status: 2, errOut: `--sync-interval 0s: use a positive duration`},
	} {
		var stdout, stderr strings.Builder
		status := cli(tc.args, &stdout, &stderr)
		if status != tc.status {
			t.Errorf("fanout %v: status %d, want %d (stderr %q)", tc.args, status, tc.status, stderr.String())
			continue
		}
		for _, want := range tc.out {
			if !strings.Contains(stdout.String(), want) {
				t.Errorf("fanout %v: stdout lacks %q:\n%s", tc.args, want, stdout.String())
			}
		}
		if tc.errOut != "" {
			e := stderr.String()
			if !strings.Contains(e, tc.errOut) || strings.Count(e, "\n") != 1 {
				t.Errorf("fanout %v: stderr %q, want one line with %q", tc.args, e, tc.errOut)
			}
		} else if stderr.Len() > 0 {
			t.Errorf("fanout %v: stderr %q", tc.args, stderr.String())
		}
	}
}

func TestEnvironmentVariablesThatDoNotParse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, value, want string }{
		{"FANOUT_PPROF", "yes please", `FANOUT_PPROF="yes please": not a boolean (use true or false)`},
		{"FANOUT_NO_PURGE_WAIT", "on", "FANOUT_NO_PURGE_WAIT"},
		{"FANOUT_ENDPOINT_TIMEOUT", "5", `FANOUT_ENDPOINT_TIMEOUT="5": not a duration (use e.g. 5s or 1m30s)`},
		{"FANOUT_LAMBDA", "a=http://x,broken", `"broken" is not NAME=URL`},
		{"FANOUT_REGION", "moon-1", `--region "moon-1"`},
		{"FANOUT_ACCOUNT", "42", `--account "42"`},
	} {
		lookup := func(k string) (string, bool) {
			if k == tc.name {
				return tc.value, true
			}
			return "", false
		}
		err := serve(nil, lookup, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s=%s: %v, want %q", tc.name, tc.value, err, tc.want)
		}
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

package e2e

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/fanout/fanout"
)

// TestJavaScriptSDKv3 drives fanout with the AWS SDK for JavaScript v3
// (jssdk.js): SQS over AWS JSON 1.0 with the SDK's MD5 checks, a filtered
// SNS fanout, and typed errors on both services.
func TestJavaScriptSDKv3(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("node_modules/@aws-sdk/client-sqs"); err != nil {
		if os.Getenv("FANOUT_REQUIRE_NODE") == "1" {
			t.Fatal("node_modules/@aws-sdk/client-sqs is missing: run npm ci in e2e/")
		}
		t.Skip("node_modules/@aws-sdk/client-sqs is missing (npm ci in e2e/); FANOUT_REQUIRE_NODE=1 makes this a failure")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not installed")
	}
	s, err := fanout.Start(context.Background(), fanout.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cmd := exec.Command(node, "jssdk.js", s.URL())
	cmd.Env = append(os.Environ(), "AWS_SDK_JS_SUPPRESS_MAINTENANCE_MODE_MESSAGE=1")
	out, err := cmd.Output() // stdout only: the SDK warns about node versions on stderr
	if err != nil || !strings.Contains(string(out), "0 failed") {
		t.Fatalf("jssdk.js: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

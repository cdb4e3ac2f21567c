package api_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fanout/fanout"
)

// TestAWSCLI drives SNS with Debian's AWS CLI 2.9 (/usr/bin/aws), which
// speaks the Query protocol to SNS and SQS.
// It is skipped where the CLI is missing, unless FANOUT_REQUIRE_CLI is set
// (as .ci/run does).
func TestAWSCLI(t *testing.T) {
	t.Parallel()
	const cli = "/usr/bin/aws"
	if _, err := os.Stat(cli); err != nil {
		if os.Getenv("FANOUT_REQUIRE_CLI") != "" {
			t.Fatal("/usr/bin/aws (Debian's awscli package) is required")
		}
		t.Skip("Debian's awscli is not installed")
	}
	e := shared(t)
	home := t.TempDir()
	aws := func(args ...string) (map[string]any, error) {
		t.Helper()
		cmd := exec.Command(cli, append([]string{"--endpoint-url", e.srv.URL(), "--output", "json"}, args...)...)
		cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test",
			"AWS_DEFAULT_REGION=us-east-1", "AWS_PAGER=", "HOME="+home, "AWS_CONFIG_FILE="+home+"/config")
		out, err := cmd.Output()
		if err != nil {
			if ee, ok := err.(*exec.ExitError); ok {
				return nil, &cliError{string(ee.Stderr)}
			}
			return nil, err
		}
		var v map[string]any
		if len(strings.TrimSpace(string(out))) > 0 {
			if err := json.Unmarshal(out, &v); err != nil {
				t.Fatalf("aws %v: %v\n%s", args, err, out)
			}
		}
		return v, nil
	}
	must := func(args ...string) map[string]any {
		t.Helper()
		v, err := aws(args...)
		if err != nil {
			t.Fatalf("aws %v: %v", args, err)
		}
		return v
	}

	// The README's walkthrough (TestREADMEWalkthrough) covers the fanout
	// itself; this covers the other calls, with few CLI runs (each starts
	// Python).
	topic := must("sns", "create-topic", "--name", name(t, "orders"), "--tags", "Key=team,Value=core")["TopicArn"].(string)
	url := must("sqs", "create-queue", "--queue-name", name(t, "q"))["QueueUrl"].(string)
	arn := "arn:aws:sqs:us-east-1:000000000000:" + url[strings.LastIndex(url, "/")+1:]
	sub := must("sns", "subscribe", "--topic-arn", topic, "--protocol", "sqs", "--notification-endpoint", arn,
		"--attributes", `{"RawMessageDelivery":"true"}`)["SubscriptionArn"].(string)
	if !strings.HasPrefix(sub, topic+":") {
		t.Fatalf("subscribe gave %s", sub)
	}
	ok := must("sns", "publish-batch", "--topic-arn", topic, "--publish-batch-request-entries",
		`[{"Id":"a","Message":"one","MessageAttributes":{"n":{"DataType":"Number","StringValue":"1"}}},{"Id":"b","Message":"two"}]`)["Successful"].([]any)
	if len(ok) != 2 {
		t.Fatalf("publish-batch %v", ok)
	}
	msgs := must("sqs", "receive-message", "--queue-url", url, "--max-number-of-messages", "10", "--message-attribute-names", "All")["Messages"].([]any)
	if len(msgs) != 2 || msgs[0].(map[string]any)["Body"] != "one" {
		t.Fatalf("received %v", msgs)
	}
	attrs := must("sns", "get-subscription-attributes", "--subscription-arn", sub)["Attributes"].(map[string]any)
	if attrs["RawMessageDelivery"] != "true" || attrs["Endpoint"] != arn {
		t.Fatalf("subscription attributes %v", attrs)
	}
	tags := must("sns", "list-tags-for-resource", "--resource-arn", topic)["Tags"].([]any)
	if len(tags) != 1 {
		t.Fatalf("tags %v", tags)
	}
	if _, err := aws("sns", "get-topic-attributes", "--topic-arn", topic+"-missing"); err == nil || !strings.Contains(err.Error(), "(NotFound)") || !strings.Contains(err.Error(), "Topic does not exist") {
		t.Fatalf("missing topic: %v", err)
	}

	// A second raw queue: a long message is stored once for both
	// (sqs.SharedBody), and each answers it whole, with the MD5 the CLI
	// checks.
	url2 := must("sqs", "create-queue", "--queue-name", name(t, "q2"))["QueueUrl"].(string)
	must("sns", "subscribe", "--topic-arn", topic, "--protocol", "sqs", "--notification-endpoint",
		"arn:aws:sqs:us-east-1:000000000000:"+url2[strings.LastIndex(url2, "/")+1:], "--attributes", `{"RawMessageDelivery":"true"}`)
	long := strings.Repeat("fan out ünïcode ", 200)
	must("sns", "publish", "--topic-arn", topic, "--message", long)
	for _, u := range []string{url, url2} {
		got := must("sqs", "receive-message", "--queue-url", u, "--max-number-of-messages", "10", "--visibility-timeout", "0")["Messages"].([]any)
		var found bool
		for _, m := range got {
			found = found || m.(map[string]any)["Body"] == long
		}
		if !found {
			t.Fatalf("queue %s: the long message is missing from %d received", u, len(got))
		}
	}
	must("sns", "delete-topic", "--topic-arn", topic)
}

type cliError struct{ stderr string }

func (e *cliError) Error() string { return e.stderr }

// TestREADMEWalkthrough runs the SNS walkthrough of the README as written,
// with Debian's AWS CLI, against a fanout of its own that enforces queue
// policies: the README must tell the truth.
func TestREADMEWalkthrough(t *testing.T) {
	t.Parallel()
	const cli = "/usr/bin/aws"
	if _, err := os.Stat(cli); err != nil {
		if os.Getenv("FANOUT_REQUIRE_CLI") != "" {
			t.Fatal("/usr/bin/aws (Debian's awscli package) is required")
		}
		t.Skip("Debian's awscli is not installed")
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "<!-- sns-walkthrough")
	if !ok {
		t.Fatal("README has no SNS walkthrough marker")
	}
	_, rest, _ = strings.Cut(rest, "```sh\n")
	script, _, ok := strings.Cut(rest, "```")
	if !ok {
		t.Fatal("README's SNS walkthrough has no sh block")
	}
	e := start(t, fanout.Options{EnforcePolicies: true})
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(cli, filepath.Join(bin, "aws")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"FANOUT_ENDPOINT="+e.srv.URL(), "HOME="+dir, "AWS_CONFIG_FILE="+filepath.Join(dir, "config"), "AWS_PAGER=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("walkthrough: %v\n%s", err, out)
	}
	got := string(out)
	t.Logf("walkthrough output:\n%s", got)
	// Two envelopes and one raw message with its attribute.
	if strings.Count(got, `\"Type\" : \"Notification\"`) != 2 || !strings.Contains(got, `"Body": "{\"orderId\":\"1001\"}"`) ||
		!strings.Contains(got, `"customer_type": {`) {
		t.Fatalf("walkthrough output:\n%s", got)
	}
	if c := e.stats(t); c.Delivered != 3 || c.Failed != 0 {
		t.Fatalf("deliveries %+v", c)
	}
}

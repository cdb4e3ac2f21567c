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

// TestAWSCLIWalkthrough runs the README's SNS walkthrough with Debian's AWS
// CLI 2.9 (/usr/bin/aws), which speaks the Query protocol to SNS and SQS.
// It is skipped where the CLI is missing, unless FANOUT_REQUIRE_CLI is set
// (as .ci/run does).
func TestAWSCLIWalkthrough(t *testing.T) {
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

	topicName := name(t, "orders")
	topic := must("sns", "create-topic", "--name", topicName)["TopicArn"].(string)
	type q struct{ url, arn string }
	var queues []q
	for _, what := range []string{"fulfillment", "inventory", "email"} {
		url := must("sqs", "create-queue", "--queue-name", name(t, what))["QueueUrl"].(string)
		arn := must("sqs", "get-queue-attributes", "--queue-url", url, "--attribute-names", "QueueArn")["Attributes"].(map[string]any)["QueueArn"].(string)
		policy := allowSNS(queue{url, arn}, topic)
		attrs, _ := json.Marshal(map[string]string{"Policy": policy})
		must("sqs", "set-queue-attributes", "--queue-url", url, "--attributes", string(attrs))
		sub := must("sns", "subscribe", "--topic-arn", topic, "--protocol", "sqs", "--notification-endpoint", arn)["SubscriptionArn"].(string)
		if !strings.HasPrefix(sub, topic+":") {
			t.Fatalf("subscribe gave %s", sub)
		}
		queues = append(queues, q{url, arn})
	}
	out := must("sns", "publish", "--topic-arn", topic, "--subject", "Order placed", "--message", `{"order":42}`,
		"--message-attributes", `{"store":{"DataType":"String","StringValue":"example_corp"}}`)
	id := out["MessageId"].(string)
	for _, qu := range queues {
		msgs := must("sqs", "receive-message", "--queue-url", qu.url)["Messages"].([]any)
		var env map[string]any
		if err := json.Unmarshal([]byte(msgs[0].(map[string]any)["Body"].(string)), &env); err != nil {
			t.Fatal(err)
		}
		if env["MessageId"] != id || env["Message"] != `{"order":42}` || env["Subject"] != "Order placed" {
			t.Fatalf("envelope %v", env)
		}
	}
	subs := must("sns", "list-subscriptions-by-topic", "--topic-arn", topic)["Subscriptions"].([]any)
	if len(subs) != 3 {
		t.Fatalf("subscriptions %v", subs)
	}
	attrs := must("sns", "get-topic-attributes", "--topic-arn", topic)["Attributes"].(map[string]any)
	if attrs["SubscriptionsConfirmed"] != "3" {
		t.Fatalf("topic attributes %v", attrs)
	}
	must("sns", "set-subscription-attributes", "--subscription-arn", subs[0].(map[string]any)["SubscriptionArn"].(string),
		"--attribute-name", "RawMessageDelivery", "--attribute-value", "true")
	must("sns", "publish-batch", "--topic-arn", topic, "--publish-batch-request-entries", `[{"Id":"a","Message":"one"},{"Id":"b","Message":"two"}]`)
	must("sns", "tag-resource", "--resource-arn", topic, "--tags", "Key=team,Value=core")
	tags := must("sns", "list-tags-for-resource", "--resource-arn", topic)["Tags"].([]any)
	if len(tags) != 1 {
		t.Fatalf("tags %v", tags)
	}
	if _, err := aws("sns", "get-topic-attributes", "--topic-arn", topic+"-missing"); err == nil || !strings.Contains(err.Error(), "(NotFound)") || !strings.Contains(err.Error(), "Topic does not exist") {
		t.Fatalf("missing topic: %v", err)
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

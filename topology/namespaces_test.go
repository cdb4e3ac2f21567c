package topology_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awssns "github.com/aws/aws-sdk-go-v2/service/sns"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/fanout/fanout"
	"github.com/fanout/fanout/internal/sdktest"
	"github.com/fanout/fanout/topology"
)

func clientsOf(srv *fanout.Server, account, region string) (*awssqs.Client, *awssns.Client) {
	cfg := aws.Config{Region: region, Credentials: credentials.NewStaticCredentialsProvider(account, "secret", ""), HTTPClient: sdktest.HTTPClient()}
	return awssqs.NewFromConfig(cfg, func(o *awssqs.Options) { o.BaseEndpoint = aws.String(srv.URL()) }),
		awssns.NewFromConfig(cfg, func(o *awssns.Options) { o.BaseEndpoint = aws.String(srv.URL()) })
}

// TestNamespacesRoundTrip: a file with sections for other accounts and
// regions creates each where it says (seen by those accounts' SDK
// clients), exports the same over HTTP (what fanout export reads), and the
// export applied to a fresh server (what fanout apply sends) exports the
// same again; applied to its own server it changes nothing.
func TestNamespacesRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	file, err := topology.ReadFile("testdata/namespaces.yaml")
	if err != nil {
		t.Fatal(err)
	}
	a := start(t, fanout.Options{Topology: file})
	eu, euSNS := clientsOf(a, "111111111111", "eu-west-1")
	billing, err := eu.GetQueueUrl(ctx, &awssqs.GetQueueUrlInput{QueueName: aws.String("billing")})
	if err != nil {
		t.Fatal(err)
	}
	attrs, err := eu.GetQueueAttributes(ctx, &awssqs.GetQueueAttributesInput{QueueUrl: billing.QueueUrl, AttributeNames: []sqsAttr{"All"}})
	if err != nil || !strings.Contains(attrs.Attributes["RedrivePolicy"], "arn:aws:sqs:eu-west-1:111111111111:billing-dlq") || attrs.Attributes["VisibilityTimeout"] != "45" {
		t.Fatalf("billing in 111111111111/eu-west-1: %v %v", err, attrs)
	}
	topics, err := euSNS.ListTopics(ctx, &awssns.ListTopicsInput{})
	if err != nil || len(topics.Topics) != 1 || *topics.Topics[0].TopicArn != "arn:aws:sns:eu-west-1:111111111111:audit" {
		t.Fatalf("topics of 111111111111/eu-west-1: %v %+v", err, topics)
	}
	other, _ := clientsOf(a, "222222222222", "us-east-1")
	if _, err := other.GetQueueUrl(ctx, &awssqs.GetQueueUrlInput{QueueName: aws.String("orders")}); err != nil {
		t.Fatalf("orders of 222222222222: %v", err)
	}
	// The root topic delivers to the other account's queue at once: a file
	// speaks for both accounts, so nothing waits for confirmation.
	_, rootSNS := clients(a)
	if _, err := rootSNS.Publish(ctx, &awssns.PublishInput{TopicArn: aws.String("arn:aws:sns:us-east-1:000000000000:events"), Message: aws.String("across")}); err != nil {
		t.Fatal(err)
	}
	got, err := eu.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: billing.QueueUrl, WaitTimeSeconds: 1})
	if err != nil || len(got.Messages) != 1 || !strings.Contains(*got.Messages[0].Body, "across") {
		t.Fatalf("delivery across accounts: %v %+v", err, got)
	}

	code, body := do(t, "GET", a.URL()+"/_fanout/topology?format=json", "", "")
	if code != 200 {
		t.Fatalf("export: %d %s", code, body)
	}
	exported, err := topology.Parse([]byte(body), "export.json")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := normal(t, exported), normal(t, file); !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", " ")
		t.Fatalf("export differs from the file:\n%s", g)
	}
	_, yaml := do(t, "GET", a.URL()+"/_fanout/topology", "", "")
	b := start(t, fanout.Options{})
	if code, body := do(t, "POST", b.URL()+"/_fanout/topology", "application/yaml", yaml); code != 200 || !strings.Contains(body, `"account": "111111111111"`) {
		t.Fatalf("apply the export to a fresh server: %d %s", code, body)
	}
	_, again := do(t, "GET", b.URL()+"/_fanout/topology", "", "")
	if again != yaml {
		t.Fatalf("a fresh server exports differently:\n%s\nwant:\n%s", again, yaml)
	}
	if code, body := do(t, "POST", a.URL()+"/_fanout/topology", "application/yaml", yaml); code != 200 || strings.TrimSpace(body) != `{
  "changes": []
}` {
		t.Fatalf("the export applied to its own server: %d %s", code, body)
	}

	// ?account= and ?region= export a part, as sections, so that applying
	// it puts it back where it came from.
	_, part := do(t, "GET", a.URL()+"/_fanout/topology?format=json&account=222222222222", "", "")
	var p topology.Topology
	if err := json.Unmarshal([]byte(part), &p); err != nil || len(p.Queues) != 0 || len(p.Namespaces) != 1 || p.Namespaces[0].Account != "222222222222" {
		t.Fatalf("export of one account: %v %s", err, part)
	}
	_, part = do(t, "GET", a.URL()+"/_fanout/topology?format=json&region=us-east-1", "", "")
	p = topology.Topology{}
	if err := json.Unmarshal([]byte(part), &p); err != nil || len(p.Queues) != 1 || len(p.Namespaces) != 1 {
		t.Fatalf("export of one region: %v %s", err, part)
	}
	if code, _ := do(t, "GET", a.URL()+"/_fanout/topology?account=1", "", ""); code != 400 {
		t.Fatalf("export of a malformed account: %d", code)
	}

	// Prune deletes only in the namespaces the file has a section for.
	prune := "queues:\n  orders: {}\nnamespaces:\n  - account: \"222222222222\"\n"
	code, body = do(t, "POST", a.URL()+"/_fanout/topology?prune=true", "application/yaml", prune)
	if code != 200 || !strings.Contains(body, `"kind": "queue",
      "name": "orders",
      "account": "222222222222"`) || strings.Contains(body, "111111111111") {
		t.Fatalf("prune: %d %s", code, body)
	}
	if _, err := eu.GetQueueUrl(ctx, &awssqs.GetQueueUrlInput{QueueName: aws.String("billing")}); err != nil {
		t.Fatalf("prune reached a namespace the file has no section for: %v", err)
	}
}

type sqsAttr = sqstypes.QueueAttributeName

// TestNamespaceSectionErrors: a malformed account or region, two sections
// of one namespace (the root's included, once defaults are filled in),
// and the engines' errors inside a section are reported at their keys.
func TestNamespaceSectionErrors(t *testing.T) {
	t.Parallel()
	src := `namespaces:
  - account: "12"
    region: Mars
  - account: "111111111111"
  - account: "111111111111"
    region: us-east-1
  - account: "000000000000"
  - region: eu-west-1
    queues:
      q:
        attributes: {VisibilityTimeout: 99999}
`
	top, err := topology.Parse([]byte(src), "ns.yaml")
	if err != nil {
		t.Fatal(err)
	}
	err = topology.Validate(top, topology.Options{})
	var errs topology.Errors
	if !errors.As(err, &errs) {
		t.Fatalf("%v", err)
	}
	var lines []string
	for _, e := range errs {
		lines = append(lines, e.Error())
	}
	want := []string{
		`ns.yaml:2:5: namespaces[0].account: "12" is not an account id: 12 digits (quote it in YAML, or leading zeros are lost)`,
		`ns.yaml:3:5: namespaces[0].region: "Mars" is not a region name such as eu-west-1`,
		`ns.yaml:5:5: namespaces[2]: account 111111111111, region us-east-1 is already namespaces[1]: give each namespace one section`,
		`ns.yaml:7:5: namespaces[3]: account 000000000000, region us-east-1 is already the file's root queues and topics (the server's default account and region): give each namespace one section`,
		`ns.yaml:11:22: namespaces[4].queues.q.attributes.VisibilityTimeout: InvalidAttributeValue: Invalid value for the parameter VisibilityTimeout.`,
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("errors:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	top, err = topology.Parse([]byte("namespaces:\n  - region: eu-west-1\n"), "q.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// A server of one namespace (Engines without Namespace) refuses sections.
	srv := start(t, fanout.Options{})
	if _, err := topology.Apply(top, engines(srv), topology.ApplyOptions{}); err == nil || !strings.Contains(err.Error(), "namespaces cannot be applied here") {
		t.Fatalf("sections on engines of one namespace: %v", err)
	}
}

package fanout_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// The wire canary fails the day an SDK this repository tests with starts
// speaking a protocol fanout does not serve for SQS or SNS (as CloudWatch's
// SDKs moved from Query to JSON and CBOR in 2025). fanout serves SQS over
// AWS JSON 1.0 and Query, SNS over Query.
var served = map[string][]string{"sqs": {"json", "query"}, "sns": {"query"}}

// TestWireCanaryGoSDK captures one real request of aws-sdk-go-v2's SQS and
// SNS clients and checks its protocol markers.
func TestWireCanaryGoSDK(t *testing.T) {
	t.Parallel()
	type seen struct{ contentType, target, action string }
	got := make(chan seen, 2)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		form, _ := url.ParseQuery(string(body))
		got <- seen{r.Header.Get("Content-Type"), r.Header.Get("X-Amz-Target"), form.Get("Action")}
		w.WriteHeader(http.StatusInternalServerError) // any answer ends the call
	}))
	defer ts.Close()
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("a", "b", ""), Retryer: func() aws.Retryer { return aws.NopRetryer{} }}
	ctx := context.Background()
	_, _ = sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(ts.URL) }).ListQueues(ctx, &sqs.ListQueuesInput{})
	s := <-got
	if !(s.contentType == "application/x-amz-json-1.0" && s.target == "AmazonSQS.ListQueues") && s.action != "ListQueues" {
		t.Errorf("aws-sdk-go-v2 service/sqs speaks neither AWS JSON 1.0 nor Query: Content-Type %q, X-Amz-Target %q", s.contentType, s.target)
	}
	_, _ = sns.NewFromConfig(cfg, func(o *sns.Options) { o.BaseEndpoint = aws.String(ts.URL) }).ListTopics(ctx, &sns.ListTopicsInput{})
	s = <-got
	if !strings.HasPrefix(s.contentType, "application/x-www-form-urlencoded") || s.action != "ListTopics" || s.target != "" {
		t.Errorf("aws-sdk-go-v2 service/sns no longer speaks Query: Content-Type %q, X-Amz-Target %q, Action %q", s.contentType, s.target, s.action)
	}
}

// TestWireCanaryBotocore reads the installed botocore's service models:
// the protocols it may pick for SQS and SNS must be ones fanout serves.
func TestWireCanaryBotocore(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	const py = `import botocore.session
s = botocore.session.get_session()
for n in ("sqs", "sns"):
    m = s.get_service_model(n).metadata
    print(n, m.get("protocol"), ",".join(m.get("protocols") or [m.get("protocol")]))`
	out, err := exec.Command("python3", "-c", py).CombinedOutput()
	if err != nil {
		if os.Getenv("FANOUT_REQUIRE_CLI") != "" {
			t.Fatalf("botocore: %v %s", err, out)
		}
		t.Skipf("botocore not importable: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			t.Fatalf("botocore said %q", line)
		}
		// botocore uses the first protocol of the list it supports.
		first := strings.Split(f[2], ",")[0]
		if !contains(served[f[0]], f[1]) || !contains(served[f[0]], first) {
			t.Errorf("botocore speaks %s to %s (protocols %s); fanout serves %v", f[1], f[0], f[2], served[f[0]])
		}
	}
}

// TestWireCanaryJSSDK reads the JS SDK v3 clients in e2e/node_modules (npm
// ci in e2e/): SQS must name AWS JSON 1.0 and SNS Query, and neither
// Smithy RPC v2 CBOR.
func TestWireCanaryJSSDK(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ pkg, want string }{
		{"client-sqs", "application/x-amz-json-1.0"},
		{"client-sns", "application/x-www-form-urlencoded"},
	} {
		dir := filepath.Join("e2e", "node_modules", "@aws-sdk", c.pkg, "dist-cjs")
		files, _ := filepath.Glob(filepath.Join(dir, "*.js"))
		more, _ := filepath.Glob(filepath.Join(dir, "*", "*.js"))
		files = append(files, more...)
		if len(files) == 0 {
			if os.Getenv("FANOUT_REQUIRE_CLI") != "" {
				t.Fatalf("%s not installed: run npm ci in e2e/", c.pkg)
			}
			t.Skipf("%s not installed: run npm ci in e2e/", c.pkg)
		}
		var src strings.Builder
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			src.Write(b)
		}
		text := src.String()
		jsonMarker := strings.Contains(text, "AwsJson1_0Protocol") || strings.Contains(text, c.want)
		queryMarker := strings.Contains(text, "AwsQueryProtocol") || strings.Contains(text, c.want)
		switch {
		case c.pkg == "client-sqs" && !jsonMarker, c.pkg == "client-sns" && !queryMarker:
			t.Errorf("@aws-sdk/%s no longer names %s", c.pkg, c.want)
		}
		for _, bad := range []string{"SmithyRpcV2CborProtocol", "AwsSmithyRpcV2CborProtocol", "application/cbor"} {
			if strings.Contains(text, bad) {
				t.Errorf("@aws-sdk/%s speaks %s, which fanout does not serve", c.pkg, bad)
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

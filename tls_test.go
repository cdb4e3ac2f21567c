package fanout_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/fanout/fanout"
	"github.com/fanout/fanout/internal/sdktest"
	"github.com/fanout/fanout/internal/tlsport"
)

// trusting returns an HTTP client that trusts only certPEM.
func trusting(t *testing.T, certPEM []byte) *http.Client {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(certPEM) {
		t.Fatal("no certificate")
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: pool}
	return sdktest.HTTPClientWith(tr)
}

// TestTLSWithSDKClients: --tls serves HTTPS with a certificate made at
// start, on the same port as HTTP; aws-sdk-go-v2 clients that trust that
// certificate call SQS (JSON) and SNS (Query) over it, queue URLs say https,
// and plain HTTP still answers on the port.
func TestTLSWithSDKClients(t *testing.T) {
	t.Parallel()
	s := startServer(t, fanout.Options{TLS: true})
	if !strings.HasPrefix(s.URL(), "https://127.0.0.1:") {
		t.Fatal(s.URL())
	}
	hc := trusting(t, s.TLSCertPEM())
	for _, host := range []string{"127.0.0.1", "localhost"} {
		ep := "https://" + strings.Replace(s.Addr(), "127.0.0.1", host, 1)
		cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""), HTTPClient: hc}
		q := sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(ep) })
		out, err := q.CreateQueue(context.Background(), &sqs.CreateQueueInput{QueueName: aws.String("tls")})
		if err != nil || *out.QueueUrl != ep+"/000000000000/tls" {
			t.Fatalf("SQS over HTTPS at %s: %v %v", ep, out, err)
		}
		n := sns.NewFromConfig(cfg, func(o *sns.Options) { o.BaseEndpoint = aws.String(ep) })
		if _, err := n.CreateTopic(context.Background(), &sns.CreateTopicInput{Name: aws.String("tls")}); err != nil {
			t.Fatalf("SNS over HTTPS at %s: %v", ep, err)
		}
	}
	// A client that does not trust the certificate is refused by its own TLS.
	if _, err := http.Get(s.URL() + "/_fanout/health"); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("untrusting client: %v", err)
	}
	// Plain HTTP on the same port.
	resp, err := http.Get("http://" + s.Addr() + "/_fanout/health")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("HTTP on the TLS port: %v %v", resp, err)
	}
	resp.Body.Close()
	// The certificate is handed out, for CA bundles.
	resp, err = hc.Get(s.URL() + "/_fanout/tls/cert.pem")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != string(s.TLSCertPEM()) {
		t.Fatalf("cert.pem: %s", b)
	}
}

// TestTLSCertFilesAndCLIs: --tls-cert/--tls-key serve a given certificate;
// the AWS CLI 2.9 (Query) with --no-verify-ssl and with that certificate as
// --ca-bundle, and boto3 with it as verify=, call fanout over HTTPS.
func TestTLSCertFilesAndCLIs(t *testing.T) {
	t.Parallel()
	cert, certPEM, err := tlsport.SelfSigned(nil)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(cert.PrivateKey.(*ecdsa.PrivateKey))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if os.WriteFile(certFile, certPEM, 0o600) != nil || os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600) != nil {
		t.Fatal("writing the key pair")
	}
	s := startServer(t, fanout.Options{TLSCertFile: certFile, TLSKeyFile: keyFile})
	if string(s.TLSCertPEM()) != string(certPEM) {
		t.Fatal("the given certificate is not served")
	}
	env := append(os.Environ(), "HOME="+dir, "AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_DEFAULT_REGION=us-east-1",
		"AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null", "AWS_PAGER=")
	runs := [][]string{
		{"/usr/bin/aws", "--endpoint-url", s.URL(), "--no-verify-ssl", "sqs", "create-queue", "--queue-name", "cli-tls"},
		{"/usr/bin/aws", "--endpoint-url", s.URL(), "--ca-bundle", certFile, "sqs", "list-queues"},
		{"python3", "-c", `import sys, boto3
c = boto3.client("sns", endpoint_url=sys.argv[1], region_name="us-east-1", verify=sys.argv[2])
print(c.create_topic(Name="boto-tls")["TopicArn"])`, s.URL(), certFile},
	}
	wants := []string{"/000000000000/cli-tls", "https://127.0.0.1", "arn:aws:sns:us-east-1:000000000000:boto-tls"}
	for i, argv := range runs {
		if _, err := exec.LookPath(argv[0]); err != nil {
			if os.Getenv("FANOUT_REQUIRE_CLI") != "" {
				t.Fatalf("%s: %v", argv[0], err)
			}
			t.Logf("skipping %s: %v", argv[0], err)
			continue
		}
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = env
		out, err := cmd.Output()
		if err != nil || !strings.Contains(string(out), wants[i]) {
			t.Errorf("%v: %v %s", argv[:4], err, out)
		}
	}
}

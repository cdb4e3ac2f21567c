package conformance

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fanout/fanout"
	"github.com/fanout/fanout/clock"
	"github.com/fanout/fanout/internal/sdktest"
)

// What the suite talks to, from the environment:
//
//   - nothing set (or FANOUT_CONFORMANCE_TARGET=fanout): fanout, started
//     in-process; every spec runs, emulator-only ones included.
//   - FANOUT_CONFORMANCE_ENDPOINT=http://host:port: any SNS/SQS emulator
//     at that address, with FANOUT_CONFORMANCE_REGION (us-east-1) and
//     FANOUT_CONFORMANCE_ACCOUNT (000000000000), and the credentials of
//     AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY (test/test when unset).
//   - FANOUT_CONFORMANCE_TARGET=aws: Amazon SQS and SNS through the
//     default credential chain and region.
//
// FANOUT_CONFORMANCE_SETTLE (a Go duration) overrides how long a spec
// waits for a change to show.
const (
	targetEnv   = "FANOUT_CONFORMANCE_TARGET"
	endpointEnv = "FANOUT_CONFORMANCE_ENDPOINT"
	regionEnv   = "FANOUT_CONFORMANCE_REGION"
	accountEnv  = "FANOUT_CONFORMANCE_ACCOUNT"
	settleEnv   = "FANOUT_CONFORMANCE_SETTLE"
)

// emulatorOnly labels specs that need fanout's extras (a manual clock, the
// /_fanout/ endpoints, the in-process server); they are skipped, with the
// reason, against any other target.
const emulatorOnly = "emulator-only"

// loopback labels specs that run an HTTP subscriber on this machine's
// loopback interface: AWS cannot reach it, so they are skipped there.
const loopback = "loopback"

// The target of this run, set up in BeforeSuite.
var (
	onAWS bool
	// inProcess is set when the suite started fanout itself.
	inProcess bool
	// endpoint is the emulator's URL (empty on AWS).
	endpoint string
	// targetName names the target in skip reasons and logs.
	targetName string
	client     *sqs.Client
	region     string
	// account is the account id queue URLs and ARNs carry.
	account string
	// creds sign the suite's own Query-protocol requests.
	creds  aws.CredentialsProvider
	prefix string // conf-<8 hex>-, unique per run and parallel process
	server *fanout.Server

	// settle bounds how long an Eventually waits for a change to show. AWS
	// is eventually consistent (attributes, listings, deletes can take up to
	// a minute); fanout applies every change at once.
	settle time.Duration
	// emptyWait is the WaitTimeSeconds of a receive that expects nothing. A
	// short poll on AWS samples a subset of servers and may miss a message,
	// so there a one-second long poll asks all of them; emulators answer a
	// short poll from the whole queue.
	emptyWait int32
)

func TestConformance(t *testing.T) {
	RegisterFailHandler(Fail)
	suiteConfig, reporterConfig := GinkgoConfiguration()
	target := strings.ToLower(os.Getenv(targetEnv))
	ep := os.Getenv(endpointEnv)
	switch {
	case target == "aws" && ep != "":
		t.Fatalf("%s=aws and %s are exclusive", targetEnv, endpointEnv)
	case target == "aws":
		onAWS, targetName = true, "AWS"
	case ep != "":
		if u, err := url.Parse(ep); err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			t.Fatalf("%s=%q: want http://host:port", endpointEnv, ep)
		}
		endpoint, targetName = strings.TrimRight(ep, "/"), ep
	case target == "" || target == "fanout":
		inProcess, targetName = true, "fanout in-process"
	default:
		t.Fatalf("%s=%q: want aws or fanout (or set %s)", targetEnv, target, endpointEnv)
	}
	RunSpecs(t, "fanout conformance (SQS and SNS)", suiteConfig, reporterConfig)
}

var _ = BeforeSuite(func(ctx SpecContext) {
	prefix = "conf-" + randomHex(4) + "-"
	settle, emptyWait = 5*time.Second, 0
	switch {
	case onAWS:
		cfg, err := config.LoadDefaultConfig(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(cfg.Region).NotTo(BeEmpty(), "set a region (AWS_REGION) to run against AWS")
		region, creds = cfg.Region, cfg.Credentials
		client = sqs.NewFromConfig(cfg)
		settle, emptyWait = 90*time.Second, 1
	case inProcess:
		region, account = "us-east-1", "000000000000"
		var err error
		server, err = fanout.Start(context.Background(), fanout.Options{Region: region, Account: account})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(server.Close()).To(Succeed()) })
		endpoint = server.URL()
		creds = credentials.NewStaticCredentialsProvider("AKIDCONFORMANCE", "conformance-secret", "")
		client = fanoutClient(endpoint)
	default:
		region, account = envOr(regionEnv, "us-east-1"), envOr(accountEnv, "000000000000")
		creds = credentials.NewStaticCredentialsProvider(envOr("AWS_ACCESS_KEY_ID", "test"), envOr("AWS_SECRET_ACCESS_KEY", "test"), os.Getenv("AWS_SESSION_TOKEN"))
		client = fanoutClient(endpoint)
	}
	if s := os.Getenv(settleEnv); s != "" {
		d, err := time.ParseDuration(s)
		Expect(err).NotTo(HaveOccurred(), settleEnv)
		settle = d
	}
	SetDefaultEventuallyTimeout(settle)
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)
	// Eventually(...).WithContext(ctx) would otherwise poll until the spec's
	// context ends, ignoring the default timeout.
	EnforceDefaultTimeoutsWhenUsingContexts()
	GinkgoWriter.Printf("target: %s, name prefix %s\n", targetName, prefix)
})

// Specs that need fanout in-process, or a subscriber AWS could reach, skip
// elsewhere and say why.
var _ = BeforeEach(func() {
	labels := CurrentSpecReport().Labels()
	if !inProcess && slices.Contains(labels, emulatorOnly) {
		Skip("emulator-only: needs fanout in-process (its manual clock, /_fanout/ endpoints or engine); target is " + targetName)
	}
	if onAWS && slices.Contains(labels, loopback) {
		Skip("loopback: the spec's HTTP subscriber listens on 127.0.0.1, which AWS cannot reach")
	}
})

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// sdkConfig is the aws.Config of an emulator target.
func sdkConfig() aws.Config {
	return aws.Config{Region: region, Credentials: creds, HTTPClient: sdktest.HTTPClient()}
}

// fanoutClient is an SQS client (AWS JSON 1.0) for an emulator endpoint.
func fanoutClient(endpoint string) *sqs.Client {
	return sqs.NewFromConfig(sdkConfig(), func(o *sqs.Options) { o.BaseEndpoint = aws.String(endpoint) })
}

// manualServer starts a second, emulator-only fanout on a manual clock for
// specs that need long windows of time, and stops it when the spec ends.
func manualServer() (*sqs.Client, *clock.Manual) {
	GinkgoHelper()
	clk := clock.NewManual(time.Now())
	s, err := fanout.Start(context.Background(), fanout.Options{Region: region, Clock: clk})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(s.Close()).To(Succeed()) })
	return fanoutClient(s.URL()), clk
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

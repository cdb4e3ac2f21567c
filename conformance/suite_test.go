package conformance

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"github.com/fanout/fanout/internal/sdktest"
	"os"
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
)

// targetEnv selects what the suite talks to: unset (or "fanout") starts fanout
// in-process; "aws" uses Amazon SQS through the default credential chain.
const targetEnv = "FANOUT_CONFORMANCE_TARGET"

// emulatorOnly labels specs that need fanout's extras (a manual clock, the
// /_fanout/ endpoints); they are skipped against AWS.
const emulatorOnly = "emulator-only"

// The target of this run, set up in BeforeSuite.
var (
	onAWS  bool
	client *sqs.Client
	region string
	prefix string // conf-<8 hex>-, unique per run
	server *fanout.Server

	// settle bounds how long an Eventually waits for a change to show. AWS
	// is eventually consistent (attributes, listings, deletes can take up to
	// a minute); fanout applies every change at once.
	settle time.Duration
	// emptyWait is the WaitTimeSeconds of a receive that expects nothing. A
	// short poll on AWS samples a subset of servers and may miss a message,
	// so there a one-second long poll asks all of them; fanout answers a
	// short poll from the whole queue.
	emptyWait int32
)

func TestConformance(t *testing.T) {
	RegisterFailHandler(Fail)
	suiteConfig, reporterConfig := GinkgoConfiguration()
	switch target := strings.ToLower(os.Getenv(targetEnv)); target {
	case "aws":
		onAWS = true
		// Specs that need fanout's extras cannot run against AWS.
		if suiteConfig.LabelFilter == "" {
			suiteConfig.LabelFilter = "!" + emulatorOnly
		} else {
			suiteConfig.LabelFilter = "(" + suiteConfig.LabelFilter + ") && !" + emulatorOnly
		}
	case "", "fanout":
	default:
		t.Fatalf("%s=%q: want aws or fanout", targetEnv, target)
	}
	RunSpecs(t, "fanout conformance (SQS and SNS)", suiteConfig, reporterConfig)
}

var _ = BeforeSuite(func(ctx SpecContext) {
	prefix = "conf-" + randomHex(4) + "-"
	if onAWS {
		cfg, err := config.LoadDefaultConfig(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(cfg.Region).NotTo(BeEmpty(), "set a region (AWS_REGION) to run against AWS")
		region = cfg.Region
		client = sqs.NewFromConfig(cfg)
		settle = 90 * time.Second
		emptyWait = 1
	} else {
		region = "us-east-1"
		var err error
		server, err = fanout.Start(context.Background(), fanout.Options{Region: region})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(server.Close()).To(Succeed()) })
		client = fanoutClient(server.URL())
		settle = 5 * time.Second
		emptyWait = 0
	}
	SetDefaultEventuallyTimeout(settle)
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)
	// Eventually(...).WithContext(ctx) would otherwise poll until the spec's
	// context ends, ignoring the default timeout.
	EnforceDefaultTimeoutsWhenUsingContexts()
	GinkgoWriter.Printf("target: %s, queue prefix %s\n", map[bool]string{true: "aws", false: "fanout"}[onAWS], prefix)
})

// fanoutClient is an SQS client (AWS JSON 1.0) for a fanout endpoint, with
// static dummy credentials.
func fanoutClient(endpoint string) *sqs.Client {
	cfg := aws.Config{
		Region:      region,
		Credentials: credentials.NewStaticCredentialsProvider("AKIDCONFORMANCE", "conformance-secret", ""),
		HTTPClient:  sdktest.HTTPClient(),
	}
	return sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(endpoint) })
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

package fanout_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/smithy-go"

	"github.com/fanout/fanout"
	"github.com/fanout/fanout/internal/sdktest"
)

func snsClient(s *fanout.Server) *sns.Client {
	return sns.NewFromConfig(aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("a", "b", ""), HTTPClient: sdktest.HTTPClient()},
		func(o *sns.Options) { o.BaseEndpoint = aws.String(s.URL()) })
}

// serverWithTopic starts fanout, stopped when the test ends, with an SNS
// client and a topic.
func serverWithTopic(t *testing.T, opts fanout.Options) (*fanout.Server, *sns.Client, *sns.CreateTopicOutput) {
	t.Helper()
	s, err := fanout.Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	c := snsClient(s)
	topic, err := c.CreateTopic(context.Background(), &sns.CreateTopicInput{Name: aws.String("t")})
	if err != nil {
		t.Fatal(err)
	}
	return s, c, topic
}

// hangingEndpoint confirms its subscriptions and never answers a
// notification until the test ends.
func hangingEndpoint(t *testing.T) (url string, notified chan struct{}) {
	t.Helper()
	stop := make(chan struct{})
	notified = make(chan struct{}, 100)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Header.Get("x-amz-sns-message-type") == "SubscriptionConfirmation" {
			var m struct{ SubscribeURL string }
			_ = json.Unmarshal(body, &m)
			go func() {
				if resp, err := http.Get(m.SubscribeURL); err == nil {
					resp.Body.Close()
				}
			}()
			return
		}
		notified <- struct{}{}
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	t.Cleanup(func() { close(stop); srv.Close() })
	return srv.URL + "/hook", notified
}

func TestMovingTheClockDoesNotWaitForAHangingEndpoint(t *testing.T) {
	t.Parallel()
	s, c, topic := serverWithTopic(t, fanout.Options{})
	ctx := context.Background()
	url, notified := hangingEndpoint(t)
	if _, err := c.Subscribe(ctx, &sns.SubscribeInput{TopicArn: topic.TopicArn, Protocol: aws.String("http"), Endpoint: aws.String(url)}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(s.SNS().PendingSubscriptions()) > 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond) // the endpoint confirms on its own time
	}
	if _, err := c.Publish(ctx, &sns.PublishInput{TopicArn: topic.TopicArn, Message: aws.String("m")}); err != nil {
		t.Fatal(err)
	}
	<-notified
	began := time.Now()
	var view struct{ Pending *int64 }
	if code := getJSON(t, "POST", s.URL()+"/_fanout/clock", `{"advance":"1s"}`, &view); code != 200 {
		t.Fatalf("POST /_fanout/clock: %d", code)
	}
	if took := time.Since(began); took > 10*time.Second {
		t.Fatalf("moving the clock took %v", took)
	}
	if view.Pending == nil || *view.Pending != 1 {
		t.Fatalf("pending %v, want the one attempt in progress", view.Pending)
	}
}

func TestSubscribingFanoutToItselfIsRefused(t *testing.T) {
	t.Parallel()
	s, c, topic := serverWithTopic(t, fanout.Options{PublicURL: "http://sns.example.test:8443"})
	ctx := context.Background()
	_, port, _ := net.SplitHostPort(s.Addr())
	for _, ep := range []string{
		s.URL() + "/?Action=Publish&TopicArn=" + aws.ToString(topic.TopicArn) + "&Message=again",
		"http://localhost:" + port + "/", "http://LOCALHOST:" + port, "http://api.localhost:" + port + "/x",
		"http://127.0.0.2:" + port, "http://[::1]:" + port, "http://0.0.0.0:" + port,
		"https://127.0.0.1:" + port, "http://sns.example.test:8443/hook",
	} {
		proto := ep[:strings.Index(ep, ":")]
		_, err := c.Subscribe(ctx, &sns.SubscribeInput{TopicArn: topic.TopicArn, Protocol: aws.String(proto), Endpoint: aws.String(ep)})
		var ae smithy.APIError
		if !errors.As(err, &ae) || ae.ErrorCode() != "InvalidParameter" ||
			!strings.HasPrefix(ae.ErrorMessage(), "Invalid parameter: Endpoint Reason: the endpoint ") || !strings.Contains(ae.ErrorMessage(), "itself") {
			t.Errorf("Subscribe %s: %v", ep, err)
		}
	}
	// Another port of this machine is fine.
	other, _ := hangingEndpoint(t)
	if _, err := c.Subscribe(ctx, &sns.SubscribeInput{TopicArn: topic.TopicArn, Protocol: aws.String("http"), Endpoint: aws.String(other)}); err != nil {
		t.Fatal(err)
	}
	if _, err := fanout.New(fanout.Options{EndpointAllow: []string{"10.0.0.0/8", "not-a-cidr"}}); err == nil {
		t.Fatal("a bad --endpoint-allow entry is refused")
	}
}

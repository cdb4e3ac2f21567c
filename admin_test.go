package fanout_test

import (
	"context"
	"encoding/json"
	"github.com/fanout/fanout/internal/sdktest"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/fanout/fanout"
	"github.com/fanout/fanout/clock"
)

func getJSON(t *testing.T, method, url, body string, into any) int {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if into != nil {
		if err := json.Unmarshal(b, into); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
	}
	return resp.StatusCode
}

func TestClockEndpointMovesTimeForEveryTimedBehaviour(t *testing.T) {
	t.Parallel()
	s, err := fanout.Start(context.Background(), fanout.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := sqs.NewFromConfig(aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("a", "b", ""), HTTPClient: sdktest.HTTPClient()},
		func(o *sqs.Options) { o.BaseEndpoint = aws.String(s.URL()) })
	ctx := context.Background()
	q, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("clocked")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: q.QueueUrl, MessageBody: aws.String("m"), DelaySeconds: 900}); err != nil {
		t.Fatal(err)
	}
	var view struct {
		Now, Offset, Mode string
		OffsetSeconds     float64
	}
	if code := getJSON(t, "GET", s.URL()+"/_fanout/clock", "", &view); code != 200 || view.Mode != "real" || view.Offset != "0s" {
		t.Fatalf("%d %+v", code, view)
	}
	before, _ := time.Parse(time.RFC3339Nano, view.Now)
	if code := getJSON(t, "POST", s.URL()+"/_fanout/clock", `{"advance":"36h"}`, &view); code != 200 || view.OffsetSeconds != 36*3600 {
		t.Fatalf("%d %+v", code, view)
	}
	after, _ := time.Parse(time.RFC3339Nano, view.Now)
	if after.Sub(before) < 36*time.Hour {
		t.Fatalf("clock moved %v", after.Sub(before))
	}
	out, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: q.QueueUrl})
	if err != nil || len(out.Messages) != 1 {
		t.Fatalf("the 15-minute delay did not end after advancing: %v %v", out, err)
	}
	var bad map[string]string
	if code := getJSON(t, "POST", s.URL()+"/_fanout/clock", `{"advance":"-1h"}`, &bad); code != 400 || bad["error"] == "" {
		t.Fatalf("negative advance: %d %v", code, bad)
	}
	if code := getJSON(t, "POST", s.URL()+"/_fanout/clock", `nope`, &bad); code != 400 {
		t.Fatalf("bad body: %d", code)
	}
}

func TestManualClockModeAndQueueView(t *testing.T) {
	t.Parallel()
	m := clock.NewManual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s, err := fanout.Start(context.Background(), fanout.Options{Clock: m})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var view struct{ Now, Mode string }
	getJSON(t, "POST", s.URL()+"/_fanout/clock", `{"advance":"1h30m"}`, &view)
	if view.Mode != "manual" || view.Now != "2026-01-01T01:30:00Z" {
		t.Fatalf("%+v", view)
	}
	q, _ := s.SQS().CreateQueue("viewed", nil, nil)
	_ = q
	var queues struct {
		Queues []struct {
			Name              string
			Visible, InFlight int
			NoisyGroups       int
		}
	}
	if code := getJSON(t, "GET", s.URL()+"/_fanout/sqs/queues", "", &queues); code != 200 || len(queues.Queues) != 1 || queues.Queues[0].Name != "viewed" {
		t.Fatalf("%d %+v", code, queues)
	}
}

func TestCloseDoesNotWaitForUnusedConnections(t *testing.T) {
	t.Parallel()
	s, err := fanout.Start(context.Background(), fanout.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", s.Addr()) // opened, never used
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

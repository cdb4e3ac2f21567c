package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/fanout/fanout"
)

// TestTopologyFile starts fanout with topology.yaml (queue policies
// enforced), publishes the example's orders and checks that each queue got
// what main.go's own setup delivers.
func TestTopologyFile(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv, err := fanout.Start(ctx, fanout.Options{EnforcePolicies: true, ConfigFile: "topology.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	endpoint := srv.URL()
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")}
	snsc := sns.NewFromConfig(cfg, func(o *sns.Options) { o.BaseEndpoint = &endpoint })
	sqsc := sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = &endpoint })
	topic := "arn:aws:sns:us-east-1:000000000000:order-placed"
	for _, o := range orders {
		body, _ := json.Marshal(o.order)
		if _, err := snsc.Publish(ctx, &sns.PublishInput{
			TopicArn: &topic, Message: aws.String(string(body)),
			MessageAttributes: map[string]snstypes.MessageAttributeValue{
				"customer_type": {DataType: aws.String("String"), StringValue: aws.String(o.customerType)},
			},
		}); err != nil {
			t.Fatal(err)
		}
	}
	for queue, want := range map[string]string{
		"fulfillment": "1001, 1002, 1003", "inventory": "1001, 1002, 1003", "email": "1001, 1003",
	} {
		got, err := receive(ctx, sqsc, endpoint+"/000000000000/orders-"+queue, len(strings.Split(want, ", ")), queue == "email")
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(got, ", ") != "order "+strings.ReplaceAll(want, ", ", ", order ") {
			t.Errorf("%s received %v, want %s", queue, got, want)
		}
	}
}

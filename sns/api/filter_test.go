package api_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sns/types"

	"github.com/fanout/fanout"
	"github.com/fanout/fanout/filter"
)

func TestFilterPoliciesDecideDelivery(t *testing.T) {
	t.Parallel()
	e := shared(t)
	topic := e.topic(t, "t", nil)
	all, corp, body := e.queue(t, "all", nil), e.queue(t, "corp", nil), e.queue(t, "body", nil)
	e.subscribe(t, topic, all, map[string]string{"RawMessageDelivery": "true"})
	corpSub := e.subscribe(t, topic, corp, map[string]string{"RawMessageDelivery": "true", "FilterPolicy": `{"store":["example_corp"],"price":[{"numeric":[">",10]}]}`})
	e.subscribe(t, topic, body, map[string]string{"RawMessageDelivery": "true", "FilterPolicyScope": "MessageBody", "FilterPolicy": `{"order":{"kind":["gift"]}}`})
	pub := func(msg, store, price string) {
		attrs := map[string]types.MessageAttributeValue{"store": strAttr(store)}
		if price != "" {
			attrs["price"] = types.MessageAttributeValue{DataType: aws.String("Number"), StringValue: aws.String(price)}
		}
		e.publish(t, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String(msg), MessageAttributes: attrs})
	}
	pub(`{"order":{"kind":"gift"}}`, "example_corp", "20")
	pub(`{"order":{"kind":"book"}}`, "example_corp", "5")
	pub(`not json`, "other", "50")
	if got := bodies(t, e.drain(t, all), false); len(got) != 3 {
		t.Fatalf("unfiltered queue got %v", got)
	}
	if got := bodies(t, e.drain(t, corp), false); !slices.Equal(got, []string{`{"order":{"kind":"gift"}}`}) {
		t.Fatalf("attribute-filtered queue got %v", got)
	}
	if got := bodies(t, e.drain(t, body), false); !slices.Equal(got, []string{`{"order":{"kind":"gift"}}`}) {
		t.Fatalf("body-filtered queue got %v", got)
	}
	// A filtered-out message is neither delivered nor a failure.
	if c := e.subStats(t, corpSub); c.Delivered != 1 || c.Failed != 0 {
		t.Fatalf("counts %+v", c)
	}

	// Setting the policy to "" removes it: everything is delivered again.
	if _, err := e.sns.SetSubscriptionAttributes(ctx(t), &sns.SetSubscriptionAttributesInput{SubscriptionArn: aws.String(corpSub),
		AttributeName: aws.String("FilterPolicy"), AttributeValue: aws.String("")}); err != nil {
		t.Fatal(err)
	}
	pub("after", "other", "")
	if got := bodies(t, e.drain(t, corp), false); !slices.Equal(got, []string{"after"}) {
		t.Fatalf("after removing the policy %v", got)
	}

	// An invalid policy is refused with the filter package's message.
	bad := `{"store":[{"numeric":[">"]}]}`
	_, ferr := filter.Compile(bad, filter.ScopeAttributes)
	if ferr == nil {
		t.Fatal("bad policy compiles")
	}
	_, err := e.sns.SetSubscriptionAttributes(ctx(t), &sns.SetSubscriptionAttributesInput{SubscriptionArn: aws.String(corpSub),
		AttributeName: aws.String("FilterPolicy"), AttributeValue: aws.String(bad)})
	wantError(t, err, "InvalidParameter", 400, ferr.Error())
	_, err = e.sns.Subscribe(ctx(t), &sns.SubscribeInput{TopicArn: aws.String(topic), Protocol: aws.String("sqs"),
		Endpoint: aws.String(e.queue(t, "x", nil).ARN), Attributes: map[string]string{"FilterPolicy": bad}})
	wantError(t, err, "InvalidParameter", 400, ferr.(*filter.Error).SubscribeMessage())
	// A nested policy does not suit the MessageAttributes scope.
	_, err = e.sns.SetSubscriptionAttributes(ctx(t), &sns.SetSubscriptionAttributesInput{SubscriptionArn: aws.String(corpSub),
		AttributeName: aws.String("FilterPolicy"), AttributeValue: aws.String(`{"order":{"kind":["gift"]}}`)})
	_, nerr := filter.Compile(`{"order":{"kind":["gift"]}}`, filter.ScopeAttributes)
	wantError(t, err, "InvalidParameter", 400, nerr.Error())
}

func TestFilterPolicyLimitPerTopic(t *testing.T) {
	t.Parallel()
	e := start(t, fanout.Options{})
	topic := e.topic(t, "t", nil)
	for i := 0; i < 200; i++ {
		_, err := e.sns.Subscribe(ctx(t), &sns.SubscribeInput{TopicArn: aws.String(topic), Protocol: aws.String("sqs"),
			Endpoint: aws.String("arn:aws:sqs:us-east-1:000000000000:q" + strings.Repeat("x", i)), Attributes: map[string]string{"FilterPolicy": `{"a":["b"]}`}})
		if err != nil {
			t.Fatalf("subscription %d: %v", i, err)
		}
	}
	_, err := e.sns.Subscribe(ctx(t), &sns.SubscribeInput{TopicArn: aws.String(topic), Protocol: aws.String("sqs"),
		Endpoint: aws.String("arn:aws:sqs:us-east-1:000000000000:one-too-many"), Attributes: map[string]string{"FilterPolicy": `{"a":["b"]}`}})
	if got := errorOf(t, err); got.Code != "FilterPolicyLimitExceeded" || got.Status != 403 {
		t.Fatalf("201st filter policy: %+v", got)
	}
	// Without a policy the subscription is fine.
	if _, err := e.sns.Subscribe(ctx(t), &sns.SubscribeInput{TopicArn: aws.String(topic), Protocol: aws.String("sqs"),
		Endpoint: aws.String("arn:aws:sqs:us-east-1:000000000000:one-too-many")}); err != nil {
		t.Fatal(err)
	}
}

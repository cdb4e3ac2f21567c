package api_test

import (
	"encoding/json"
	"maps"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sns/types"

	"github.com/fanout/fanout"
	"github.com/fanout/fanout/filter"
)

// filterMessage is the filter package's text for a bad policy, as
// SetSubscriptionAttributes reports it.
func filterMessage(t *testing.T, policy string) string {
	t.Helper()
	_, err := filter.Compile(policy, filter.ScopeAttributes)
	if err == nil {
		t.Fatalf("policy %s compiles", policy)
	}
	return err.Error()
}

// subscribeFilterMessage is the same as Subscribe reports it.
func subscribeFilterMessage(t *testing.T, policy string) string {
	t.Helper()
	_, err := filter.Compile(policy, filter.ScopeAttributes)
	fe, ok := err.(*filter.Error)
	if !ok {
		t.Fatalf("policy %s: %v", policy, err)
	}
	return fe.SubscribeMessage()
}

func TestSubscribeSQSIsConfirmedAtOnceAndIdempotent(t *testing.T) {
	t.Parallel()
	e := shared(t)
	topic := e.topic(t, "t", nil)
	q := e.queue(t, "q", nil)
	in := &sns.SubscribeInput{TopicArn: aws.String(topic), Protocol: aws.String("sqs"), Endpoint: aws.String(q.ARN),
		Attributes: map[string]string{"RawMessageDelivery": "true"}}
	out, err := e.sns.Subscribe(ctx(t), in)
	if err != nil {
		t.Fatal(err)
	}
	sub := aws.ToString(out.SubscriptionArn)
	if !strings.HasPrefix(sub, topic+":") || len(sub) != len(topic)+37 {
		t.Fatalf("SubscriptionArn %s", sub)
	}
	again, err := e.sns.Subscribe(ctx(t), in)
	if err != nil || aws.ToString(again.SubscriptionArn) != sub {
		t.Fatalf("again: %v %v", again, err)
	}
	in.Attributes = nil
	if again, err = e.sns.Subscribe(ctx(t), in); err != nil || aws.ToString(again.SubscriptionArn) != sub {
		t.Fatalf("without attributes: %v %v", again, err)
	}
	in.Attributes = map[string]string{"RawMessageDelivery": "false"}
	_, err = e.sns.Subscribe(ctx(t), in)
	wantError(t, err, "InvalidParameter", 400, "Invalid parameter: Attributes Reason: Subscription already exists with different attributes")

	attrs, err := e.sns.GetSubscriptionAttributes(ctx(t), &sns.GetSubscriptionAttributesInput{SubscriptionArn: aws.String(sub)})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"SubscriptionArn": sub, "TopicArn": topic, "Owner": "000000000000", "Protocol": "sqs", "Endpoint": q.ARN,
		"SubscriptionPrincipal": "arn:aws:iam::000000000000:root", "PendingConfirmation": "false",
		"ConfirmationWasAuthenticated": "true", "RawMessageDelivery": "true",
	}
	if !maps.Equal(attrs.Attributes, want) {
		t.Fatalf("attributes %v", attrs.Attributes)
	}
	tattrs, _ := e.sns.GetTopicAttributes(ctx(t), &sns.GetTopicAttributesInput{TopicArn: aws.String(topic)})
	if tattrs.Attributes["SubscriptionsConfirmed"] != "1" || tattrs.Attributes["SubscriptionsPending"] != "0" {
		t.Fatalf("topic counts %v", tattrs.Attributes)
	}
}

func TestSubscribeValidatesEndpointsPerProtocol(t *testing.T) {
	t.Parallel()
	e := shared(t)
	topic := e.topic(t, "t", nil)
	fifo := e.topic(t, "f", map[string]string{"FifoTopic": "true"})
	for _, tc := range []struct{ topic, protocol, endpoint, msg string }{
		{topic, "smoke-signal", "x", "Invalid parameter: Amazon SNS does not support this protocol string: smoke-signal"},
		{topic, "http", "https://example.com/hook", "Invalid parameter: Endpoint must match the specified protocol"},
		{topic, "https", "ftp://example.com", "Invalid parameter: Endpoint must match the specified protocol"},
		{topic, "sqs", "http://localhost:4566/000000000000/q", "Invalid parameter: SQS endpoint ARN"},
		{topic, "sqs", "arn:aws:sqs:us-east-1:000000000000:q.fifo", "Invalid parameter: Invalid parameter: Endpoint Reason: FIFO SQS Queues can not be subscribed to standard SNS topics"},
		{topic, "email", "not-an-address", "Invalid parameter: Email address"},
		{topic, "sms", "call me", "Invalid SMS endpoint: call me"},
		{topic, "lambda", "arn:aws:sqs:us-east-1:000000000000:q", "Invalid parameter: Lambda endpoint ARN"},
		{topic, "application", "arn:aws:sns:us-east-1:000000000000:app/GCM/x", "Invalid parameter: ApplicationEndpoint ARN"},
		{fifo, "https", "https://example.com/hook", "Invalid parameter: Protocol Reason: FIFO topics only deliver to Amazon SQS queues, not https"},
	} {
		_, err := e.sns.Subscribe(ctx(t), &sns.SubscribeInput{TopicArn: aws.String(tc.topic), Protocol: aws.String(tc.protocol), Endpoint: aws.String(tc.endpoint)})
		wantError(t, err, "InvalidParameter", 400, tc.msg)
	}
	missing := "arn:aws:sns:us-east-1:000000000000:" + name(t, "gone")
	_, err := e.sns.Subscribe(ctx(t), &sns.SubscribeInput{TopicArn: aws.String(missing), Protocol: aws.String("sqs"), Endpoint: aws.String("arn:aws:sqs:us-east-1:000000000000:q")})
	wantError(t, err, "NotFound", 404, "Topic does not exist")
}

func TestSubscribeValidatesAttributesPerProtocol(t *testing.T) {
	t.Parallel()
	e := shared(t)
	topic := e.topic(t, "t", nil)
	for _, tc := range []struct {
		protocol, endpoint string
		attrs              map[string]string
		msg                string
	}{
		{"sqs", "arn:aws:sqs:us-east-1:000000000000:q", map[string]string{"RawMessageDelivery": "yes"},
			"Invalid parameter: Attributes Reason: RawMessageDelivery: Invalid value [yes]. Must be true or false."},
		{"email", "a@example.com", map[string]string{"RawMessageDelivery": "true"},
			"Invalid parameter: Attributes Reason: Delivery protocol [email] does not support raw message delivery."},
		{"sqs", "arn:aws:sqs:us-east-1:000000000000:q", map[string]string{"DeliveryPolicy": `{"healthyRetryPolicy":{"minDelayTarget":1,"maxDelayTarget":2,"numRetries":1}}`},
			"Invalid parameter: Attributes Reason: DeliveryPolicy: Delivery protocol [sqs] does not support delivery policy."},
		{"https", "https://example.com", map[string]string{"DeliveryPolicy": `{"healthyRetryPolicy":{"numRetries":5}}`},
			"Invalid parameter: Attributes Reason: DeliveryPolicy: healthyRetryPolicy.minDelayTarget must be specified"},
		{"sqs", "arn:aws:sqs:us-east-1:000000000000:q", map[string]string{"FilterPolicy": `{"a":[]}`},
			subscribeFilterMessage(t, `{"a":[]}`)},
		{"sqs", "arn:aws:sqs:us-east-1:000000000000:q", map[string]string{"FilterPolicyScope": "Body"},
			"Invalid parameter: Attributes Reason: FilterPolicyScope: Invalid value [Body]. Please use either MessageBody or MessageAttributes"},
		{"sqs", "arn:aws:sqs:us-east-1:000000000000:q", map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"nope"}`},
			"Invalid parameter: Attributes Reason: RedrivePolicy: deadLetterTargetArn is an invalid arn"},
		{"sqs", "arn:aws:sqs:us-east-1:000000000000:q", map[string]string{"RedrivePolicy": `{`},
			"Invalid parameter: Attributes Reason: RedrivePolicy: failed to parse JSON."},
		{"sqs", "arn:aws:sqs:us-east-1:000000000000:q", map[string]string{"Color": "blue"},
			"Invalid parameter: Attributes Reason: AttributeName"},
		{"sqs", "arn:aws:sqs:us-east-1:000000000000:q", map[string]string{"ReplayPolicy": `{"PointType":"Timestamp","StartingPoint":"2024-01-01T00:00:00Z"}`},
			"Invalid parameter: Attributes Reason: ReplayPolicy: the topic has no ArchivePolicy; only FIFO topics that archive messages can replay them"},
	} {
		_, err := e.sns.Subscribe(ctx(t), &sns.SubscribeInput{TopicArn: aws.String(topic), Protocol: aws.String(tc.protocol), Endpoint: aws.String(tc.endpoint), Attributes: tc.attrs})
		wantError(t, err, "InvalidParameter", 400, tc.msg)
	}
}

func TestHTTPAndEmailSubscriptionsWaitForConfirmation(t *testing.T) {
	t.Parallel()
	e := shared(t)
	topic := e.topic(t, "t", nil)
	out, err := e.sns.Subscribe(ctx(t), &sns.SubscribeInput{TopicArn: aws.String(topic), Protocol: aws.String("https"), Endpoint: aws.String(sink(t, true).URL + "/hook")})
	if err != nil || aws.ToString(out.SubscriptionArn) != "pending confirmation" {
		t.Fatalf("https subscribe: %v %v", aws.ToString(out.SubscriptionArn), err)
	}
	out, err = e.sns.Subscribe(ctx(t), &sns.SubscribeInput{TopicArn: aws.String(topic), Protocol: aws.String("email"), Endpoint: aws.String("ops@example.com"), ReturnSubscriptionArn: true})
	if err != nil {
		t.Fatal(err)
	}
	email := aws.ToString(out.SubscriptionArn)
	if !strings.HasPrefix(email, topic+":") {
		t.Fatalf("ReturnSubscriptionArn gave %s", email)
	}
	attrs, err := e.sns.GetSubscriptionAttributes(ctx(t), &sns.GetSubscriptionAttributesInput{SubscriptionArn: aws.String(email)})
	if err != nil || attrs.Attributes["PendingConfirmation"] != "true" || attrs.Attributes["ConfirmationWasAuthenticated"] != "false" {
		t.Fatalf("pending attributes %v %v", attrs, err)
	}
	list, err := e.sns.ListSubscriptionsByTopic(ctx(t), &sns.ListSubscriptionsByTopicInput{TopicArn: aws.String(topic)})
	if err != nil || len(list.Subscriptions) != 2 {
		t.Fatalf("list %v %v", list, err)
	}
	for _, s := range list.Subscriptions {
		if aws.ToString(s.SubscriptionArn) != "PendingConfirmation" {
			t.Fatalf("pending subscription listed as %s", aws.ToString(s.SubscriptionArn))
		}
	}
	tattrs, _ := e.sns.GetTopicAttributes(ctx(t), &sns.GetTopicAttributesInput{TopicArn: aws.String(topic)})
	if tattrs.Attributes["SubscriptionsPending"] != "2" || tattrs.Attributes["SubscriptionsConfirmed"] != "0" {
		t.Fatalf("topic counts %v", tattrs.Attributes)
	}

	// fanout shows the token AWS would have mailed.
	_, body := get(t, e.srv.URL()+"/_fanout/sns/pending")
	var pending struct {
		Pending []struct{ SubscriptionArn, TopicArn, Token string }
	}
	if err := json.Unmarshal([]byte(body), &pending); err != nil {
		t.Fatal(err)
	}
	token := ""
	for _, p := range pending.Pending {
		if p.SubscriptionArn == email {
			token = p.Token
		}
	}
	if token == "" {
		t.Fatalf("pending list %s", body)
	}
	_, err = e.sns.ConfirmSubscription(ctx(t), &sns.ConfirmSubscriptionInput{TopicArn: aws.String(topic), Token: aws.String(strings.Repeat("ab", 128))})
	wantError(t, err, "InvalidParameter", 400, "Invalid token")
	_, err = e.sns.ConfirmSubscription(ctx(t), &sns.ConfirmSubscriptionInput{TopicArn: aws.String(topic), Token: aws.String("not a token")})
	wantError(t, err, "InvalidParameter", 400, "Invalid parameter: Token")
	other := e.topic(t, "other", nil)
	_, err = e.sns.ConfirmSubscription(ctx(t), &sns.ConfirmSubscriptionInput{TopicArn: aws.String(other), Token: aws.String(token)})
	wantError(t, err, "InvalidParameter", 400, "Invalid parameter: Topic")

	// The SubscribeURL form, an unsigned GET, confirms it.
	status, body := get(t, e.srv.URL()+"/_fanout/sns/?Action=ConfirmSubscription&TopicArn="+url.QueryEscape(topic)+"&Token="+token)
	if status != 200 || !strings.Contains(body, "<SubscriptionArn>"+email+"</SubscriptionArn>") {
		t.Fatalf("confirm URL: %d %s", status, body)
	}
	// Confirming again returns the ARN again.
	conf, err := e.sns.ConfirmSubscription(ctx(t), &sns.ConfirmSubscriptionInput{TopicArn: aws.String(topic), Token: aws.String(token)})
	if err != nil || aws.ToString(conf.SubscriptionArn) != email {
		t.Fatalf("confirm again: %v %v", conf, err)
	}
	attrs, _ = e.sns.GetSubscriptionAttributes(ctx(t), &sns.GetSubscriptionAttributesInput{SubscriptionArn: aws.String(email)})
	if attrs.Attributes["PendingConfirmation"] != "false" || attrs.Attributes["ConfirmationWasAuthenticated"] != "false" {
		t.Fatalf("confirmed attributes %v", attrs.Attributes)
	}
}

func TestSetSubscriptionAttributes(t *testing.T) {
	t.Parallel()
	e := shared(t)
	topic := e.topic(t, "t", nil)
	q := e.queue(t, "q", nil)
	sub := e.subscribe(t, topic, q, nil)
	set := func(n, v string) error {
		_, err := e.sns.SetSubscriptionAttributes(ctx(t), &sns.SetSubscriptionAttributesInput{SubscriptionArn: aws.String(sub), AttributeName: aws.String(n), AttributeValue: aws.String(v)})
		return err
	}
	get := func() map[string]string {
		out, err := e.sns.GetSubscriptionAttributes(ctx(t), &sns.GetSubscriptionAttributesInput{SubscriptionArn: aws.String(sub)})
		if err != nil {
			t.Fatal(err)
		}
		return out.Attributes
	}
	if err := set("RawMessageDelivery", "TRUE"); err != nil || get()["RawMessageDelivery"] != "true" {
		t.Fatalf("RawMessageDelivery: %v %v", err, get())
	}
	if err := set("FilterPolicy", `{"store":["example_corp"]}`); err != nil {
		t.Fatal(err)
	}
	if a := get(); a["FilterPolicy"] != `{"store":["example_corp"]}` || a["FilterPolicyScope"] != "MessageAttributes" {
		t.Fatalf("after FilterPolicy %v", a)
	}
	if err := set("FilterPolicyScope", "MessageBody"); err != nil || get()["FilterPolicyScope"] != "MessageBody" {
		t.Fatalf("FilterPolicyScope: %v", err)
	}
	if err := set("FilterPolicy", ""); err != nil {
		t.Fatal(err)
	}
	if a := get(); a["FilterPolicy"] != "" || a["FilterPolicyScope"] != "" {
		t.Fatalf("after removing FilterPolicy %v", a)
	}
	if err := set("RedrivePolicy", `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq"}`); err != nil || get()["RedrivePolicy"] == "" {
		t.Fatalf("RedrivePolicy: %v", err)
	}
	for _, tc := range []struct{ name, value, msg string }{
		{"RawMessageDelivery", "maybe", "Invalid parameter: RawMessageDelivery: Invalid value [maybe]. Must be true or false."},
		{"FilterPolicy", `{"a":"b"}`, filterMessage(t, `{"a":"b"}`)},
		{"DeliveryPolicy", `{}`, "Invalid parameter: DeliveryPolicy: Delivery protocol [sqs] does not support delivery policy."},
		{"SubscriptionRoleArn", "arn:aws:iam::000000000000:role/r", "Invalid parameter: SubscriptionRoleArn: Delivery protocol [sqs] does not support SubscriptionRoleArn."},
		{"Endpoint", "x", "Invalid parameter: AttributeName"},
	} {
		wantError(t, set(tc.name, tc.value), "InvalidParameter", 400, tc.msg)
	}

	// HTTP/S subscriptions take a DeliveryPolicy and show the effective one.
	out, err := e.sns.Subscribe(ctx(t), &sns.SubscribeInput{TopicArn: aws.String(topic), Protocol: aws.String("http"), Endpoint: aws.String(sink(t, false).URL + "/hook"), ReturnSubscriptionArn: true})
	if err != nil {
		t.Fatal(err)
	}
	hook := aws.ToString(out.SubscriptionArn)
	if _, err := e.sns.SetSubscriptionAttributes(ctx(t), &sns.SetSubscriptionAttributesInput{SubscriptionArn: aws.String(hook), AttributeName: aws.String("DeliveryPolicy"), AttributeValue: aws.String(`{"requestPolicy":{"headerContentType":"text/csv"}}`)}); err != nil {
		t.Fatal(err)
	}
	attrs, _ := e.sns.GetSubscriptionAttributes(ctx(t), &sns.GetSubscriptionAttributesInput{SubscriptionArn: aws.String(hook)})
	if got := attrs.Attributes["DeliveryPolicy"]; got != `{"healthyRetryPolicy":null,"sicklyRetryPolicy":null,"throttlePolicy":null,"requestPolicy":{"headerContentType":"text/csv"},"guaranteed":false}` {
		t.Fatalf("DeliveryPolicy %s", got)
	}
	if got := attrs.Attributes["EffectiveDeliveryPolicy"]; !strings.Contains(got, `"requestPolicy":{"headerContentType":"text/csv"}`) || !strings.Contains(got, `"numRetries":3`) {
		t.Fatalf("EffectiveDeliveryPolicy %s", got)
	}
}

func TestUnsubscribe(t *testing.T) {
	t.Parallel()
	e := shared(t)
	topic := e.topic(t, "t", nil)
	q := e.queue(t, "q", nil)
	sub := e.subscribe(t, topic, q, nil)
	for i := 0; i < 2; i++ { // idempotent
		if _, err := e.sns.Unsubscribe(ctx(t), &sns.UnsubscribeInput{SubscriptionArn: aws.String(sub)}); err != nil {
			t.Fatal(err)
		}
	}
	_, err := e.sns.GetSubscriptionAttributes(ctx(t), &sns.GetSubscriptionAttributesInput{SubscriptionArn: aws.String(sub)})
	wantError(t, err, "NotFound", 404, "Subscription does not exist")
	_, err = e.sns.SetSubscriptionAttributes(ctx(t), &sns.SetSubscriptionAttributesInput{SubscriptionArn: aws.String(sub), AttributeName: aws.String("RawMessageDelivery"), AttributeValue: aws.String("true")})
	wantError(t, err, "NotFound", 404, "Subscription does not exist")
	tattrs, _ := e.sns.GetTopicAttributes(ctx(t), &sns.GetTopicAttributesInput{TopicArn: aws.String(topic)})
	if tattrs.Attributes["SubscriptionsDeleted"] != "1" || tattrs.Attributes["SubscriptionsConfirmed"] != "0" {
		t.Fatalf("topic counts %v", tattrs.Attributes)
	}
	_, err = e.sns.Unsubscribe(ctx(t), &sns.UnsubscribeInput{SubscriptionArn: aws.String("arn:aws:sns:us-east-1")})
	wantError(t, err, "InvalidParameter", 400, "Invalid parameter: SubscriptionArn Reason: An ARN must have at least 6 elements, not 4")
	_, err = e.sns.Unsubscribe(ctx(t), &sns.UnsubscribeInput{SubscriptionArn: aws.String(topic)})
	wantError(t, err, "InvalidParameter", 400, "Invalid parameter: SubscriptionId")
	// Published messages no longer reach the queue.
	e.publish(t, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("after")})
	if got := e.drain(t, q); len(got) != 0 {
		t.Fatalf("unsubscribed queue got %d messages", len(got))
	}
}

func TestListSubscriptionsPagesByHundred(t *testing.T) {
	t.Parallel()
	e := start(t, fanout.Options{})
	topics := []string{e.topic(t, "a", nil), e.topic(t, "b", nil)}
	var want []string
	for i := 0; i < 130; i++ {
		q := e.queue(t, "q", nil)
		want = append(want, e.subscribe(t, topics[i%2], q, nil))
	}
	var got []string
	var pages []int
	p := sns.NewListSubscriptionsPaginator(e.sns, &sns.ListSubscriptionsInput{})
	for p.HasMorePages() {
		out, err := p.NextPage(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, len(out.Subscriptions))
		for _, s := range out.Subscriptions {
			got = append(got, aws.ToString(s.SubscriptionArn))
			if aws.ToString(s.Owner) != "000000000000" || aws.ToString(s.Protocol) != "sqs" || !strings.HasPrefix(aws.ToString(s.Endpoint), "arn:aws:sqs:") {
				t.Fatalf("subscription %+v", s)
			}
		}
	}
	if !slices.Equal(got, want) || !slices.Equal(pages, []int{100, 30}) {
		t.Fatalf("pages %v; %d subscriptions, in order %v", pages, len(got), slices.Equal(got, want))
	}
	var byTopic []types.Subscription
	pt := sns.NewListSubscriptionsByTopicPaginator(e.sns, &sns.ListSubscriptionsByTopicInput{TopicArn: aws.String(topics[0])})
	for pt.HasMorePages() {
		out, err := pt.NextPage(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		byTopic = append(byTopic, out.Subscriptions...)
	}
	if len(byTopic) != 65 {
		t.Fatalf("%d subscriptions of the first topic", len(byTopic))
	}
	for _, s := range byTopic {
		if aws.ToString(s.TopicArn) != topics[0] {
			t.Fatalf("listed %+v", s)
		}
	}
}

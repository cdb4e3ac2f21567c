package api

import (
	"net/url"
	"testing"
)

// TestTopicOf: the request log names a call's topic from any of the ARNs
// it may carry, a subscription's included, and falls back to the value
// itself when it is not an ARN.
func TestTopicOf(t *testing.T) {
	for _, c := range []struct {
		form url.Values
		want string
	}{
		{url.Values{"TopicArn": {"arn:aws:sns:us-east-1:000000000000:orders"}}, "orders"},
		{url.Values{"SubscriptionArn": {"arn:aws:sns:us-east-1:000000000000:orders.fifo:5f1c0d7e"}}, "orders.fifo"},
		{url.Values{"TargetArn": {"arn:aws:sns:us-east-1:000000000000:"}}, ""},
		{url.Values{"TopicArn": {"not-an-arn"}}, "not-an-arn"},
		{url.Values{"TopicArn": {"arn:aws:sns:us-east-1"}}, "arn:aws:sns:us-east-1"},
		{url.Values{"PhoneNumber": {"+15555550100"}}, "+15555550100"},
		{url.Values{"Name": {"orders"}}, "orders"},
	} {
		if got := topicOf(c.form); got != c.want {
			t.Errorf("topicOf(%v) = %q, want %q", c.form, got, c.want)
		}
	}
	form := url.Values{"TopicArn": {"arn:aws:sns:us-east-1:000000000000:orders"}}
	if n := testing.AllocsPerRun(100, func() { topicOf(form) }); n != 0 {
		t.Errorf("topicOf allocates %v times", n)
	}
}

package retrypolicy

import (
	"reflect"
	"testing"
)

// defaultHealthy is the seven-field retry policy AWS shows for HTTP/S by default.
const defaultHealthy = `{"minDelayTarget":20,"maxDelayTarget":20,"numRetries":3,"numMaxDelayRetries":0,"numNoDelayRetries":0,"numMinDelayRetries":0,"backoffFunction":"linear"}`

func mustTopic(t *testing.T, doc string) *TopicPolicy {
	t.Helper()
	tp, err := ParseTopic(doc)
	if err != nil {
		t.Fatalf("ParseTopic(%s): %v", doc, err)
	}
	return tp
}

func mustSub(t *testing.T, doc string) *SubscriptionPolicy {
	t.Helper()
	sp, err := ParseSubscription(doc)
	if err != nil {
		t.Fatalf("ParseSubscription(%s): %v", doc, err)
	}
	return sp
}

func TestTopicJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		doc  string
		want string
	}{
		{"unset", "", ""},
		{"empty object", `{}`, `{}`},
		{"null protocol", `{"http":null}`, `{}`},
		{"empty http gains disableSubscriptionOverrides", `{"http":{}}`, `{"http":{"disableSubscriptionOverrides":false}}`},
		{
			// LS-AWS test_topic_delivery_policy_crud: the stored value gains
			// "disableSubscriptionOverrides":false and is not filled in.
			name: "partial retry policy",
			doc:  `{"http":{"defaultHealthyRetryPolicy":{"minDelayTarget":5,"maxDelayTarget":6,"numRetries":1}}}`,
			want: `{"http":{"defaultHealthyRetryPolicy":{"minDelayTarget":5,"maxDelayTarget":6,"numRetries":1},"disableSubscriptionOverrides":false}}`,
		},
		{
			name: "keys come back in AWS's order",
			doc: `{ "http" : { "defaultRequestPolicy": {"headerContentType": "text/plain; charset=UTF-8"},
				"defaultThrottlePolicy": {"maxReceivesPerSecond": 10}, "disableSubscriptionOverrides": false,
				"defaultHealthyRetryPolicy": {"backoffFunction": "exponential", "numMaxDelayRetries": 35,
				"numMinDelayRetries": 2, "numNoDelayRetries": 3, "numRetries": 50, "maxDelayTarget": 60, "minDelayTarget": 1} } }`,
			want: `{"http":{"defaultHealthyRetryPolicy":{"minDelayTarget":1,"maxDelayTarget":60,"numRetries":50,"numMaxDelayRetries":35,"numNoDelayRetries":3,"numMinDelayRetries":2,"backoffFunction":"exponential"},"disableSubscriptionOverrides":false,"defaultThrottlePolicy":{"maxReceivesPerSecond":10},"defaultRequestPolicy":{"headerContentType":"text/plain; charset=UTF-8"}}}`,
		},
		{
			name: "nulls dropped, zeros kept",
			doc:  `{"http":{"defaultHealthyRetryPolicy":{"minDelayTarget":1,"maxDelayTarget":1,"numRetries":0,"numNoDelayRetries":null},"defaultRequestPolicy":null,"disableSubscriptionOverrides":true}}`,
			want: `{"http":{"defaultHealthyRetryPolicy":{"minDelayTarget":1,"maxDelayTarget":1,"numRetries":0},"disableSubscriptionOverrides":true}}`,
		},
		{
			name: "several protocols, sorted",
			doc:  `{"sqs":{},"http":{"defaultSicklyRetryPolicy":{"minDelayTarget":2,"maxDelayTarget":2,"numRetries":1}},"email":{}}`,
			want: `{"email":{"disableSubscriptionOverrides":false},"http":{"defaultSicklyRetryPolicy":{"minDelayTarget":2,"maxDelayTarget":2,"numRetries":1},"disableSubscriptionOverrides":false},"sqs":{"disableSubscriptionOverrides":false}}`,
		},
		{
			name: "content type not HTML-escaped",
			doc:  `{"http":{"defaultRequestPolicy":{"headerContentType":"application/xhtml+xml"},"defaultThrottlePolicy":{}}}`,
			want: `{"http":{"disableSubscriptionOverrides":false,"defaultThrottlePolicy":{},"defaultRequestPolicy":{"headerContentType":"application/xhtml+xml"}}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tp := mustTopic(t, tt.doc)
			got := tp.JSON()
			if got != tt.want {
				t.Errorf("JSON() = %s\n want    %s", got, tt.want)
			}
			if got == "" {
				return
			}
			// What SNS returns must be accepted again unchanged.
			if again := mustTopic(t, got).JSON(); again != got {
				t.Errorf("round trip = %s, want %s", again, got)
			}
		})
	}
}

func TestTopicEffectiveJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		doc  string
		want string
	}{
		{
			// LS-AWS default for every new topic (spec delivery.md §5.4).
			name: "no policy",
			doc:  "",
			want: `{"http":{"defaultHealthyRetryPolicy":{"minDelayTarget":20,"maxDelayTarget":20,"numRetries":3,"numMaxDelayRetries":0,"numNoDelayRetries":0,"numMinDelayRetries":0,"backoffFunction":"linear"},"disableSubscriptionOverrides":false,"defaultRequestPolicy":{"headerContentType":"text/plain; charset=UTF-8"}}}`,
		},
		{
			name: "empty policy",
			doc:  `{}`,
			want: `{"http":{"defaultHealthyRetryPolicy":` + defaultHealthy + `,"disableSubscriptionOverrides":false,"defaultRequestPolicy":{"headerContentType":"text/plain; charset=UTF-8"}}}`,
		},
		{
			name: "partial retry policy is filled in",
			doc:  `{"http":{"defaultHealthyRetryPolicy":{"minDelayTarget":5,"maxDelayTarget":6,"numRetries":1}}}`,
			want: `{"http":{"defaultHealthyRetryPolicy":{"minDelayTarget":5,"maxDelayTarget":6,"numRetries":1,"numMaxDelayRetries":0,"numNoDelayRetries":0,"numMinDelayRetries":0,"backoffFunction":"linear"},"disableSubscriptionOverrides":false,"defaultRequestPolicy":{"headerContentType":"text/plain; charset=UTF-8"}}}`,
		},
		{
			name: "full policy",
			doc: `{"http":{"defaultHealthyRetryPolicy":{"minDelayTarget":1,"maxDelayTarget":60,"numRetries":50,"numNoDelayRetries":3,
				"numMinDelayRetries":2,"numMaxDelayRetries":35,"backoffFunction":"exponential"},"disableSubscriptionOverrides":true,
				"defaultThrottlePolicy":{"maxReceivesPerSecond":10},"defaultRequestPolicy":{"headerContentType":"application/json"}}}`,
			want: `{"http":{"defaultHealthyRetryPolicy":{"minDelayTarget":1,"maxDelayTarget":60,"numRetries":50,"numMaxDelayRetries":35,"numNoDelayRetries":3,"numMinDelayRetries":2,"backoffFunction":"exponential"},"disableSubscriptionOverrides":true,"defaultThrottlePolicy":{"maxReceivesPerSecond":10},"defaultRequestPolicy":{"headerContentType":"application/json"}}}`,
		},
		{
			name: "empty request and throttle policies fall back",
			doc:  `{"http":{"defaultRequestPolicy":{},"defaultThrottlePolicy":{}}}`,
			want: `{"http":{"defaultHealthyRetryPolicy":` + defaultHealthy + `,"disableSubscriptionOverrides":false,"defaultRequestPolicy":{"headerContentType":"text/plain; charset=UTF-8"}}}`,
		},
		{
			name: "other protocols do not show",
			doc:  `{"sqs":{"defaultHealthyRetryPolicy":{"minDelayTarget":1,"maxDelayTarget":1,"numRetries":1}}}`,
			want: `{"http":{"defaultHealthyRetryPolicy":` + defaultHealthy + `,"disableSubscriptionOverrides":false,"defaultRequestPolicy":{"headerContentType":"text/plain; charset=UTF-8"}}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := mustTopic(t, tt.doc).EffectiveJSON(); got != tt.want {
				t.Errorf("EffectiveJSON() = %s\n want             %s", got, tt.want)
			}
		})
	}
}

func TestSubscriptionJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		doc  string
		want string
	}{
		{"unset", "", ""},
		{"empty object", `{}`, `{"healthyRetryPolicy":null,"sicklyRetryPolicy":null,"throttlePolicy":null,"requestPolicy":null,"guaranteed":false}`},
		{
			// LS-AWS test_subscribe_external_http_endpoint_content_type.
			name: "request policy only",
			doc:  `{"requestPolicy":{"headerContentType":"text/csv"}}`,
			want: `{"healthyRetryPolicy":null,"sicklyRetryPolicy":null,"throttlePolicy":null,"requestPolicy":{"headerContentType":"text/csv"},"guaranteed":false}`,
		},
		{
			name: "documented example, reordered",
			doc: `{"throttlePolicy":{"maxReceivesPerSecond":10},"healthyRetryPolicy":{"backoffFunction":"exponential","numMaxDelayRetries":35,
				"numMinDelayRetries":2,"numNoDelayRetries":3,"numRetries":50,"maxDelayTarget":60,"minDelayTarget":1}}`,
			want: `{"healthyRetryPolicy":{"minDelayTarget":1,"maxDelayTarget":60,"numRetries":50,"numMaxDelayRetries":35,"numNoDelayRetries":3,"numMinDelayRetries":2,"backoffFunction":"exponential"},"sicklyRetryPolicy":null,"throttlePolicy":{"maxReceivesPerSecond":10},"requestPolicy":null,"guaranteed":false}`,
		},
		{
			name: "deprecated fields echoed",
			doc:  `{"sicklyRetryPolicy":{"minDelayTarget":3,"maxDelayTarget":4,"numRetries":2},"guaranteed":true}`,
			want: `{"healthyRetryPolicy":null,"sicklyRetryPolicy":{"minDelayTarget":3,"maxDelayTarget":4,"numRetries":2},"throttlePolicy":null,"requestPolicy":null,"guaranteed":true}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sp := mustSub(t, tt.doc)
			got := sp.JSON()
			if got != tt.want {
				t.Errorf("JSON() = %s\n want    %s", got, tt.want)
			}
			if got == "" {
				return
			}
			if again := mustSub(t, got).JSON(); again != got {
				t.Errorf("round trip = %s, want %s", again, got)
			}
		})
	}
}

func TestResolve(t *testing.T) {
	t.Parallel()
	const (
		topicRetry = `{"http":{"defaultHealthyRetryPolicy":{"minDelayTarget":5,"maxDelayTarget":30,"numRetries":10,"numNoDelayRetries":2,"backoffFunction":"geometric"},`
		subRetry   = `{"healthyRetryPolicy":{"minDelayTarget":7,"maxDelayTarget":8,"numRetries":4}`
	)
	topicRetryPolicy := RetryPolicy{MinDelayTarget: 5, MaxDelayTarget: 30, NumRetries: 10, NumNoDelayRetries: 2, BackoffFunction: Geometric}
	subRetryPolicy := RetryPolicy{MinDelayTarget: 7, MaxDelayTarget: 8, NumRetries: 4, BackoffFunction: Linear}
	plain := &RequestPolicy{HeaderContentType: DefaultContentType}
	tests := []struct {
		name     string
		protocol string
		topic    string
		sub      string
		want     Policy
		json     string // subscription EffectiveDeliveryPolicy, when checked
	}{
		{
			name: "http with nothing set", protocol: "http",
			want: Policy{Retry: HTTPDefault(), Request: plain},
			json: `{"healthyRetryPolicy":` + defaultHealthy + `,"sicklyRetryPolicy":null,"throttlePolicy":null,"requestPolicy":{"headerContentType":"text/plain; charset=UTF-8"},"guaranteed":false}`,
		},
		{
			// LS-AWS: subscription requestPolicy text/csv and no retry policy.
			name: "subscription request policy only", protocol: "https",
			sub:  `{"requestPolicy":{"headerContentType":"text/csv"}}`,
			want: Policy{Retry: HTTPDefault(), Request: &RequestPolicy{HeaderContentType: "text/csv"}},
			json: `{"healthyRetryPolicy":{"minDelayTarget":20,"maxDelayTarget":20,"numRetries":3,"numMaxDelayRetries":0,"numNoDelayRetries":0,"numMinDelayRetries":0,"backoffFunction":"linear"},"sicklyRetryPolicy":null,"throttlePolicy":null,"requestPolicy":{"headerContentType":"text/csv"},"guaranteed":false}`,
		},
		{
			// LS-AWS: no subscription requestPolicy, topic says application/json.
			name: "topic request policy inherited", protocol: "http",
			topic: `{"http":{"defaultRequestPolicy":{"headerContentType":"application/json"}}}`,
			sub:   `{"throttlePolicy":{"maxReceivesPerSecond":3}}`,
			want:  Policy{Retry: HTTPDefault(), Throttle: &ThrottlePolicy{MaxReceivesPerSecond: ip(3)}, Request: &RequestPolicy{HeaderContentType: "application/json"}},
			json:  `{"healthyRetryPolicy":` + defaultHealthy + `,"sicklyRetryPolicy":null,"throttlePolicy":{"maxReceivesPerSecond":3},"requestPolicy":{"headerContentType":"application/json"},"guaranteed":false}`,
		},
		{
			name: "topic retry policy inherited", protocol: "https",
			topic: topicRetry + `"defaultThrottlePolicy":{"maxReceivesPerSecond":10}}}`,
			want:  Policy{Retry: topicRetryPolicy, Throttle: &ThrottlePolicy{MaxReceivesPerSecond: ip(10)}, Request: plain},
			json:  `{"healthyRetryPolicy":{"minDelayTarget":5,"maxDelayTarget":30,"numRetries":10,"numMaxDelayRetries":0,"numNoDelayRetries":2,"numMinDelayRetries":0,"backoffFunction":"geometric"},"sicklyRetryPolicy":null,"throttlePolicy":{"maxReceivesPerSecond":10},"requestPolicy":{"headerContentType":"text/plain; charset=UTF-8"},"guaranteed":false}`,
		},
		{
			// The subscription's section replaces the topic's whole section:
			// its missing fields are AWS defaults, not the topic's values.
			name: "subscription retry policy wins", protocol: "http",
			topic: topicRetry + `"defaultThrottlePolicy":{"maxReceivesPerSecond":10}}}`,
			sub:   subRetry + `,"guaranteed":true}`,
			want:  Policy{Retry: subRetryPolicy, Throttle: &ThrottlePolicy{MaxReceivesPerSecond: ip(10)}, Request: plain, Guaranteed: true},
			json:  `{"healthyRetryPolicy":{"minDelayTarget":7,"maxDelayTarget":8,"numRetries":4,"numMaxDelayRetries":0,"numNoDelayRetries":0,"numMinDelayRetries":0,"backoffFunction":"linear"},"sicklyRetryPolicy":null,"throttlePolicy":{"maxReceivesPerSecond":10},"requestPolicy":{"headerContentType":"text/plain; charset=UTF-8"},"guaranteed":true}`,
		},
		{
			name: "disableSubscriptionOverrides ignores the subscription", protocol: "http",
			topic: topicRetry + `"disableSubscriptionOverrides":true}}`,
			sub:   subRetry + `,"requestPolicy":{"headerContentType":"application/xml"},"throttlePolicy":{"maxReceivesPerSecond":1},"guaranteed":true}`,
			want:  Policy{Retry: topicRetryPolicy, Request: plain},
		},
		{
			name: "disableSubscriptionOverrides false keeps the subscription", protocol: "http",
			topic: topicRetry + `"disableSubscriptionOverrides":false}}`,
			sub:   subRetry + `}`,
			want:  Policy{Retry: subRetryPolicy, Request: plain},
		},
		{
			name: "sickly policies are carried", protocol: "http",
			topic: `{"http":{"defaultSicklyRetryPolicy":{"minDelayTarget":9,"maxDelayTarget":9,"numRetries":1}}}`,
			want: Policy{Retry: HTTPDefault(), Request: plain,
				Sickly: &RetryPolicy{MinDelayTarget: 9, MaxDelayTarget: 9, NumRetries: 1, BackoffFunction: Linear}},
			json: `{"healthyRetryPolicy":` + defaultHealthy + `,"sicklyRetryPolicy":{"minDelayTarget":9,"maxDelayTarget":9,"numRetries":1,"numMaxDelayRetries":0,"numNoDelayRetries":0,"numMinDelayRetries":0,"backoffFunction":"linear"},"throttlePolicy":null,"requestPolicy":{"headerContentType":"text/plain; charset=UTF-8"},"guaranteed":false}`,
		},
		{
			name: "only the http key applies", protocol: "https",
			topic: `{"https":{"defaultHealthyRetryPolicy":{"minDelayTarget":1,"maxDelayTarget":1,"numRetries":1}}}`,
			want:  Policy{Retry: HTTPDefault(), Request: plain},
		},
		{
			name: "sqs ignores every document", protocol: "sqs",
			topic: topicRetry + `"defaultRequestPolicy":{"headerContentType":"application/json"}},"sqs":{"defaultHealthyRetryPolicy":{"minDelayTarget":1,"maxDelayTarget":1,"numRetries":1}}}`,
			sub:   subRetry + `}`,
			want:  Policy{Retry: AWSManaged()},
		},
		{
			name: "email keeps the customer-managed schedule", protocol: "email",
			topic: topicRetry + `"disableSubscriptionOverrides":true}}`,
			want:  Policy{Retry: CustomerManaged()},
		},
		{
			name: "lambda", protocol: "lambda",
			want: Policy{Retry: AWSManaged()},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			topic, sub := mustTopic(t, tt.topic), mustSub(t, tt.sub)
			got := Resolve(tt.protocol, topic, sub)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Resolve = %+v\n want     %+v", got, tt.want)
			}
			if tt.json != "" {
				if j := got.EffectiveJSON(); j != tt.json {
					t.Errorf("EffectiveJSON() = %s\n want             %s", j, tt.json)
				}
			}
			// The resolved policy must not alias the parsed documents.
			if got.Throttle != nil && sub != nil && sub.ThrottlePolicy != nil && got.Throttle == sub.ThrottlePolicy {
				t.Error("Throttle aliases the subscription document")
			}
		})
	}
}

func TestPolicyAccessors(t *testing.T) {
	t.Parallel()
	p := Default("sqs")
	if p.ContentType() != DefaultContentType {
		t.Errorf("ContentType() = %q", p.ContentType())
	}
	if _, ok := p.MaxReceivesPerSecond(); ok {
		t.Error("sqs default is throttled")
	}
	p = Resolve("http", nil, mustSub(t, `{"throttlePolicy":{"maxReceivesPerSecond":7},"requestPolicy":{"headerContentType":"text/xml"}}`))
	if n, ok := p.MaxReceivesPerSecond(); n != 7 || !ok {
		t.Errorf("MaxReceivesPerSecond() = %d, %v", n, ok)
	}
	if p.ContentType() != "text/xml" {
		t.Errorf("ContentType() = %q", p.ContentType())
	}
	var nilTopic *TopicPolicy
	if nilTopic.HTTP() != nil || nilTopic.JSON() != "" {
		t.Error("nil TopicPolicy is not empty")
	}
	var nilSub *SubscriptionPolicy
	if nilSub.JSON() != "" {
		t.Error("nil SubscriptionPolicy renders")
	}
	for _, p := range []string{"http", "https", "email", "email-json", "sms", "sqs", "application", "lambda", "firehose"} {
		if !IsProtocol(p) {
			t.Errorf("IsProtocol(%q) = false", p)
		}
	}
	if IsProtocol("smtp") || IsHTTP("sqs") || !IsHTTP("https") {
		t.Error("protocol predicates disagree")
	}
	for _, f := range []BackoffFunction{Linear, Arithmetic, Geometric, Exponential} {
		if !f.Valid() {
			t.Errorf("%q.Valid() = false", f)
		}
	}
	if BackoffFunction("LINEAR").Valid() || BackoffFunction("").Valid() {
		t.Error("invalid backoff functions accepted")
	}
	// A hand-built policy without a backoff function renders as linear, the
	// function it behaves as.
	hand := Policy{Retry: RetryPolicy{MinDelayTarget: 2, MaxDelayTarget: 4, NumRetries: 1}}
	want := `{"healthyRetryPolicy":{"minDelayTarget":2,"maxDelayTarget":4,"numRetries":1,"numMaxDelayRetries":0,"numNoDelayRetries":0,"numMinDelayRetries":0,"backoffFunction":"linear"},"sicklyRetryPolicy":null,"throttlePolicy":null,"requestPolicy":{"headerContentType":"text/plain; charset=UTF-8"},"guaranteed":false}`
	if got := hand.EffectiveJSON(); got != want {
		t.Errorf("EffectiveJSON() = %s, want %s", got, want)
	}
}

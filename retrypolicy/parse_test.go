package retrypolicy

import (
	"errors"
	"reflect"
	"testing"
)

func ip(n int) *int { return &n }

func bp(f BackoffFunction) *BackoffFunction { return &f }

// hrp wraps a retry policy object in a topic document's "http" entry.
func hrp(body string) string { return `{"http":{"defaultHealthyRetryPolicy":` + body + `}}` }

func TestParseErrors(t *testing.T) {
	t.Parallel()
	const topicRetry = "Invalid parameter: DeliveryPolicy: http.defaultHealthyRetryPolicy."
	const subRetry = "Invalid parameter: DeliveryPolicy: healthyRetryPolicy."
	tests := []struct {
		name  string
		topic bool // ParseTopic, else ParseSubscription
		doc   string
		want  string
	}{
		// Document shape.
		{"not JSON", true, `{"http":`, "Invalid parameter: DeliveryPolicy: failed to parse JSON."},
		{"not JSON subscription", false, `nope`, "Invalid parameter: DeliveryPolicy: failed to parse JSON."},
		{"array root", true, `[]`, "Invalid parameter: DeliveryPolicy: failed to parse JSON."},
		{"string root", false, `"x"`, "Invalid parameter: DeliveryPolicy: failed to parse JSON."},
		{"null root", false, `null`, "Invalid parameter: DeliveryPolicy: failed to parse JSON."},
		{"trailing data", true, `{} {}`, "Invalid parameter: DeliveryPolicy: failed to parse JSON."},
		{"unknown protocol", true, `{"smtp":{}}`, "Invalid parameter: DeliveryPolicy: Unexpected JSON member: smtp"},
		{"protocol not an object", true, `{"http":5}`, "Invalid parameter: DeliveryPolicy: http must be a JSON object"},
		{"subscription key in topic", true, `{"http":{"throttlePolicy":{"maxReceivesPerSecond":1}}}`,
			"Invalid parameter: DeliveryPolicy: Unexpected JSON member: throttlePolicy"},
		{"topic key in subscription", false, `{"defaultHealthyRetryPolicy":{}}`,
			"Invalid parameter: DeliveryPolicy: Unexpected JSON member: defaultHealthyRetryPolicy"},
		{"topic wrapper in subscription", false, `{"http":{}}`, "Invalid parameter: DeliveryPolicy: Unexpected JSON member: http"},
		{"retry policy not an object", false, `{"healthyRetryPolicy":[]}`,
			"Invalid parameter: DeliveryPolicy: healthyRetryPolicy must be a JSON object"},
		{"unknown retry field", false, `{"healthyRetryPolicy":{"minDelayTarget":1,"maxDelayTarget":1,"numRetries":1,"maxRetries":1}}`,
			"Invalid parameter: DeliveryPolicy: Unexpected JSON member: maxRetries"},

		// Required retry fields, in the order they are checked.
		{"documented numRetries-only example", false, `{"healthyRetryPolicy":{"numRetries":5}}`, subRetry + "minDelayTarget must be specified"},
		{"topic numRetries-only example", true, hrp(`{"numRetries":5}`), topicRetry + "minDelayTarget must be specified"},
		{"missing maxDelayTarget", true, hrp(`{"minDelayTarget":1,"numRetries":5}`), topicRetry + "maxDelayTarget must be specified"},
		{"missing numRetries", false, `{"healthyRetryPolicy":{"minDelayTarget":1,"maxDelayTarget":5}}`, subRetry + "numRetries must be specified"},
		{"null field is missing", false, `{"healthyRetryPolicy":{"minDelayTarget":null,"maxDelayTarget":5,"numRetries":1}}`,
			subRetry + "minDelayTarget must be specified"},
		{"empty retry policy", true, hrp(`{}`), topicRetry + "minDelayTarget must be specified"},

		// Ranges.
		{"minDelayTarget 0", false, `{"healthyRetryPolicy":{"minDelayTarget":0,"maxDelayTarget":0,"numRetries":0}}`,
			subRetry + "minDelayTarget must be greater than or equal to 1"},
		{"minDelayTarget negative", true, hrp(`{"minDelayTarget":-5,"maxDelayTarget":5,"numRetries":1}`),
			topicRetry + "minDelayTarget must be greater than or equal to 1"},
		{"maxDelayTarget above 3600", true, hrp(`{"minDelayTarget":1,"maxDelayTarget":3601,"numRetries":0}`),
			topicRetry + "maxDelayTarget must be less than or equal to 3600"},
		{"minDelayTarget above 3600", false, `{"healthyRetryPolicy":{"minDelayTarget":4000,"maxDelayTarget":3600,"numRetries":0}}`,
			subRetry + "maxDelayTarget must be greater than or equal to minDelayTarget"},
		{"maxDelayTarget below min", false, `{"healthyRetryPolicy":{"minDelayTarget":5,"maxDelayTarget":3,"numRetries":1}}`,
			subRetry + "maxDelayTarget must be greater than or equal to minDelayTarget"},
		{"numRetries negative", true, hrp(`{"minDelayTarget":1,"maxDelayTarget":1,"numRetries":-1}`),
			topicRetry + "numRetries must be greater than or equal to 0"},
		{"numRetries above 100", true, hrp(`{"minDelayTarget":1,"maxDelayTarget":1,"numRetries":101}`),
			topicRetry + "numRetries must be less than or equal to 100"},
		{"numNoDelayRetries negative", false, `{"healthyRetryPolicy":{"minDelayTarget":1,"maxDelayTarget":1,"numRetries":1,"numNoDelayRetries":-1}}`,
			subRetry + "numNoDelayRetries must be greater than or equal to 0"},
		{"numMinDelayRetries negative", false, `{"healthyRetryPolicy":{"minDelayTarget":1,"maxDelayTarget":1,"numRetries":1,"numMinDelayRetries":-1}}`,
			subRetry + "numMinDelayRetries must be greater than or equal to 0"},
		{"numMaxDelayRetries negative", false, `{"healthyRetryPolicy":{"minDelayTarget":1,"maxDelayTarget":1,"numRetries":1,"numMaxDelayRetries":-1}}`,
			subRetry + "numMaxDelayRetries must be greater than or equal to 0"},
		{"phases exceed numRetries", true,
			hrp(`{"minDelayTarget":1,"maxDelayTarget":5,"numRetries":5,"numNoDelayRetries":2,"numMinDelayRetries":2,"numMaxDelayRetries":2}`),
			topicRetry + "numRetries must be greater than or equal to total of numMinDelayRetries, numNoDelayRetries and numMaxDelayRetries"},
		{"total delay above 3600 s", true, hrp(`{"minDelayTarget":1,"maxDelayTarget":3600,"numRetries":2}`),
			"Invalid parameter: DeliveryPolicy: http.defaultHealthyRetryPolicy: total retry time must be less than or equal to 3600 seconds"},
		{"total delay 3601 s", false, `{"healthyRetryPolicy":{"minDelayTarget":1,"maxDelayTarget":3600,"numRetries":2,"numNoDelayRetries":0,"numMinDelayRetries":1}}`,
			"Invalid parameter: DeliveryPolicy: healthyRetryPolicy: total retry time must be less than or equal to 3600 seconds"},

		// Value types and enumerations.
		{"backoff wrong case", false, `{"healthyRetryPolicy":{"minDelayTarget":1,"maxDelayTarget":1,"numRetries":1,"backoffFunction":"Linear"}}`,
			"Invalid parameter: DeliveryPolicy: healthyRetryPolicy.backoffFunction: Invalid value [Linear]. Must be linear, arithmetic, geometric or exponential"},
		{"backoff unknown", true, hrp(`{"minDelayTarget":1,"maxDelayTarget":1,"numRetries":1,"backoffFunction":"fibonacci"}`),
			"Invalid parameter: DeliveryPolicy: http.defaultHealthyRetryPolicy.backoffFunction: Invalid value [fibonacci]. Must be linear, arithmetic, geometric or exponential"},
		{"backoff not a string", true, hrp(`{"backoffFunction":1}`), topicRetry + "backoffFunction must be a string"},
		{"integer as string", false, `{"healthyRetryPolicy":{"minDelayTarget":"5"}}`, subRetry + "minDelayTarget must be an integer"},
		{"fractional integer", false, `{"healthyRetryPolicy":{"numRetries":1.5}}`, subRetry + "numRetries must be an integer"},
		{"integer overflow", true, hrp(`{"maxDelayTarget":1e10}`), topicRetry + "maxDelayTarget must be an integer"},
		{"integer as bool", true, hrp(`{"numMaxDelayRetries":true}`), topicRetry + "numMaxDelayRetries must be an integer"},
		{"disableSubscriptionOverrides as string", true, `{"http":{"disableSubscriptionOverrides":"true"}}`,
			"Invalid parameter: DeliveryPolicy: http.disableSubscriptionOverrides must be a boolean"},
		{"guaranteed as string", false, `{"guaranteed":"yes"}`, "Invalid parameter: DeliveryPolicy: guaranteed must be a boolean"},

		// Throttle and request policies.
		{"topic throttle zero", true, `{"http":{"defaultThrottlePolicy":{"maxReceivesPerSecond":0}}}`,
			"Invalid parameter: DeliveryPolicy: http.defaultThrottlePolicy.maxReceivesPerSecond must be greater than or equal to 1"},
		{"subscription throttle negative", false, `{"throttlePolicy":{"maxReceivesPerSecond":-3}}`,
			"Invalid parameter: DeliveryPolicy: throttlePolicy.maxReceivesPerSecond must be greater than or equal to 1"},
		{"throttle not an integer", false, `{"throttlePolicy":{"maxReceivesPerSecond":"10"}}`,
			"Invalid parameter: DeliveryPolicy: throttlePolicy.maxReceivesPerSecond must be an integer"},
		{"throttle unknown field", true, `{"http":{"defaultThrottlePolicy":{"maxReceivesPerMinute":1}}}`,
			"Invalid parameter: DeliveryPolicy: Unexpected JSON member: maxReceivesPerMinute"},
		{"throttle not an object", false, `{"throttlePolicy":10}`, "Invalid parameter: DeliveryPolicy: throttlePolicy must be a JSON object"},
		{"unsupported content type", true, `{"http":{"defaultRequestPolicy":{"headerContentType":"image/png"}}}`,
			"Invalid parameter: DeliveryPolicy: http.defaultRequestPolicy.headerContentType: Invalid value [image/png]. Must be a supported content type"},
		{"empty content type", false, `{"requestPolicy":{"headerContentType":""}}`,
			"Invalid parameter: DeliveryPolicy: requestPolicy.headerContentType: Invalid value []. Must be a supported content type"},
		{"malformed content type", false, `{"requestPolicy":{"headerContentType":"text/plain; charset"}}`,
			"Invalid parameter: DeliveryPolicy: requestPolicy.headerContentType: Invalid value [text/plain; charset]. Must be a supported content type"},
		{"content type not a string", false, `{"requestPolicy":{"headerContentType":5}}`,
			"Invalid parameter: DeliveryPolicy: requestPolicy.headerContentType must be a string"},
		{"request unknown field", false, `{"requestPolicy":{"headerAccept":"text/plain"}}`,
			"Invalid parameter: DeliveryPolicy: Unexpected JSON member: headerAccept"},
		{"request not an object", true, `{"http":{"defaultRequestPolicy":"text/plain"}}`,
			"Invalid parameter: DeliveryPolicy: http.defaultRequestPolicy must be a JSON object"},

		// Deprecated sections are validated like the healthy policy.
		{"topic sickly policy", true, `{"http":{"defaultSicklyRetryPolicy":{"numRetries":1}}}`,
			"Invalid parameter: DeliveryPolicy: http.defaultSicklyRetryPolicy.minDelayTarget must be specified"},
		{"subscription sickly policy", false, `{"sicklyRetryPolicy":{"minDelayTarget":1,"maxDelayTarget":1,"numRetries":200}}`,
			"Invalid parameter: DeliveryPolicy: sicklyRetryPolicy.numRetries must be less than or equal to 100"},

		// Other protocol keys are validated under their own name.
		{"sqs entry", true, `{"sqs":{"defaultHealthyRetryPolicy":{"minDelayTarget":0,"maxDelayTarget":1,"numRetries":1}}}`,
			"Invalid parameter: DeliveryPolicy: sqs.defaultHealthyRetryPolicy.minDelayTarget must be greater than or equal to 1"},

		// The first problem in document order wins.
		{"first error wins", false, `{"requestPolicy":{"headerContentType":"x/y"},"healthyRetryPolicy":{}}`,
			"Invalid parameter: DeliveryPolicy: requestPolicy.headerContentType: Invalid value [x/y]. Must be a supported content type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var err error
			var got any
			if tt.topic {
				got, err = ParseTopic(tt.doc)
			} else {
				got, err = ParseSubscription(tt.doc)
			}
			if err == nil {
				t.Fatalf("parsed %s as %+v, want error %q", tt.doc, got, tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("error = %q\n want   %q", err.Error(), tt.want)
			}
			var perr *Error
			if !errors.As(err, &perr) {
				t.Fatalf("error %T is not *Error", err)
			}
			const prefix = "Invalid parameter: DeliveryPolicy: "
			if want := "Invalid parameter: Attributes Reason: DeliveryPolicy: " + tt.want[len(prefix):]; perr.AttributesMessage() != want {
				t.Errorf("AttributesMessage() = %q, want %q", perr.AttributesMessage(), want)
			}
		})
	}
}

// TestAWSRecordedMessages pins the messages seen from real AWS (see NOTES.md).
func TestAWSRecordedMessages(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		topic      bool
		doc        string
		attributes bool // CreateTopic/Subscribe form
		want       string
	}{
		{"SetSubscriptionAttributes without minDelayTarget", false, `{"healthyRetryPolicy":{"numRetries":5}}`, false,
			"Invalid parameter: DeliveryPolicy: healthyRetryPolicy.minDelayTarget must be specified"},
		{"Subscribe with minDelayTarget 0", false,
			`{"healthyRetryPolicy":{"numRetries":0,"minDelayTarget":0,"maxDelayTarget":0,"numMinDelayRetries":0,"numMaxDelayRetries":0,"numNoDelayRetries":0,"backoffFunction":"exponential"}}`,
			true, "Invalid parameter: Attributes Reason: DeliveryPolicy: healthyRetryPolicy.minDelayTarget must be greater than or equal to 1"},
		{"SetTopicAttributes with 101 retries", true, hrp(`{"minDelayTarget":1,"maxDelayTarget":1,"numRetries":101}`), false,
			"Invalid parameter: DeliveryPolicy: http.defaultHealthyRetryPolicy.numRetries must be less than or equal to 100"},
		{"CreateTopic with 101 retries", true, hrp(`{"minDelayTarget":1,"maxDelayTarget":1,"numRetries":101}`), true,
			"Invalid parameter: Attributes Reason: DeliveryPolicy: http.defaultHealthyRetryPolicy.numRetries must be less than or equal to 100"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var err error
			if tt.topic {
				_, err = ParseTopic(tt.doc)
			} else {
				_, err = ParseSubscription(tt.doc)
			}
			var perr *Error
			if !errors.As(err, &perr) {
				t.Fatalf("err = %v, want *Error", err)
			}
			got := perr.Error()
			if tt.attributes {
				got = perr.AttributesMessage()
			}
			if got != tt.want {
				t.Errorf("message = %q\n want     %q", got, tt.want)
			}
		})
	}
	if ErrorCode != "InvalidParameter" {
		t.Errorf("ErrorCode = %q", ErrorCode)
	}
}

func TestParseTopic(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		doc  string
		want *TopicPolicy
	}{
		{"empty", "", nil},
		{"blank", " \n\t", nil},
		{"empty object", `{}`, &TopicPolicy{Protocols: map[string]*TopicDefaults{}}},
		{"null protocol dropped", `{"http":null}`, &TopicPolicy{Protocols: map[string]*TopicDefaults{}}},
		{"empty http", `{"http":{}}`, &TopicPolicy{Protocols: map[string]*TopicDefaults{"http": {}}}},
		{
			name: "documented example",
			doc: `{"http":{"defaultHealthyRetryPolicy":{"minDelayTarget":1,"maxDelayTarget":60,"numRetries":50,
				"numNoDelayRetries":3,"numMinDelayRetries":2,"numMaxDelayRetries":35,"backoffFunction":"exponential"},
				"disableSubscriptionOverrides":false,
				"defaultThrottlePolicy":{"maxReceivesPerSecond":10},
				"defaultRequestPolicy":{"headerContentType":"text/plain; charset=UTF-8"}}}`,
			want: &TopicPolicy{Protocols: map[string]*TopicDefaults{"http": {
				HealthyRetryPolicy: &RetrySettings{MinDelayTarget: ip(1), MaxDelayTarget: ip(60), NumRetries: ip(50),
					NumNoDelayRetries: ip(3), NumMinDelayRetries: ip(2), NumMaxDelayRetries: ip(35), BackoffFunction: bp(Exponential)},
				ThrottlePolicy: &ThrottlePolicy{MaxReceivesPerSecond: ip(10)},
				RequestPolicy:  &RequestPolicy{HeaderContentType: "text/plain; charset=UTF-8"},
			}}},
		},
		{
			name: "nulls, duplicates and lenient numbers",
			doc: `{"http":{"defaultHealthyRetryPolicy":{"minDelayTarget":2.0,"maxDelayTarget":3e1,"numRetries":4,"numRetries":5,
				"backoffFunction":null},"defaultThrottlePolicy":null,"defaultRequestPolicy":{},"disableSubscriptionOverrides":true}}`,
			want: &TopicPolicy{Protocols: map[string]*TopicDefaults{"http": {
				HealthyRetryPolicy:           &RetrySettings{MinDelayTarget: ip(2), MaxDelayTarget: ip(30), NumRetries: ip(5)},
				RequestPolicy:                &RequestPolicy{},
				DisableSubscriptionOverrides: true,
			}}},
		},
		{
			name: "total delay exactly 3600 s",
			doc:  hrp(`{"minDelayTarget":1200,"maxDelayTarget":1200,"numRetries":3}`),
			want: &TopicPolicy{Protocols: map[string]*TopicDefaults{"http": {
				HealthyRetryPolicy: &RetrySettings{MinDelayTarget: ip(1200), MaxDelayTarget: ip(1200), NumRetries: ip(3)},
			}}},
		},
		{
			name: "limits at their edges",
			doc:  hrp(`{"minDelayTarget":1,"maxDelayTarget":3600,"numRetries":100,"numNoDelayRetries":99,"numMaxDelayRetries":0,"numMinDelayRetries":1}`),
			want: &TopicPolicy{Protocols: map[string]*TopicDefaults{"http": {
				HealthyRetryPolicy: &RetrySettings{MinDelayTarget: ip(1), MaxDelayTarget: ip(3600), NumRetries: ip(100),
					NumNoDelayRetries: ip(99), NumMaxDelayRetries: ip(0), NumMinDelayRetries: ip(1)},
			}}},
		},
		{
			name: "other protocols and sickly policy",
			doc: `{"sqs":{"disableSubscriptionOverrides":false},"https":{"defaultSicklyRetryPolicy":
				{"minDelayTarget":1,"maxDelayTarget":1,"numRetries":0}}}`,
			want: &TopicPolicy{Protocols: map[string]*TopicDefaults{
				"sqs":   {},
				"https": {SicklyRetryPolicy: &RetrySettings{MinDelayTarget: ip(1), MaxDelayTarget: ip(1), NumRetries: ip(0)}},
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseTopic(tt.doc)
			if err != nil {
				t.Fatalf("ParseTopic: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseTopic = %s, want %s", got.JSON(), tt.want.JSON())
			}
		})
	}
}

func TestParseSubscription(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		doc  string
		want *SubscriptionPolicy
	}{
		{"empty", "", nil},
		{"empty object", `{}`, &SubscriptionPolicy{}},
		{"all null", `{"healthyRetryPolicy":null,"sicklyRetryPolicy":null,"throttlePolicy":null,"requestPolicy":null,"guaranteed":null}`,
			&SubscriptionPolicy{}},
		{"request only", `{"requestPolicy":{"headerContentType":"text/csv"}}`,
			&SubscriptionPolicy{RequestPolicy: &RequestPolicy{HeaderContentType: "text/csv"}}},
		{"content type case and charset kept as given", `{"requestPolicy":{"headerContentType":"Application/JSON;charset=utf-8"}}`,
			&SubscriptionPolicy{RequestPolicy: &RequestPolicy{HeaderContentType: "Application/JSON;charset=utf-8"}}},
		{
			name: "documented example",
			doc: `{"healthyRetryPolicy":{"minDelayTarget":1,"maxDelayTarget":60,"numRetries":50,"numNoDelayRetries":3,
				"numMinDelayRetries":2,"numMaxDelayRetries":35,"backoffFunction":"exponential"},
				"throttlePolicy":{"maxReceivesPerSecond":10},"guaranteed":true}`,
			want: &SubscriptionPolicy{
				HealthyRetryPolicy: &RetrySettings{MinDelayTarget: ip(1), MaxDelayTarget: ip(60), NumRetries: ip(50),
					NumNoDelayRetries: ip(3), NumMinDelayRetries: ip(2), NumMaxDelayRetries: ip(35), BackoffFunction: bp(Exponential)},
				ThrottlePolicy: &ThrottlePolicy{MaxReceivesPerSecond: ip(10)},
				Guaranteed:     true,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseSubscription(tt.doc)
			if err != nil {
				t.Fatalf("ParseSubscription: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseSubscription = %s, want %s", got.JSON(), tt.want.JSON())
			}
		})
	}
}

func TestContentTypes(t *testing.T) {
	t.Parallel()
	for _, ct := range []string{
		"text/plain", "text/plain; charset=UTF-8", "application/json", "application/json; charset=UTF-8",
		"application/xml", "text/csv", "TEXT/HTML", "text/xml", "text/css", "application/atom+xml",
		"application/octet-stream", "application/soap+xml", "application/x-www-form-urlencoded", "application/xhtml+xml",
	} {
		if !validContentType(ct) {
			t.Errorf("validContentType(%q) = false", ct)
		}
	}
	for _, ct := range []string{"", "text", "image/png", "application/pdf", "*/*"} {
		if validContentType(ct) {
			t.Errorf("validContentType(%q) = true", ct)
		}
	}
}

func TestRetrySettingsPolicyDefaults(t *testing.T) {
	t.Parallel()
	got := RetrySettings{MinDelayTarget: ip(5), NumRetries: ip(7)}.Policy()
	want := RetryPolicy{MinDelayTarget: 5, MaxDelayTarget: 20, NumRetries: 7, BackoffFunction: Linear}
	if got != want {
		t.Errorf("Policy() = %+v, want %+v", got, want)
	}
	if (RetrySettings{}).Policy() != HTTPDefault() {
		t.Errorf("empty settings do not give the HTTP default")
	}
}

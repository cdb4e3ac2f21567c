package retrypolicy

import (
	"bytes"
	"encoding/json"
)

// Resolve returns the policy in force for a subscription of the given
// protocol, from the topic's and the subscription's DeliveryPolicy (either may
// be nil).
//
// Only http and https can be customised: every other protocol gets AWS's
// fixed schedule whatever the documents say. For HTTP/S the precedence is, per
// section (retry, sickly retry, throttle, request): subscription policy, then
// the topic's "http" defaults, then AWS's defaults. A section replaces the
// whole section below it; its missing fields take AWS's defaults, not the
// topic's. When the topic sets disableSubscriptionOverrides, the subscription
// policy is ignored altogether.
func Resolve(protocol string, topic *TopicPolicy, sub *SubscriptionPolicy) Policy {
	pol := Default(protocol)
	if !IsHTTP(protocol) {
		return pol
	}
	if td := topic.HTTP(); td != nil {
		pol.apply(td.HealthyRetryPolicy, td.SicklyRetryPolicy, td.ThrottlePolicy, td.RequestPolicy)
		if td.DisableSubscriptionOverrides {
			sub = nil
		}
	}
	if sub != nil {
		pol.apply(sub.HealthyRetryPolicy, sub.SicklyRetryPolicy, sub.ThrottlePolicy, sub.RequestPolicy)
		pol.Guaranteed = sub.Guaranteed
	}
	return pol
}

// apply overlays the sections that are present; it copies everything so that
// the Policy never aliases a parsed document.
func (p *Policy) apply(healthy, sickly *RetrySettings, throttle *ThrottlePolicy, request *RequestPolicy) {
	if healthy != nil {
		p.Retry = healthy.Policy()
	}
	if sickly != nil {
		r := sickly.Policy()
		p.Sickly = &r
	}
	if throttle != nil && throttle.MaxReceivesPerSecond != nil {
		n := *throttle.MaxReceivesPerSecond
		p.Throttle = &ThrottlePolicy{MaxReceivesPerSecond: &n}
	}
	if request != nil && request.HeaderContentType != "" {
		p.Request = &RequestPolicy{HeaderContentType: request.HeaderContentType}
	}
}

// retryJSON is a complete retry policy in AWS's key order.
type retryJSON struct {
	MinDelayTarget     int             `json:"minDelayTarget"`
	MaxDelayTarget     int             `json:"maxDelayTarget"`
	NumRetries         int             `json:"numRetries"`
	NumMaxDelayRetries int             `json:"numMaxDelayRetries"`
	NumNoDelayRetries  int             `json:"numNoDelayRetries"`
	NumMinDelayRetries int             `json:"numMinDelayRetries"`
	BackoffFunction    BackoffFunction `json:"backoffFunction"`
}

func newRetryJSON(r RetryPolicy) retryJSON {
	if r.BackoffFunction == "" {
		r.BackoffFunction = Linear
	}
	return retryJSON(r)
}

func newRetryJSONPtr(r *RetryPolicy) *retryJSON {
	if r == nil {
		return nil
	}
	j := newRetryJSON(*r)
	return &j
}

// settingsJSON is a retry policy as the user gave it, in AWS's key order.
type settingsJSON struct {
	MinDelayTarget     *int             `json:"minDelayTarget,omitempty"`
	MaxDelayTarget     *int             `json:"maxDelayTarget,omitempty"`
	NumRetries         *int             `json:"numRetries,omitempty"`
	NumMaxDelayRetries *int             `json:"numMaxDelayRetries,omitempty"`
	NumNoDelayRetries  *int             `json:"numNoDelayRetries,omitempty"`
	NumMinDelayRetries *int             `json:"numMinDelayRetries,omitempty"`
	BackoffFunction    *BackoffFunction `json:"backoffFunction,omitempty"`
}

func newSettingsJSON(s *RetrySettings) *settingsJSON {
	if s == nil {
		return nil
	}
	j := settingsJSON(*s)
	return &j
}

type throttleJSON struct {
	MaxReceivesPerSecond *int `json:"maxReceivesPerSecond,omitempty"`
}

func newThrottleJSON(t *ThrottlePolicy) *throttleJSON {
	if t == nil {
		return nil
	}
	return &throttleJSON{MaxReceivesPerSecond: t.MaxReceivesPerSecond}
}

type requestJSON struct {
	HeaderContentType string `json:"headerContentType,omitempty"`
}

func newRequestJSON(r *RequestPolicy) *requestJSON {
	if r == nil {
		return nil
	}
	return &requestJSON{HeaderContentType: r.HeaderContentType}
}

// topicDefaultsJSON is one protocol entry of a stored topic DeliveryPolicy.
// disableSubscriptionOverrides is always written: AWS adds it when absent.
type topicDefaultsJSON struct {
	HealthyRetryPolicy           *settingsJSON `json:"defaultHealthyRetryPolicy,omitempty"`
	SicklyRetryPolicy            *settingsJSON `json:"defaultSicklyRetryPolicy,omitempty"`
	DisableSubscriptionOverrides bool          `json:"disableSubscriptionOverrides"`
	ThrottlePolicy               *throttleJSON `json:"defaultThrottlePolicy,omitempty"`
	RequestPolicy                *requestJSON  `json:"defaultRequestPolicy,omitempty"`
}

// JSON renders the topic's DeliveryPolicy attribute as GetTopicAttributes
// returns it: the document as set, normalised (nulls dropped, keys in AWS's
// order, "disableSubscriptionOverrides":false added to each protocol entry).
// A nil policy renders as "" (the attribute is then omitted).
func (t *TopicPolicy) JSON() string {
	if t == nil {
		return ""
	}
	out := make(map[string]topicDefaultsJSON, len(t.Protocols))
	for proto, td := range t.Protocols {
		out[proto] = topicDefaultsJSON{
			HealthyRetryPolicy:           newSettingsJSON(td.HealthyRetryPolicy),
			SicklyRetryPolicy:            newSettingsJSON(td.SicklyRetryPolicy),
			DisableSubscriptionOverrides: td.DisableSubscriptionOverrides,
			ThrottlePolicy:               newThrottleJSON(td.ThrottlePolicy),
			RequestPolicy:                newRequestJSON(td.RequestPolicy),
		}
	}
	return marshal(out)
}

type effectiveTopicHTTPJSON struct {
	HealthyRetryPolicy           retryJSON     `json:"defaultHealthyRetryPolicy"`
	SicklyRetryPolicy            *retryJSON    `json:"defaultSicklyRetryPolicy,omitempty"`
	DisableSubscriptionOverrides bool          `json:"disableSubscriptionOverrides"`
	ThrottlePolicy               *throttleJSON `json:"defaultThrottlePolicy,omitempty"`
	RequestPolicy                requestJSON   `json:"defaultRequestPolicy"`
}

type effectiveTopicJSON struct {
	HTTP effectiveTopicHTTPJSON `json:"http"`
}

// EffectiveJSON renders the topic's EffectiveDeliveryPolicy attribute: the
// "http" entry of the topic's DeliveryPolicy merged over AWS's HTTP/S
// defaults, with all seven retry fields filled in. It is nil-safe: a topic
// without a DeliveryPolicy renders AWS's default,
//
//	{"http":{"defaultHealthyRetryPolicy":{"minDelayTarget":20,"maxDelayTarget":20,"numRetries":3,"numMaxDelayRetries":0,"numNoDelayRetries":0,"numMinDelayRetries":0,"backoffFunction":"linear"},"disableSubscriptionOverrides":false,"defaultRequestPolicy":{"headerContentType":"text/plain; charset=UTF-8"}}}
func (t *TopicPolicy) EffectiveJSON() string {
	pol := Resolve("http", t, nil)
	out := effectiveTopicHTTPJSON{
		HealthyRetryPolicy: newRetryJSON(pol.Retry),
		SicklyRetryPolicy:  newRetryJSONPtr(pol.Sickly),
		ThrottlePolicy:     newThrottleJSON(pol.Throttle),
		RequestPolicy:      requestJSON{HeaderContentType: pol.ContentType()},
	}
	if td := t.HTTP(); td != nil {
		out.DisableSubscriptionOverrides = td.DisableSubscriptionOverrides
	}
	return marshal(effectiveTopicJSON{HTTP: out})
}

// subscriptionJSON is the stored subscription DeliveryPolicy: AWS always
// returns all five keys, absent sections as null.
type subscriptionJSON struct {
	HealthyRetryPolicy *settingsJSON `json:"healthyRetryPolicy"`
	SicklyRetryPolicy  *settingsJSON `json:"sicklyRetryPolicy"`
	ThrottlePolicy     *throttleJSON `json:"throttlePolicy"`
	RequestPolicy      *requestJSON  `json:"requestPolicy"`
	Guaranteed         bool          `json:"guaranteed"`
}

// JSON renders the subscription's DeliveryPolicy attribute as
// GetSubscriptionAttributes returns it, e.g. after setting only a request
// policy:
//
//	{"healthyRetryPolicy":null,"sicklyRetryPolicy":null,"throttlePolicy":null,"requestPolicy":{"headerContentType":"text/csv"},"guaranteed":false}
//
// A nil policy renders as "" (the attribute is then omitted).
func (s *SubscriptionPolicy) JSON() string {
	if s == nil {
		return ""
	}
	return marshal(subscriptionJSON{
		HealthyRetryPolicy: newSettingsJSON(s.HealthyRetryPolicy),
		SicklyRetryPolicy:  newSettingsJSON(s.SicklyRetryPolicy),
		ThrottlePolicy:     newThrottleJSON(s.ThrottlePolicy),
		RequestPolicy:      newRequestJSON(s.RequestPolicy),
		Guaranteed:         s.Guaranteed,
	})
}

type effectiveSubscriptionJSON struct {
	HealthyRetryPolicy retryJSON     `json:"healthyRetryPolicy"`
	SicklyRetryPolicy  *retryJSON    `json:"sicklyRetryPolicy"`
	ThrottlePolicy     *throttleJSON `json:"throttlePolicy"`
	RequestPolicy      requestJSON   `json:"requestPolicy"`
	Guaranteed         bool          `json:"guaranteed"`
}

// EffectiveJSON renders a subscription's EffectiveDeliveryPolicy attribute
// (SNS returns it for HTTP/S subscriptions only), e.g. for an HTTP/S
// subscription with no policy anywhere:
//
//	{"healthyRetryPolicy":{"minDelayTarget":20,"maxDelayTarget":20,"numRetries":3,"numMaxDelayRetries":0,"numNoDelayRetries":0,"numMinDelayRetries":0,"backoffFunction":"linear"},"sicklyRetryPolicy":null,"throttlePolicy":null,"requestPolicy":{"headerContentType":"text/plain; charset=UTF-8"},"guaranteed":false}
func (p Policy) EffectiveJSON() string {
	return marshal(effectiveSubscriptionJSON{
		HealthyRetryPolicy: newRetryJSON(p.Retry),
		SicklyRetryPolicy:  newRetryJSONPtr(p.Sickly),
		ThrottlePolicy:     newThrottleJSON(p.Throttle),
		RequestPolicy:      requestJSON{HeaderContentType: p.ContentType()},
		Guaranteed:         p.Guaranteed,
	})
}

// marshal encodes v compactly without HTML escaping, so that a value such as
// a content type comes back byte for byte as AWS would write it.
func marshal(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Only plain structs, maps of them and ints/strings are encoded here.
		panic("retrypolicy: " + err.Error())
	}
	return string(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

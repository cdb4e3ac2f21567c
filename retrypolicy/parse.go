package retrypolicy

import (
	"bytes"
	"encoding/json"
	"math"
	"mime"
	"strconv"
	"strings"
)

// ErrorCode is the AWS error code of every [Error]: SNS reports an invalid
// delivery policy as InvalidParameter (HTTP 400, Sender fault).
const ErrorCode = "InvalidParameter"

// Error is an invalid DeliveryPolicy. Its Error text is the complete message
// SNS puts in the InvalidParameter error of SetTopicAttributes and
// SetSubscriptionAttributes, for example
//
//	Invalid parameter: DeliveryPolicy: healthyRetryPolicy.minDelayTarget must be specified
//
// CreateTopic and Subscribe report the same problem inside their Attributes
// parameter; use [Error.AttributesMessage] there.
type Error struct {
	// Reason is the part after "DeliveryPolicy: ".
	Reason string
}

// Error returns the message for SetTopicAttributes / SetSubscriptionAttributes.
func (e *Error) Error() string { return "Invalid parameter: DeliveryPolicy: " + e.Reason }

// AttributesMessage returns the message for CreateTopic / Subscribe, where AWS
// wraps the reason as "Invalid parameter: Attributes Reason: DeliveryPolicy: ...".
func (e *Error) AttributesMessage() string {
	return "Invalid parameter: Attributes Reason: DeliveryPolicy: " + e.Reason
}

func errorf(parts ...string) *Error { return &Error{Reason: strings.Join(parts, "")} }

// Limits AWS enforces on a retry policy.
const (
	minMinDelayTarget = 1
	maxMaxDelayTarget = 3600
	maxNumRetries     = 100
)

// contentTypes are the media types SNS accepts for headerContentType (AWS's
// "Creating an HTTP/S delivery policy" list); a charset or other parameter may
// follow.
var contentTypes = map[string]bool{
	"application/atom+xml":              true,
	"application/json":                  true,
	"application/octet-stream":          true,
	"application/soap+xml":              true,
	"application/x-www-form-urlencoded": true,
	"application/xhtml+xml":             true,
	"application/xml":                   true,
	"text/css":                          true,
	"text/csv":                          true,
	"text/html":                         true,
	"text/plain":                        true,
	"text/xml":                          true,
}

// RetrySettings is a retry policy as written in a DeliveryPolicy document:
// a field is nil when the document did not give it. [RetrySettings.Policy]
// fills the gaps with AWS's defaults.
type RetrySettings struct {
	MinDelayTarget     *int
	MaxDelayTarget     *int
	NumRetries         *int
	NumMaxDelayRetries *int
	NumNoDelayRetries  *int
	NumMinDelayRetries *int
	BackoffFunction    *BackoffFunction
}

// Policy returns the complete retry policy: fields the document left out take
// AWS's documented defaults (20 s, 20 s, 3 retries, 0, 0, 0, linear).
func (s RetrySettings) Policy() RetryPolicy {
	r := HTTPDefault()
	set := func(dst *int, src *int) {
		if src != nil {
			*dst = *src
		}
	}
	set(&r.MinDelayTarget, s.MinDelayTarget)
	set(&r.MaxDelayTarget, s.MaxDelayTarget)
	set(&r.NumRetries, s.NumRetries)
	set(&r.NumMaxDelayRetries, s.NumMaxDelayRetries)
	set(&r.NumNoDelayRetries, s.NumNoDelayRetries)
	set(&r.NumMinDelayRetries, s.NumMinDelayRetries)
	if s.BackoffFunction != nil {
		r.BackoffFunction = *s.BackoffFunction
	}
	return r
}

// TopicDefaults is one protocol's entry of a topic-level DeliveryPolicy, the
// defaults for that protocol's subscriptions.
type TopicDefaults struct {
	HealthyRetryPolicy *RetrySettings // "defaultHealthyRetryPolicy"
	SicklyRetryPolicy  *RetrySettings // "defaultSicklyRetryPolicy" (deprecated)
	// DisableSubscriptionOverrides makes SNS ignore subscription-level
	// delivery policies.
	DisableSubscriptionOverrides bool
	ThrottlePolicy               *ThrottlePolicy // "defaultThrottlePolicy"
	RequestPolicy                *RequestPolicy  // "defaultRequestPolicy"
}

// TopicPolicy is a parsed topic-level DeliveryPolicy, keyed by protocol. Only
// the "http" entry affects delivery (it covers http and https
// subscriptions); entries for other protocols are validated and echoed
// because AWS's own policies for those protocols cannot be changed.
type TopicPolicy struct {
	Protocols map[string]*TopicDefaults
}

// HTTP returns the "http" entry, or nil. It is nil-safe.
func (t *TopicPolicy) HTTP() *TopicDefaults {
	if t == nil {
		return nil
	}
	return t.Protocols["http"]
}

// SubscriptionPolicy is a parsed subscription-level DeliveryPolicy (HTTP/S
// subscriptions only).
type SubscriptionPolicy struct {
	HealthyRetryPolicy *RetrySettings
	SicklyRetryPolicy  *RetrySettings // deprecated, echoed only
	ThrottlePolicy     *ThrottlePolicy
	RequestPolicy      *RequestPolicy
	Guaranteed         bool // deprecated, echoed only
}

// ParseTopic parses and validates a topic's DeliveryPolicy attribute value.
// An empty (or all-blank) value means "no policy" and yields (nil, nil).
// Errors are *[Error].
func ParseTopic(doc string) (*TopicPolicy, error) {
	root, err := parseRoot(doc)
	if err != nil || root == nil {
		return nil, err
	}
	tp := &TopicPolicy{Protocols: map[string]*TopicDefaults{}}
	for _, m := range root {
		if !IsProtocol(m.key) {
			return nil, errorf("Unexpected JSON member: ", m.key)
		}
		if isNull(m.value) {
			delete(tp.Protocols, m.key)
			continue
		}
		td, err := parseTopicDefaults(m.key, m.value)
		if err != nil {
			return nil, err
		}
		tp.Protocols[m.key] = td
	}
	return tp, nil
}

func parseTopicDefaults(path string, raw json.RawMessage) (*TopicDefaults, error) {
	members, err := objectMembers(path, raw)
	if err != nil {
		return nil, err
	}
	td := &TopicDefaults{}
	for _, m := range members {
		p := path + "." + m.key
		switch m.key {
		case "defaultHealthyRetryPolicy":
			td.HealthyRetryPolicy, err = parseRetry(p, m.value)
		case "defaultSicklyRetryPolicy":
			td.SicklyRetryPolicy, err = parseRetry(p, m.value)
		case "disableSubscriptionOverrides":
			td.DisableSubscriptionOverrides, err = boolValue(p, m.value)
		case "defaultThrottlePolicy":
			td.ThrottlePolicy, err = parseThrottle(p, m.value)
		case "defaultRequestPolicy":
			td.RequestPolicy, err = parseRequest(p, m.value)
		default:
			return nil, errorf("Unexpected JSON member: ", m.key)
		}
		if err != nil {
			return nil, err
		}
	}
	return td, nil
}

// ParseSubscription parses and validates a subscription's DeliveryPolicy
// attribute value. An empty (or all-blank) value yields (nil, nil). Errors are
// *[Error].
func ParseSubscription(doc string) (*SubscriptionPolicy, error) {
	root, err := parseRoot(doc)
	if err != nil || root == nil {
		return nil, err
	}
	sp := &SubscriptionPolicy{}
	for _, m := range root {
		switch m.key {
		case "healthyRetryPolicy":
			sp.HealthyRetryPolicy, err = parseRetry(m.key, m.value)
		case "sicklyRetryPolicy":
			sp.SicklyRetryPolicy, err = parseRetry(m.key, m.value)
		case "throttlePolicy":
			sp.ThrottlePolicy, err = parseThrottle(m.key, m.value)
		case "requestPolicy":
			sp.RequestPolicy, err = parseRequest(m.key, m.value)
		case "guaranteed":
			sp.Guaranteed, err = boolValue(m.key, m.value)
		default:
			return nil, errorf("Unexpected JSON member: ", m.key)
		}
		if err != nil {
			return nil, err
		}
	}
	return sp, nil
}

// parseRetry reads and validates one retry policy object at path. A JSON null
// yields nil: AWS treats a null member as absent.
func parseRetry(path string, raw json.RawMessage) (*RetrySettings, error) {
	if isNull(raw) {
		return nil, nil
	}
	members, err := objectMembers(path, raw)
	if err != nil {
		return nil, err
	}
	s := &RetrySettings{}
	for _, m := range members {
		p := path + "." + m.key
		var dst **int
		switch m.key {
		case "minDelayTarget":
			dst = &s.MinDelayTarget
		case "maxDelayTarget":
			dst = &s.MaxDelayTarget
		case "numRetries":
			dst = &s.NumRetries
		case "numMaxDelayRetries":
			dst = &s.NumMaxDelayRetries
		case "numNoDelayRetries":
			dst = &s.NumNoDelayRetries
		case "numMinDelayRetries":
			dst = &s.NumMinDelayRetries
		case "backoffFunction":
			if isNull(m.value) {
				s.BackoffFunction = nil
				continue
			}
			str, err := stringValue(p, m.value)
			if err != nil {
				return nil, err
			}
			f := BackoffFunction(str)
			if !f.Valid() {
				return nil, errorf(p, ": Invalid value [", str, "]. Must be linear, arithmetic, geometric or exponential")
			}
			s.BackoffFunction = &f
			continue
		default:
			return nil, errorf("Unexpected JSON member: ", m.key)
		}
		v, err := intValue(p, m.value)
		if err != nil {
			return nil, err
		}
		*dst = v
	}
	if err := s.validate(path); err != nil {
		return nil, err
	}
	return s, nil
}

// validate applies AWS's limits, in a fixed order so that a policy with
// several problems always reports the same one.
func (s *RetrySettings) validate(path string) error {
	p := path + "."
	switch {
	case s.MinDelayTarget == nil:
		return errorf(p, "minDelayTarget must be specified")
	case s.MaxDelayTarget == nil:
		return errorf(p, "maxDelayTarget must be specified")
	case s.NumRetries == nil:
		return errorf(p, "numRetries must be specified")
	}
	r := s.Policy()
	switch {
	case r.MinDelayTarget < minMinDelayTarget:
		return errorf(p, "minDelayTarget must be greater than or equal to ", strconv.Itoa(minMinDelayTarget))
	case r.MaxDelayTarget > maxMaxDelayTarget:
		return errorf(p, "maxDelayTarget must be less than or equal to ", strconv.Itoa(maxMaxDelayTarget))
	case r.MaxDelayTarget < r.MinDelayTarget:
		return errorf(p, "maxDelayTarget must be greater than or equal to minDelayTarget")
	case r.NumRetries < 0:
		return errorf(p, "numRetries must be greater than or equal to 0")
	case r.NumRetries > maxNumRetries:
		return errorf(p, "numRetries must be less than or equal to ", strconv.Itoa(maxNumRetries))
	case r.NumNoDelayRetries < 0:
		return errorf(p, "numNoDelayRetries must be greater than or equal to 0")
	case r.NumMinDelayRetries < 0:
		return errorf(p, "numMinDelayRetries must be greater than or equal to 0")
	case r.NumMaxDelayRetries < 0:
		return errorf(p, "numMaxDelayRetries must be greater than or equal to 0")
	case r.NumNoDelayRetries+r.NumMinDelayRetries+r.NumMaxDelayRetries > r.NumRetries:
		return errorf(p, "numRetries must be greater than or equal to total of numMinDelayRetries, numNoDelayRetries and numMaxDelayRetries")
	case r.TotalDelay() > MaxTotalRetryDelay:
		return errorf(path, ": total retry time must be less than or equal to 3600 seconds")
	}
	return nil
}

func parseThrottle(path string, raw json.RawMessage) (*ThrottlePolicy, error) {
	if isNull(raw) {
		return nil, nil
	}
	members, err := objectMembers(path, raw)
	if err != nil {
		return nil, err
	}
	t := &ThrottlePolicy{}
	for _, m := range members {
		if m.key != "maxReceivesPerSecond" {
			return nil, errorf("Unexpected JSON member: ", m.key)
		}
		p := path + "." + m.key
		v, err := intValue(p, m.value)
		if err != nil {
			return nil, err
		}
		if v != nil && *v < 1 {
			return nil, errorf(p, " must be greater than or equal to 1")
		}
		t.MaxReceivesPerSecond = v
	}
	return t, nil
}

func parseRequest(path string, raw json.RawMessage) (*RequestPolicy, error) {
	if isNull(raw) {
		return nil, nil
	}
	members, err := objectMembers(path, raw)
	if err != nil {
		return nil, err
	}
	r := &RequestPolicy{}
	for _, m := range members {
		if m.key != "headerContentType" {
			return nil, errorf("Unexpected JSON member: ", m.key)
		}
		p := path + "." + m.key
		if isNull(m.value) {
			r.HeaderContentType = ""
			continue
		}
		v, err := stringValue(p, m.value)
		if err != nil {
			return nil, err
		}
		if !validContentType(v) {
			return nil, errorf(p, ": Invalid value [", v, "]. Must be a supported content type")
		}
		r.HeaderContentType = v
	}
	return r, nil
}

// validContentType accepts a supported media type, in any case, with optional
// parameters such as "; charset=UTF-8".
func validContentType(v string) bool {
	mt, _, err := mime.ParseMediaType(v)
	return err == nil && contentTypes[mt]
}

// member is one key/value pair of a JSON object, in document order.
type member struct {
	key   string
	value json.RawMessage
}

// parseRoot checks that doc is one JSON object and returns its members; a
// blank doc yields nil members and no error.
func parseRoot(doc string) ([]member, error) {
	if strings.TrimSpace(doc) == "" {
		return nil, nil
	}
	raw := json.RawMessage(doc)
	if !json.Valid(raw) || firstByte(raw) != '{' {
		// AWS maps the document onto its model; anything that is not an
		// object fails there exactly like a syntax error does.
		return nil, errorf("failed to parse JSON.")
	}
	members, err := members(raw)
	if err != nil {
		return nil, errorf("failed to parse JSON.")
	}
	if members == nil {
		members = []member{}
	}
	return members, nil
}

// objectMembers returns the members of the object at path, or a type error.
func objectMembers(path string, raw json.RawMessage) ([]member, error) {
	if firstByte(raw) != '{' {
		return nil, errorf(path, " must be a JSON object")
	}
	ms, err := members(raw)
	if err != nil {
		return nil, errorf("failed to parse JSON.")
	}
	return ms, nil
}

// members lists the key/value pairs of a valid JSON object in order. Keys may
// repeat; callers process them in order, so the last one wins, as with most
// JSON mappers.
func members(raw json.RawMessage) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil { // '{'
		return nil, err
	}
	var out []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, member{key: key, value: v})
	}
	return out, nil
}

func firstByte(raw json.RawMessage) byte {
	t := bytes.TrimLeft(raw, " \t\r\n")
	if len(t) == 0 {
		return 0
	}
	return t[0]
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// intValue reads an integer; null yields nil. Integral numbers written with a
// fraction or exponent (5.0, 5e0) are accepted, as a lenient JSON mapper
// would; the value must fit in 32 bits like AWS's int fields.
func intValue(path string, raw json.RawMessage) (*int, error) {
	if isNull(raw) {
		return nil, nil
	}
	c := firstByte(raw)
	if c != '-' && (c < '0' || c > '9') {
		return nil, errorf(path, " must be an integer")
	}
	s := string(bytes.TrimSpace(raw))
	if n, err := strconv.ParseInt(s, 10, 32); err == nil {
		v := int(n)
		return &v, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) || f < math.MinInt32 || f > math.MaxInt32 {
		return nil, errorf(path, " must be an integer")
	}
	v := int(f)
	return &v, nil
}

// boolValue reads a boolean; null reads as false.
func boolValue(path string, raw json.RawMessage) (bool, error) {
	switch string(bytes.TrimSpace(raw)) {
	case "true":
		return true, nil
	case "false", "null":
		return false, nil
	}
	return false, errorf(path, " must be a boolean")
}

func stringValue(path string, raw json.RawMessage) (string, error) {
	var s string
	if firstByte(raw) != '"' || json.Unmarshal(raw, &s) != nil {
		return "", errorf(path, " must be a string")
	}
	return s, nil
}

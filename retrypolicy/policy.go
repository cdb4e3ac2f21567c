// Package retrypolicy models Amazon SNS delivery policies: the four-phase
// retry schedule SNS follows when an endpoint fails with a server-side error,
// AWS's built-in schedule for every protocol, parsing and validation of the
// topic- and subscription-level DeliveryPolicy attributes, resolution of the
// policy in force for one subscription, and rendering of the DeliveryPolicy
// and EffectiveDeliveryPolicy attribute values.
//
// The package is pure: no clocks, no goroutines, no I/O. A dispatcher asks
// [Policy.Delay] how long to wait after a failed attempt and schedules the
// retry on its own clock.
//
// See https://docs.aws.amazon.com/sns/latest/dg/sns-message-delivery-retries.html
// and NOTES.md in this directory for the decisions taken where AWS is silent.
package retrypolicy

import (
	"math"
	"time"
)

// BackoffFunction names the curve the backoff phase follows from
// minDelayTarget to maxDelayTarget.
type BackoffFunction string

// The four backoff functions SNS accepts. AWS does not publish their formulas;
// the curves used here are the emulator's own (see [RetryPolicy.Delay]).
const (
	Linear      BackoffFunction = "linear"
	Arithmetic  BackoffFunction = "arithmetic"
	Geometric   BackoffFunction = "geometric"
	Exponential BackoffFunction = "exponential"
)

// Valid reports whether f is one of the four functions SNS accepts. The
// comparison is case-sensitive, as in AWS.
func (f BackoffFunction) Valid() bool {
	switch f {
	case Linear, Arithmetic, Geometric, Exponential:
		return true
	}
	return false
}

// RetryPolicy is a fully specified retry schedule: SNS's healthyRetryPolicy
// with every field filled in. Field order is the order AWS uses when it
// renders EffectiveDeliveryPolicy.
//
// NumRetries counts retries only, so a message gets at most 1+NumRetries
// attempts. The retries run through four phases in order: NumNoDelayRetries
// with no delay, NumMinDelayRetries MinDelayTarget seconds apart, the backoff
// phase (whatever NumRetries leaves over) growing from MinDelayTarget to
// MaxDelayTarget along BackoffFunction, and NumMaxDelayRetries
// MaxDelayTarget seconds apart.
type RetryPolicy struct {
	MinDelayTarget     int             // seconds
	MaxDelayTarget     int             // seconds
	NumRetries         int             // retries after the first attempt
	NumMaxDelayRetries int             // post-backoff phase
	NumNoDelayRetries  int             // immediate phase
	NumMinDelayRetries int             // pre-backoff phase
	BackoffFunction    BackoffFunction // backoff phase curve
}

// Attempts returns the total number of delivery attempts the policy allows,
// the first attempt included.
func (r RetryPolicy) Attempts() int {
	if r.NumRetries < 0 {
		return 1
	}
	return 1 + r.NumRetries
}

// BackoffRetries returns the number of retries in the backoff phase:
// numRetries - numNoDelayRetries - numMinDelayRetries - numMaxDelayRetries,
// never negative.
func (r RetryPolicy) BackoffRetries() int {
	return max(0, r.NumRetries-r.NumNoDelayRetries-r.NumMinDelayRetries-r.NumMaxDelayRetries)
}

// Delay returns how long to wait before the next attempt, given the number of
// the attempt that just failed (1 is the first attempt), and whether there is
// a next attempt at all. attempt < 1 or an exhausted policy yields (0, false).
//
// Backoff delays follow the curves recommended in the project's delivery
// reference: for k backoff retries, retry i (1..k) waits min + d·g(i/k) with
// d = max - min and g(t) = t (linear), t² (arithmetic), (2^(4t)-1)/15
// (geometric) or (e^(5t)-1)/(e^5-1) (exponential). So the first backoff delay
// is at least min and the last is exactly max. Delays are rounded to the
// millisecond so that schedules are identical on every platform.
//
// Phases are consumed in order and capped by NumRetries, so a hand-built
// policy whose phase counts exceed NumRetries simply stops early.
func (r RetryPolicy) Delay(attempt int) (time.Duration, bool) {
	if attempt < 1 || attempt > r.NumRetries {
		return 0, false
	}
	retry := attempt // the failed attempt n is followed by retry n
	if retry <= r.NumNoDelayRetries {
		return 0, true
	}
	retry -= r.NumNoDelayRetries
	if retry <= r.NumMinDelayRetries {
		return seconds(float64(r.MinDelayTarget)), true
	}
	retry -= r.NumMinDelayRetries
	if k := r.BackoffRetries(); retry <= k {
		return r.backoff(retry, k), true
	}
	return seconds(float64(r.MaxDelayTarget)), true
}

// backoff returns the delay of backoff retry i of k (1 <= i <= k).
func (r RetryPolicy) backoff(i, k int) time.Duration {
	lo, hi := float64(r.MinDelayTarget), float64(r.MaxDelayTarget)
	if i >= k {
		// Pin the last step to max exactly instead of trusting float rounding.
		return seconds(hi)
	}
	t := float64(i) / float64(k)
	var g float64
	switch r.BackoffFunction {
	case Arithmetic:
		g = t * t
	case Geometric:
		g = (math.Exp2(4*t) - 1) / 15
	case Exponential:
		g = math.Expm1(5*t) / math.Expm1(5)
	default: // Linear, and the empty value, which AWS defaults to linear
		g = t
	}
	return seconds(lo + (hi-lo)*g)
}

// TotalDelay returns the sum of all delays between attempts when every attempt
// fails: the time from the first attempt to the last. It runs in time
// proportional to the backoff phase only, so AWS's 100,015-attempt schedule is
// cheap.
func (r RetryPolicy) TotalDelay() time.Duration {
	if r.NumRetries <= 0 {
		return 0
	}
	n := r.NumRetries
	noDelay := min(n, max(0, r.NumNoDelayRetries))
	n -= noDelay
	minDelay := min(n, max(0, r.NumMinDelayRetries))
	n -= minDelay
	k := r.BackoffRetries()
	backoff := min(n, k)
	n -= backoff
	total := time.Duration(minDelay) * seconds(float64(r.MinDelayTarget))
	for i := 1; i <= backoff; i++ {
		total += r.backoff(i, k)
	}
	return total + time.Duration(n)*seconds(float64(r.MaxDelayTarget))
}

// seconds converts s seconds to a Duration rounded to the millisecond; the
// rounding hides last-bit differences between math implementations.
func seconds(s float64) time.Duration {
	return time.Duration(math.Round(s*1000)) * time.Millisecond
}

// ThrottlePolicy limits how fast SNS delivers to one subscription.
type ThrottlePolicy struct {
	// MaxReceivesPerSecond is the delivery rate cap; nil means the key was
	// absent (no throttling).
	MaxReceivesPerSecond *int
}

// RequestPolicy shapes the HTTP request SNS sends to HTTP/S endpoints.
type RequestPolicy struct {
	// HeaderContentType is the Content-Type of notifications, as given.
	HeaderContentType string
}

// DefaultContentType is the Content-Type SNS uses for HTTP/S notifications when
// no request policy says otherwise.
const DefaultContentType = "text/plain; charset=UTF-8"

// MaxTotalRetryDelay is AWS's hard limit on the sum of the delays of an
// HTTP/S retry policy.
const MaxTotalRetryDelay = 3600 * time.Second

// AWSManaged returns AWS's fixed schedule for AWS-managed endpoints (sqs,
// lambda, firehose): 3 immediate retries, 2 one second apart, 10 exponential
// from 1 s to 20 s, then 20 s apart up to 100,015 attempts in all (about 23
// days). AWS's table lists the phases as 3+2+10+100,000 = 100,015 attempts, so
// the post-backoff phase here has 99,999 retries: the first attempt counts.
func AWSManaged() RetryPolicy {
	return RetryPolicy{
		MinDelayTarget:     1,
		MaxDelayTarget:     20,
		NumRetries:         100014,
		NumMaxDelayRetries: 99999,
		NumNoDelayRetries:  3,
		NumMinDelayRetries: 2,
		BackoffFunction:    Exponential,
	}
}

// CustomerManaged returns AWS's fixed schedule for customer-managed endpoints
// (email, email-json, sms, application) and for firehose throttling errors:
// no immediate retries, 2 ten seconds apart, 10 exponential from 10 s to
// 600 s, then 600 s apart up to 50 attempts in all (a little over 6 hours).
// As with [AWSManaged], the first attempt is one of AWS's 50, so the
// post-backoff phase has 37 retries.
func CustomerManaged() RetryPolicy {
	return RetryPolicy{
		MinDelayTarget:     10,
		MaxDelayTarget:     600,
		NumRetries:         49,
		NumMaxDelayRetries: 37,
		NumNoDelayRetries:  0,
		NumMinDelayRetries: 2,
		BackoffFunction:    Exponential,
	}
}

// HTTPDefault returns SNS's default HTTP/S retry policy: 3 retries 20 s apart
// (linear backoff with min = max = 20 s), 4 attempts in all. It is the only
// schedule users can change.
func HTTPDefault() RetryPolicy {
	return RetryPolicy{
		MinDelayTarget:  20,
		MaxDelayTarget:  20,
		NumRetries:      3,
		BackoffFunction: Linear,
	}
}

// protocols lists the subscription protocols SNS supports.
var protocols = []string{"http", "https", "email", "email-json", "sms", "sqs", "application", "lambda", "firehose"}

// IsProtocol reports whether p is an SNS subscription protocol.
func IsProtocol(p string) bool {
	for _, q := range protocols {
		if p == q {
			return true
		}
	}
	return false
}

// IsHTTP reports whether protocol p is http or https, the only protocols whose
// delivery policy users can set.
func IsHTTP(p string) bool { return p == "http" || p == "https" }

// DefaultRetry returns AWS's built-in retry schedule for protocol p and
// whether p is a known protocol. Unknown protocols get [CustomerManaged], the
// conservative finite schedule.
func DefaultRetry(p string) (RetryPolicy, bool) {
	switch p {
	case "sqs", "lambda", "firehose":
		return AWSManaged(), true
	case "email", "email-json", "sms", "application":
		return CustomerManaged(), true
	case "http", "https":
		return HTTPDefault(), true
	}
	return CustomerManaged(), false
}

// Policy is the delivery policy in force for one subscription: the retry
// schedule plus, for HTTP/S, the throttle and request settings. Build it with
// [Default] or [Resolve].
type Policy struct {
	Retry RetryPolicy
	// Sickly is the deprecated sicklyRetryPolicy, carried only so that
	// EffectiveDeliveryPolicy can show it; it never affects delivery.
	Sickly *RetryPolicy
	// Throttle is nil when deliveries are not throttled.
	Throttle *ThrottlePolicy
	// Request is nil for protocols other than http/https.
	Request *RequestPolicy
	// Guaranteed is the deprecated "guaranteed" flag, echoed only.
	Guaranteed bool
}

// Default returns AWS's policy for a subscription of protocol p that has no
// delivery policy of its own and whose topic has none either.
func Default(p string) Policy {
	retry, _ := DefaultRetry(p)
	pol := Policy{Retry: retry}
	if IsHTTP(p) {
		pol.Request = &RequestPolicy{HeaderContentType: DefaultContentType}
	}
	return pol
}

// Delay returns the delay before the attempt that follows failed attempt
// number attempt (1 = the first attempt) and whether there is one; see
// [RetryPolicy.Delay].
func (p Policy) Delay(attempt int) (time.Duration, bool) { return p.Retry.Delay(attempt) }

// Attempts returns the total number of attempts, the first one included.
func (p Policy) Attempts() int { return p.Retry.Attempts() }

// ContentType returns the Content-Type for HTTP/S notifications.
func (p Policy) ContentType() string {
	if p.Request != nil && p.Request.HeaderContentType != "" {
		return p.Request.HeaderContentType
	}
	return DefaultContentType
}

// MaxReceivesPerSecond returns the throttle rate and whether one is set.
func (p Policy) MaxReceivesPerSecond() (int, bool) {
	if p.Throttle == nil || p.Throttle.MaxReceivesPerSecond == nil {
		return 0, false
	}
	return *p.Throttle.MaxReceivesPerSecond, true
}

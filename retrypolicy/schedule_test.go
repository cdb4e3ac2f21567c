package retrypolicy

import (
	"testing"
	"time"
)

// ms builds a duration from a whole number of milliseconds; expected delays
// are written this way to keep the tables exact.
func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

const day = 24 * time.Hour

type step struct {
	attempt int
	delay   time.Duration
	ok      bool
}

func checkSteps(t *testing.T, r RetryPolicy, steps []step) {
	t.Helper()
	for _, s := range steps {
		d, ok := r.Delay(s.attempt)
		if d != s.delay || ok != s.ok {
			t.Errorf("Delay(%d) = %v, %v; want %v, %v", s.attempt, d, ok, s.delay, s.ok)
		}
	}
}

// sumDelays walks the schedule the way a dispatcher would and returns the
// number of retries and the sum of their delays.
func sumDelays(r RetryPolicy) (retries int, total time.Duration) {
	for attempt := 1; ; attempt++ {
		d, ok := r.Delay(attempt)
		if !ok {
			return retries, total
		}
		retries++
		total += d
	}
}

func TestDefaultRetry(t *testing.T) {
	t.Parallel()
	tests := []struct {
		protocol string
		want     RetryPolicy
		known    bool
	}{
		{"sqs", AWSManaged(), true},
		{"lambda", AWSManaged(), true},
		{"firehose", AWSManaged(), true},
		{"email", CustomerManaged(), true},
		{"email-json", CustomerManaged(), true},
		{"sms", CustomerManaged(), true},
		{"application", CustomerManaged(), true},
		{"http", HTTPDefault(), true},
		{"https", HTTPDefault(), true},
		{"carrier-pigeon", CustomerManaged(), false},
		{"HTTP", CustomerManaged(), false},
	}
	for _, tt := range tests {
		t.Run(tt.protocol, func(t *testing.T) {
			t.Parallel()
			got, known := DefaultRetry(tt.protocol)
			if got != tt.want || known != tt.known {
				t.Errorf("DefaultRetry(%q) = %+v, %v; want %+v, %v", tt.protocol, got, known, tt.want, tt.known)
			}
			pol := Default(tt.protocol)
			if pol.Retry != tt.want {
				t.Errorf("Default(%q).Retry = %+v", tt.protocol, pol.Retry)
			}
			if wantReq := IsHTTP(tt.protocol); (pol.Request != nil) != wantReq {
				t.Errorf("Default(%q).Request = %v, want present=%v", tt.protocol, pol.Request, wantReq)
			}
		})
	}
}

func TestAWSManagedSchedule(t *testing.T) {
	t.Parallel()
	r := AWSManaged()
	checkSteps(t, r, []step{
		{-1, 0, false},
		{0, 0, false},
		// Immediate phase: the first three failures are retried at once.
		{1, 0, true}, {2, 0, true}, {3, 0, true},
		// Pre-backoff: two retries one second apart.
		{4, time.Second, true}, {5, time.Second, true},
		// Backoff: ten retries, exponential from 1 s to 20 s.
		{6, ms(1084), true}, {7, ms(1221), true}, {8, ms(1449), true}, {9, ms(1823), true},
		{10, ms(2441), true}, {11, ms(3460), true}, {12, ms(5139), true}, {13, ms(7908), true},
		{14, ms(12473), true}, {15, 20 * time.Second, true},
		// Post-backoff: 20 s apart until attempt 100,015 has been made.
		{16, 20 * time.Second, true}, {50000, 20 * time.Second, true},
		{100013, 20 * time.Second, true}, {100014, 20 * time.Second, true},
		{100015, 0, false}, {100016, 0, false},
	})
	if got := r.Attempts(); got != 100015 {
		t.Errorf("Attempts() = %d, want 100015", got)
	}
	retries, total := sumDelays(r)
	if retries != 100014 {
		t.Errorf("retries = %d, want 100014", retries)
	}
	// 2 × 1 s + 56.998 s of backoff + 99,999 × 20 s.
	const want = 2000038998 * time.Millisecond
	if total != want {
		t.Errorf("sum of delays = %v, want %v", total, want)
	}
	if got := r.TotalDelay(); got != want {
		t.Errorf("TotalDelay() = %v, want %v", got, want)
	}
	if total < 22*day || total > 24*day {
		t.Errorf("sum of delays = %.2f days, want 23±1", total.Hours()/24)
	}
}

func TestCustomerManagedSchedule(t *testing.T) {
	t.Parallel()
	r := CustomerManaged()
	checkSteps(t, r, []step{
		// No immediate phase; pre-backoff: two retries ten seconds apart.
		{1, 10 * time.Second, true}, {2, 10 * time.Second, true},
		// Backoff: ten retries, exponential from 10 s to 600 s.
		{3, ms(12596), true}, {7, ms(54756), true}, {11, ms(366278), true}, {12, 600 * time.Second, true},
		// Post-backoff: 600 s apart until attempt 50.
		{13, 600 * time.Second, true}, {49, 600 * time.Second, true},
		{50, 0, false},
	})
	if got := r.Attempts(); got != 50 {
		t.Errorf("Attempts() = %d, want 50", got)
	}
	retries, total := sumDelays(r)
	const want = 23779456 * time.Millisecond // 20 s + 1,559.456 s + 37 × 600 s
	if retries != 49 || total != want || r.TotalDelay() != want {
		t.Errorf("retries, sum, TotalDelay = %d, %v, %v; want 49, %v", retries, total, r.TotalDelay(), want)
	}
	if total < 6*time.Hour || total > 7*time.Hour {
		t.Errorf("sum of delays = %v, want a little over 6 h", total)
	}
}

func TestHTTPDefaultSchedule(t *testing.T) {
	t.Parallel()
	r := HTTPDefault()
	checkSteps(t, r, []step{
		{1, 20 * time.Second, true}, {2, 20 * time.Second, true}, {3, 20 * time.Second, true},
		{4, 0, false}, {5, 0, false},
	})
	if r.Attempts() != 4 || r.TotalDelay() != time.Minute {
		t.Errorf("Attempts, TotalDelay = %d, %v; want 4, 1m", r.Attempts(), r.TotalDelay())
	}
	pol := Default("https")
	if d, ok := pol.Delay(3); d != 20*time.Second || !ok {
		t.Errorf("Policy.Delay(3) = %v, %v", d, ok)
	}
	if pol.Attempts() != 4 {
		t.Errorf("Policy.Attempts() = %d", pol.Attempts())
	}
}

// TestBackoffFunctions uses the curve of AWS's backoff diagram: 10 retries,
// all in the backoff phase, from 5 s to 260 s.
func TestBackoffFunctions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		fn   BackoffFunction
		want []int64 // milliseconds, retry 1..10
	}{
		{Linear, []int64{30500, 56000, 81500, 107000, 132500, 158000, 183500, 209000, 234500, 260000}},
		{"", []int64{30500, 56000, 81500, 107000, 132500, 158000, 183500, 209000, 234500, 260000}},
		{Arithmetic, []int64{7550, 15200, 27950, 45800, 68750, 96800, 129950, 168200, 211550, 260000}},
		{Geometric, []int64{10432, 17599, 27056, 39534, 56000, 77727, 106395, 144223, 194137, 260000}},
		{Exponential, []int64{6122, 7972, 11023, 16052, 24344, 38015, 60554, 97716, 158985, 260000}},
	}
	for _, tt := range tests {
		t.Run(string(tt.fn), func(t *testing.T) {
			t.Parallel()
			r := RetryPolicy{MinDelayTarget: 5, MaxDelayTarget: 260, NumRetries: 10, BackoffFunction: tt.fn}
			var total, prev time.Duration
			for i, w := range tt.want {
				d, ok := r.Delay(i + 1)
				if !ok || d != ms(w) {
					t.Errorf("Delay(%d) = %v, %v; want %v", i+1, d, ok, ms(w))
				}
				if d < prev || d < 5*time.Second {
					t.Errorf("Delay(%d) = %v: not ≥ min and non-decreasing", i+1, d)
				}
				prev = d
				total += d
			}
			if _, ok := r.Delay(11); ok {
				t.Error("Delay(11) has a next attempt")
			}
			if got := r.TotalDelay(); got != total {
				t.Errorf("TotalDelay() = %v, want %v", got, total)
			}
		})
	}
}

func TestCustomSchedules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		r        RetryPolicy
		steps    []step
		attempts int
		total    time.Duration
	}{
		{
			// AWS's documented sample: 3 + 2 + 10 + 35 = 50 retries.
			name: "documented sample",
			r: RetryPolicy{MinDelayTarget: 1, MaxDelayTarget: 60, NumRetries: 50, NumNoDelayRetries: 3,
				NumMinDelayRetries: 2, NumMaxDelayRetries: 35, BackoffFunction: Exponential},
			steps: []step{
				{1, 0, true}, {3, 0, true}, {4, time.Second, true}, {5, time.Second, true},
				{6, ms(1260), true}, {14, ms(36628), true}, {15, time.Minute, true},
				{16, time.Minute, true}, {50, time.Minute, true}, {51, 0, false},
			},
			attempts: 51,
			total:    2*time.Second + ms(155947) + 35*time.Minute,
		},
		{
			name:     "no retries",
			r:        RetryPolicy{MinDelayTarget: 1, MaxDelayTarget: 1, NumRetries: 0},
			steps:    []step{{1, 0, false}},
			attempts: 1,
		},
		{
			name:     "single backoff retry is max",
			r:        RetryPolicy{MinDelayTarget: 2, MaxDelayTarget: 9, NumRetries: 1, BackoffFunction: Geometric},
			steps:    []step{{1, 9 * time.Second, true}, {2, 0, false}},
			attempts: 2,
			total:    9 * time.Second,
		},
		{
			name: "no backoff phase",
			r: RetryPolicy{MinDelayTarget: 3, MaxDelayTarget: 7, NumRetries: 4, NumNoDelayRetries: 1,
				NumMinDelayRetries: 1, NumMaxDelayRetries: 2},
			steps: []step{
				{1, 0, true}, {2, 3 * time.Second, true}, {3, 7 * time.Second, true},
				{4, 7 * time.Second, true}, {5, 0, false},
			},
			attempts: 5,
			total:    17 * time.Second,
		},
		{
			// Hand-built policies may overcommit the phases; NumRetries wins.
			name:     "phases beyond numRetries",
			r:        RetryPolicy{MinDelayTarget: 4, MaxDelayTarget: 8, NumRetries: 3, NumNoDelayRetries: 2, NumMinDelayRetries: 5},
			steps:    []step{{1, 0, true}, {2, 0, true}, {3, 4 * time.Second, true}, {4, 0, false}},
			attempts: 4,
			total:    4 * time.Second,
		},
		{
			name:     "negative numRetries",
			r:        RetryPolicy{NumRetries: -2},
			steps:    []step{{1, 0, false}},
			attempts: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			checkSteps(t, tt.r, tt.steps)
			if got := tt.r.Attempts(); got != tt.attempts {
				t.Errorf("Attempts() = %d, want %d", got, tt.attempts)
			}
			_, sum := sumDelays(tt.r)
			if sum != tt.total || tt.r.TotalDelay() != tt.total {
				t.Errorf("sum, TotalDelay = %v, %v; want %v", sum, tt.r.TotalDelay(), tt.total)
			}
		})
	}
}

func TestJitter(t *testing.T) {
	t.Parallel()
	fixed := func(v float64) func() float64 { return func() float64 { return v } }
	tests := []struct {
		name string
		j    Jitter
		in   time.Duration
		want time.Duration
	}{
		{"disabled", Jitter{}, 20 * time.Second, 20 * time.Second},
		{"low end", Jitter{Fraction: 0.1, Rand: fixed(0)}, 20 * time.Second, 18 * time.Second},
		{"middle", Jitter{Fraction: 0.1, Rand: fixed(0.5)}, 20 * time.Second, 20 * time.Second},
		{"high end", Jitter{Fraction: 0.25, Rand: fixed(1)}, 20 * time.Second, 25 * time.Second},
		{"clamped fraction", Jitter{Fraction: 3, Rand: fixed(0)}, 20 * time.Second, 0},
		{"negative fraction", Jitter{Fraction: -1, Rand: fixed(0)}, 20 * time.Second, 20 * time.Second},
		{"zero delay stays zero", Jitter{Fraction: 0.5, Rand: fixed(1)}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.j.Apply(tt.in); got != tt.want {
				t.Errorf("Apply(%v) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
	t.Run("default source stays in range", func(t *testing.T) {
		t.Parallel()
		j := Jitter{Fraction: 0.2}
		for range 1000 {
			if d := j.Apply(10 * time.Second); d < 8*time.Second || d > 12*time.Second {
				t.Fatalf("Apply(10s) = %v, outside [8s, 12s]", d)
			}
		}
	})
}

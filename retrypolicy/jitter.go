package retrypolicy

import (
	"math/rand/v2"
	"time"
)

// Jitter spreads retry delays the way AWS does, for callers that want it.
// Delays from [Policy.Delay] are deterministic; apply a Jitter to them when
// realistic timing matters more than reproducible tests.
//
//	d, ok := pol.Delay(n)
//	d = retrypolicy.Jitter{Fraction: 0.1}.Apply(d)
type Jitter struct {
	// Fraction is the largest relative change: the delay is multiplied by a
	// factor drawn uniformly from [1-Fraction, 1+Fraction]. It is clamped to
	// [0, 1]; 0 disables jitter.
	Fraction float64
	// Rand returns a number in [0, 1). Nil uses math/rand/v2. Tests pass a
	// fixed sequence.
	Rand func() float64
}

// Apply returns d with jitter applied. A zero delay stays zero, so immediate
// retries remain immediate.
func (j Jitter) Apply(d time.Duration) time.Duration {
	f := min(max(j.Fraction, 0), 1)
	if f == 0 || d <= 0 {
		return d
	}
	r := j.Rand
	if r == nil {
		r = rand.Float64
	}
	factor := 1 - f + 2*f*r()
	return time.Duration(float64(d) * factor)
}

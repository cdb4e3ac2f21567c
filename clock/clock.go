// Package clock is the one source of time for fanout, public so that code
// outside this module can pass its own clock to fanout.Options. Every timed behaviour
// (visibility timeouts, delays, retention, deduplication windows, retries)
// reads a Clock, so tests can use a Manual clock and move it forward instead
// of sleeping.
package clock

import (
	"time"
)

// Clock tells the time and runs functions after a duration of its own time.
type Clock interface {
	// Now returns the current time on this clock.
	Now() time.Time
	// AfterFunc calls f in its own goroutine (Real) or inside Advance (Manual)
	// once d has passed on this clock.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending AfterFunc call.
type Timer interface {
	// Stop prevents the call if it has not run yet and reports whether it did.
	Stop() bool
}

// latest is the latest time a movable clock reads. Engines keep times as
// Unix nanoseconds, which end in April 2262; stopping at 2200 leaves room
// for every deadline they add (retention, visibility, retries) to fit.
var latest = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)

// Latest returns the latest time Manual and Adjustable clocks read:
// Advance and Set stop there.
func Latest() time.Time { return latest }

// Real is the wall clock.
type Real struct{}

// Now returns time.Now().
func (Real) Now() time.Time { return time.Now() }

// AfterFunc wraps time.AfterFunc.
func (Real) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// Wait returns a channel that is closed once d has passed on c, and a function
// that releases the timer early. It is how long polls wait without a goroutine
// of their own.
func Wait(c Clock, d time.Duration) (<-chan struct{}, func()) {
	ch := make(chan struct{})
	t := c.AfterFunc(d, func() { close(ch) })
	return ch, func() { t.Stop() }
}

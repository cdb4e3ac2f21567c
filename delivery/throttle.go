package delivery

import (
	"sync"
	"time"
)

// throttle spaces the attempts of subscriptions whose delivery policy sets
// throttlePolicy.maxReceivesPerSecond: each attempt takes the next free slot
// of its subscription, 1/rate seconds after the previous one, on the clock.
// https://docs.aws.amazon.com/sns/latest/dg/sns-message-delivery-retries.html
type throttle struct {
	mu   sync.Mutex
	next map[string]time.Time // subscription ARN -> first free slot
}

// maxThrottleEntries bounds the map; past it, slots already in the past
// (which no longer hold anything back) are forgotten.
const maxThrottleEntries = 4096

// reserve takes j's slot. It reports the slot and whether j must wait for
// it; subscriptions without a throttle never wait, nor do confirmation
// messages (the throttle limits notifications).
func (t *throttle) reserve(j *job) (time.Time, bool) {
	rate, ok := j.policy.MaxReceivesPerSecond()
	if !ok || rate <= 0 || j.msg == nil {
		return j.due, false
	}
	gap := time.Second / time.Duration(rate)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.next == nil {
		t.next = map[string]time.Time{}
	}
	slot := j.due
	if n, ok := t.next[j.sub.Arn]; ok && n.After(slot) {
		slot = n
	}
	if len(t.next) >= maxThrottleEntries {
		for k, n := range t.next {
			if !n.After(j.due) {
				delete(t.next, k)
			}
		}
	}
	t.next[j.sub.Arn] = slot.Add(gap)
	return slot, slot.After(j.due)
}

package sns

// Reset deletes every topic and subscription, and forgets pending
// confirmations: the engine is as new. Retries already scheduled stop with
// their subscriptions (see delivery.Subscriber.Gone). Nothing AWS offers
// does this; fanout's POST /_fanout/reset and the test helper call it.
//
// With a journal, the reset is recorded and waited for; a store that fails
// it is failing every write, which the next call reports.
func (e *Engine) Reset() {
	e.mu.Lock()
	var waits []Waiter
	defer func() { // after the unlock below
		for _, w := range waits {
			_ = durable(w)
		}
	}()
	defer e.mu.Unlock()
	for _, t := range e.topics {
		if w := e.dropTopic(t); w != nil {
			waits = append(waits, w)
		}
	}
	if w := e.record(Change{Reset: true}); w != nil {
		waits = append(waits, w)
	}
	for _, s := range e.subs { // none should be left; be sure
		s.remove()
	}
	e.topics = map[string]*Topic{}
	e.subs = map[string]*Subscription{}
	e.tokens = map[string]*Subscription{}
	e.seq = 0
}

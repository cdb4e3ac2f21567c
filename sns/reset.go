package sns

// Reset deletes every topic and subscription, and forgets pending
// confirmations: the engine is as new. Retries already scheduled stop with
// their subscriptions (see delivery.Subscriber.Gone). Nothing AWS offers
// does this; fanout's POST /_fanout/reset and the test helper call it.
func (e *Engine) Reset() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, t := range e.topics {
		e.dropTopic(t)
	}
	for _, s := range e.subs { // none should be left; be sure
		s.remove()
	}
	e.topics = map[string]*Topic{}
	e.subs = map[string]*Subscription{}
	e.tokens = map[string]*Subscription{}
	e.seq = 0
}

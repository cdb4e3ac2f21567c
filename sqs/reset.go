package sqs

import "time"

// Reset deletes every queue and its messages and forgets every move task
// and the names deleted recently (so they can be created again at once): the
// engine is as new. Long polls in progress return no messages, as when their
// queue is deleted. Nothing AWS offers does this; fanout's POST
// /_fanout/reset and the test helper's Reset call it.
func (e *Engine) Reset() {
	ts := e.tasks()
	ts.mu.Lock()
	for _, t := range ts.byHandle {
		t.mu.Lock()
		t.info.Status = TaskCancelled // a tick already running stops here
		if t.timer != nil {
			t.timer.Stop()
		}
		t.mu.Unlock()
	}
	ts.bySource, ts.byHandle = map[string][]*moveTask{}, map[string]*moveTask{}
	ts.mu.Unlock()

	registryLocking()
	e.mu.Lock()
	old := e.queues
	e.queues = map[string]*Queue{}
	e.deleted = map[string]time.Time{}
	e.mu.Unlock()
	for _, q := range old {
		q.markDeleted()
	}
}

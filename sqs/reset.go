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
	defer e.mu.Unlock()
	old := e.queues
	e.queues = map[string]*Queue{}
	e.deleted = map[string]time.Time{}
	for _, q := range old {
		e.lastSeq[q.name], _ = q.markDeleted(time.Time{}) // numbering goes on, as after DeleteQueue
	}
	// After every old queue stopped recording (it is deleted), before any
	// new one starts (the registry is locked). Waited for by nobody: a
	// reset that cannot be stored leaves the store to refuse what follows.
	e.record(Change{Reset: true})
}

//go:build fanout_lockcheck

package sqs

import (
	"strings"
	"testing"
)

// The checker itself: a second queue lock, or the registry lock under a
// queue lock, panics before it blocks.
func TestLockCheckCatchesABrokenOrder(t *testing.T) {
	e, _ := newTestEngine(t)
	a, b := mustQueue(t, e, "a", nil), mustQueue(t, e, "b", nil)
	broken := func(f func()) (msg string) {
		defer func() { msg, _ = recover().(string) }()
		a.lock()
		defer a.unlock()
		f()
		return ""
	}
	if msg := broken(func() { b.lock(); b.unlock() }); !strings.Contains(msg, `locking queue "b" while holding queue "a"`) {
		t.Errorf("two queue locks: %q", msg)
	}
	if msg := broken(func() { a.lock() }); !strings.Contains(msg, `locking queue "a" while holding queue "a"`) {
		t.Errorf("the same queue twice: %q", msg)
	}
	if msg := broken(func() { e.ListQueues("") }); !strings.Contains(msg, "registry lock while holding queue \"a\"") {
		t.Errorf("registry under a queue lock: %q", msg)
	}
	// One lock at a time, from any number of goroutines, is fine.
	done := make(chan bool)
	for range 4 {
		go func() {
			for range 100 {
				a.lock()
				a.unlock()
				b.lock()
				b.unlock()
			}
			done <- true
		}()
	}
	for range 4 {
		<-done
	}
}

//go:build fanout_lockcheck

package sqs

import (
	"bytes"
	"fmt"
	"runtime"
	"strconv"
	"sync"
)

// With the fanout_lockcheck build tag every queue lock checks the lock order
// of doc.go before it blocks: a goroutine that already holds a queue lock
// may take neither another queue's lock nor the registry lock. A broken
// order panics at once, on the goroutine that broke it, even in a run where
// the deadlock it risks does not happen. It costs a stack read per lock, so
// it is for tests only: go test -tags fanout_lockcheck ./sqs/...

var held struct {
	sync.Mutex
	by map[uint64]string // goroutine id -> name of the queue whose lock it holds
}

func goroutineID() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	id, _ := strconv.ParseUint(string(b[:bytes.IndexByte(b, ' ')]), 10, 64)
	return id
}

func (q *Queue) lock() {
	g := goroutineID()
	held.Lock()
	if other, ok := held.by[g]; ok {
		held.Unlock()
		panic(fmt.Sprintf("sqs lock order: locking queue %q while holding queue %q's lock", q.name, other))
	}
	held.Unlock()
	q.mu.Lock()
	held.Lock()
	if held.by == nil {
		held.by = map[uint64]string{}
	}
	held.by[g] = q.name
	held.Unlock()
}

func (q *Queue) unlock() {
	q.tidy()
	held.Lock()
	delete(held.by, goroutineID())
	held.Unlock()
	q.mu.Unlock()
}

func registryLocking() {
	held.Lock()
	defer held.Unlock()
	if name, ok := held.by[goroutineID()]; ok {
		panic(fmt.Sprintf("sqs lock order: taking the registry lock while holding queue %q's lock", name))
	}
}

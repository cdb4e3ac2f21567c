package sqs

import (
	"maps"
	"slices"
	"sync"
	"weak"
)

// allEngines lists every engine of the process, for the work that spans
// them: an evacuation of the shared bodies (sharedbody.go) visits their
// queues. The pointers are weak, so an engine a test drops without closing
// is collected as if it were not listed.
var allEngines struct {
	sync.Mutex
	list    []weak.Pointer[Engine]
	pruneAt int // the length at which engines gone are dropped from list
}

func registerEngine(e *Engine) {
	allEngines.Lock()
	defer allEngines.Unlock()
	if len(allEngines.list) >= allEngines.pruneAt {
		allEngines.list = slices.DeleteFunc(allEngines.list, func(w weak.Pointer[Engine]) bool { return w.Value() == nil })
		allEngines.pruneAt = 2*len(allEngines.list) + 64
	}
	allEngines.list = append(allEngines.list, weak.Make(e))
}

// eachQueue calls f on every queue of every live engine, one at a time,
// with no engine's lock held while f runs.
func eachQueue(f func(*Queue)) {
	allEngines.Lock()
	list := slices.Clone(allEngines.list)
	allEngines.Unlock()
	for _, w := range list {
		e := w.Value()
		if e == nil {
			continue
		}
		e.mu.RLock()
		queues := slices.Collect(maps.Values(e.queues))
		e.mu.RUnlock()
		for _, q := range queues {
			f(q)
		}
	}
}

package main

import (
	"sync/atomic"

	"github.com/fanout/fanout/internal/persist"
)

// groupCommit gives a store without its own group commit one: callers
// queue their batch; one goroutine takes everything queued while the last
// transaction ran and commits it as one transaction, one sync for all.
type groupCommit struct {
	reqs    chan groupReq
	apply   func(batches [][]persist.Record) error
	commits atomic.Int64
	done    chan struct{}
}

type groupReq struct {
	batch []persist.Record
	done  chan error
}

func newGroupCommit(apply func([][]persist.Record) error) *groupCommit {
	g := &groupCommit{reqs: make(chan groupReq, 4096), apply: apply, done: make(chan struct{})}
	go g.loop()
	return g
}

func (g *groupCommit) commit(b []persist.Record) error {
	done := make(chan error, 1)
	g.reqs <- groupReq{b, done}
	return <-done
}

func (g *groupCommit) loop() {
	defer close(g.done)
	for r := range g.reqs {
		reqs := []groupReq{r}
	drain:
		for len(reqs) < 4096 {
			select {
			case r, ok := <-g.reqs:
				if !ok {
					break drain
				}
				reqs = append(reqs, r)
			default:
				break drain
			}
		}
		batches := make([][]persist.Record, len(reqs))
		for i, r := range reqs {
			batches[i] = r.batch
		}
		err := g.apply(batches)
		g.commits.Add(1)
		for _, r := range reqs {
			r.done <- err
		}
	}
}

func (g *groupCommit) stop() {
	close(g.reqs)
	<-g.done
}

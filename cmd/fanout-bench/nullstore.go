package main

import "sync"

// The store floor (target null-store) is the null server doing one thing
// more, the least any server that queues messages must: it keeps each
// sent message's bytes (its body, and its id and MD5 as the reply gives
// them) in memory it maps fresh from the kernel, 1 MiB at a time and
// faulted in at once, as fanout's queues do. It keeps no index, no record
// and no state per queue, and reads nothing back. Next to the null server
// it shows what storing alone costs on a machine, most of all where fresh
// memory is dear (a VM whose host backs its guest's pages lazily); fanout
// next to it shows what fanout's engine costs beyond that. It is a floor
// for the send scenarios (send, send-batch, fill); a DeleteQueue or
// PurgeQueue of any queue gives every kept byte back.

const floorRegion = 1 << 20

type storeFloor struct {
	mu      sync.Mutex
	cur     []byte   // the region being appended to: len is what it holds
	spares  [][]byte // regions mapped and not yet appended to
	regions [][]byte // every region mapped
}

// floor is set by --serve-store; nil, it keeps nothing.
var floor *storeFloor

// keep appends reply and body to the store. A region is mapped outside
// the lock, as fanout maps its own outside a queue's, so that the
// kernel's work for one sender does not stall the others; two senders
// that map at once both keep theirs, one as a spare.
func (s *storeFloor) keep(reply, body []byte) {
	if s == nil {
		return
	}
	n := len(reply) + len(body)
	s.mu.Lock()
	for cap(s.cur)-len(s.cur) < n {
		if k := len(s.spares); k > 0 && len(s.spares[k-1]) >= n {
			s.cur, s.spares = s.spares[k-1][:0], s.spares[:k-1]
			continue
		}
		s.mu.Unlock()
		r := mapFloorRegion(max(floorRegion, n))
		s.mu.Lock()
		s.regions = append(s.regions, r)
		s.spares = append(s.spares, r)
	}
	s.cur = append(s.cur, reply...)
	s.cur = append(s.cur, body...)
	s.mu.Unlock()
}

// reset gives every region back.
func (s *storeFloor) reset() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.regions {
		unmapFloorRegion(r)
	}
	s.cur, s.spares, s.regions = nil, nil, nil
}

// kept returns the bytes appended since the last reset.
func (s *storeFloor) kept() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.regions {
		n += len(r)
	}
	for _, r := range s.spares {
		n -= len(r)
	}
	return n - (cap(s.cur) - len(s.cur))
}

package sqs

import (
	"sync"
	"sync/atomic"
	"unsafe"
)

// A message SNS fans out to several queues (raw delivery) carries the same
// body to each. Stored once for all of them, ten queues hold one
// copy instead of ten: a tenth of the memory, and a tenth of the fresh
// pages the kernel must find and clear while nobody drains them, which on
// a VM is most of such a publish's cost.
//
// Shared bodies live in chunks of sharedChunkSize, each body after an
// 8-byte header that holds its reference count. A queue's record refers to
// one with a 32-bit ref: the chunk's index and the body's offset in it. A
// chunk is freed as soon as its last body dies. A queue that keeps a few
// bodies of a chunk whose others are gone would pin the whole chunk, so
// once the chunks hold more than twice the bytes still referenced (and
// sharedSlack more), the queues holding references copy the bodies of the
// sparsest chunks into their own memory (evacuate), one queue lock at a
// time, on a goroutine of their own.

const (
	sharedChunkSize = 1 << 20
	offBits         = 17 // a body's offset in its chunk, in 8-byte words
	maxSharedChunks = 1 << (32 - offBits)
	sharedHeader    = 8
	sharedSlack     = 16 << 20
	// minShared is the smallest body shared: below it, the header and one
	// more cache line to touch on every receive and delete cost about what
	// one copy per queue does.
	minShared = 256
)

// SharedBody is a message body that several sends store once, referred to
// by each queue that keeps it: fanout's SNS shares a raw delivery's body
// among the queues of one publish. Nothing is stored until
// a queue takes it; Release drops the sharer's own reference, after which
// the body lives as long as a queue keeps it.
type SharedBody struct {
	text string
	ref  uint32
	done bool // stored, or not to be
}

// ShareBody returns a SharedBody for text, for the SendInputs that carry
// text as their Body, or nil (which SendInput takes as none) when text is
// too short to be worth sharing.
func ShareBody(text string) *SharedBody {
	if len(text) < minShared {
		return nil
	}
	return &SharedBody{text: text}
}

// refFor returns the ref of the stored body, storing it first, or 0 when
// body is not text or is not shared (small, or the pool is full).
func (b *SharedBody) refFor(body string) uint32 {
	if b == nil || body != b.text {
		return 0
	}
	if !b.done {
		b.done = true
		b.ref = sharedBodies.put(body)
	}
	return b.ref
}

// Release drops the sharer's reference. Call it once every send that
// carries the body has returned.
func (b *SharedBody) Release() {
	if b == nil {
		return
	}
	if b.ref != 0 {
		sharedBodies.drop(b.ref, uint32(len(b.text)))
		b.ref = 0
	}
	b.done = true
}

// sharedChunk is one chunk of bodies.
type sharedChunk struct {
	mem region
	// live is the bytes (headers included) of its bodies still referenced,
	// plus one while it is the chunk bodies are appended to.
	live atomic.Int64
	evac atomic.Bool // its bodies are being copied out (evacuate)
}

// sharedPool holds the shared bodies of every engine of the process.
type sharedPool struct {
	mu     sync.Mutex
	chunks [maxSharedChunks]*sharedChunk // set under mu; a ref's holder reads its own
	spare  []uint32                      // free indexes below n
	n      uint32                        // indexes handed out so far
	cur    *sharedChunk
	curAt  uint32
	used   int // bytes appended to cur

	held       atomic.Int64 // bytes of the chunks
	live       atomic.Int64 // bytes of bodies still referenced, headers included
	died       atomic.Int64 // bytes of bodies died since the last evacuation
	evacs      atomic.Int64 // evacuations run, for tests
	evacuating atomic.Bool  // set while an evacuation runs
}

var sharedBodies sharedPool

func sharedSize(n int) int64 { return int64(sharedHeader + (n+7)&^7) }

// put stores body with one reference (the sharer's) and returns its ref,
// or 0 when there is no room for it.
func (p *sharedPool) put(body string) uint32 {
	size := int(sharedSize(len(body)))
	if size > sharedChunkSize-sharedHeader {
		return 0
	}
	p.mu.Lock()
	if p.cur == nil || p.used+size > sharedChunkSize {
		p.mu.Unlock()
		// The kernel finds and clears a fresh chunk's pages outside the
		// lock, rather than while every other publisher waits for it.
		mem := allocRegion(sharedChunkSize, false)
		p.mu.Lock()
		if p.cur == nil || p.used+size > sharedChunkSize {
			if !p.install(mem) {
				p.mu.Unlock()
				mem.free()
				return 0
			}
		} else {
			mem.free() // another publisher installed one meanwhile
		}
	}
	c, at, off := p.cur, p.curAt, p.used
	p.used += size
	c.live.Add(int64(size))
	p.mu.Unlock()
	p.live.Add(int64(size))
	refs(c, off).Store(1)
	copy(c.mem.b[off+sharedHeader:], body)
	return at<<offBits | uint32(off>>3)
}

// install makes mem the chunk bodies are appended to. Callers hold mu.
func (p *sharedPool) install(mem region) bool {
	var at uint32
	switch {
	case len(p.spare) > 0:
		at = p.spare[len(p.spare)-1]
		p.spare = p.spare[:len(p.spare)-1]
	case p.n < maxSharedChunks:
		at = p.n
		p.n++
	default:
		return false
	}
	c := &sharedChunk{mem: mem}
	c.live.Store(1)
	p.chunks[at] = c
	p.held.Add(sharedChunkSize)
	if old := p.cur; old != nil && old.live.Add(-1) == 0 {
		p.free(old, p.curAt)
	}
	// Offset 0 is never a body's, so that no ref is 0.
	p.cur, p.curAt, p.used = c, at, sharedHeader
	return true
}

// free frees chunk c, at index at, whose live bytes fell to 0: nothing can
// refer to it any more. Callers hold mu.
func (p *sharedPool) free(c *sharedChunk, at uint32) {
	c.mem.free()
	p.chunks[at] = nil
	p.spare = append(p.spare, at)
	p.held.Add(-sharedChunkSize)
}

// refs is the reference count of the body at off in c.
func refs(c *sharedChunk, off int) *atomic.Int32 {
	return (*atomic.Int32)(unsafe.Pointer(&c.mem.b[off]))
}

// locate returns the chunk and offset of ref. Its caller holds a reference.
func (p *sharedPool) locate(ref uint32) (*sharedChunk, uint32, int) {
	at := ref >> offBits
	return p.chunks[at], at, int(ref&(1<<offBits-1)) << 3
}

// body returns the n bytes of ref's body: a view, for as long as the
// caller holds a reference.
func (p *sharedPool) body(ref, n uint32) []byte {
	c, _, off := p.locate(ref)
	return c.mem.b[off+sharedHeader : off+sharedHeader+int(n) : off+sharedHeader+int(n)]
}

// addRef takes one more reference to ref, whose caller holds one.
func (p *sharedPool) addRef(ref uint32) {
	c, _, off := p.locate(ref)
	refs(c, off).Add(1)
}

// drop drops a reference to ref, a body of n bytes.
func (p *sharedPool) drop(ref, n uint32) {
	c, at, off := p.locate(ref)
	if refs(c, off).Add(-1) > 0 {
		return
	}
	size := sharedSize(int(n))
	live := p.live.Add(-size)
	died := p.died.Add(size)
	if c.live.Add(-size) == 0 { // its last body, and no longer appended to
		p.mu.Lock()
		p.free(c, at)
		p.mu.Unlock()
	}
	if p.held.Load() > 2*live+sharedSlack && died >= max(sharedSlack, live/4) && !p.evacuating.Swap(true) {
		go p.evacuate()
	}
}

// evacuate has every queue that holds bodies of the chunks less than half
// live copy them into its own memory, so that those chunks can be freed.
func (p *sharedPool) evacuate() {
	defer p.evacuating.Store(false)
	p.evacs.Add(1)
	p.died.Store(0)
	p.mu.Lock()
	for at := range p.n {
		if c := p.chunks[at]; c != nil && c != p.cur && c.live.Load() < sharedChunkSize/2 {
			c.evac.Store(true)
		}
	}
	p.mu.Unlock()
	// Every queue of every live engine: the queues that hold references
	// are not listed, as listing each would take a weak pointer per queue on
	// the send path, while an evacuation is rare and in the background.
	eachQueue((*Queue).evacuate)
}

// evacuate copies the queue's shared bodies in chunks being evacuated into
// its own chunks.
func (q *Queue) evacuate() {
	q.lock()
	defer q.unlock()
	s := q.msgs
	if s.sharedRefs > 0 && !q.deleted {
		for i := range s.slab.n {
			if r := s.slab.at(i); r.state != stateGone && r.body != 0 {
				if c, _, _ := sharedBodies.locate(r.body); c.evac.Load() {
					s.unshare(r)
				}
			}
		}
	}
}

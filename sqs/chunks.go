package sqs

// chunks hold the bytes of a queue's messages, appended one message after
// another: MessageId (36), the body's MD5 (32), the body, then its encoded
// user attributes and rare system attributes. Chunk sizes double from
// firstChunk to maxChunk, so a queue pays for what it holds. A chunk whose
// messages are all gone is freed at once (or, the one being appended to,
// rewound): a queue consumed in order never copies anything. Messages
// deleted out of order leave holes, which compact (compact.go) closes once
// the chunks hold twice what is live.
//
// Slot 0 is held in the struct and later slots in a slice, so a queue with
// a chunk or two keeps no slice of chunks on Go's heap for the collector
// to mark in each cycle.
type chunks struct {
	first    chunk    // slot 0
	more     []chunk  // slot k at k-1
	slots    uint32   // slots made
	spare    []uint32 // freed slots
	cur      uint32   // 1 + the chunk being appended to; 0: none
	nextSize int
	// staged is a region mapped before the queue's lock was taken for the
	// next chunk (lockWithRoom), or nothing.
	staged  region
	held    int64 // bytes of the chunks held
	written int64 // bytes written into chunks still held
	live    int64 // bytes of messages still queued
}

type chunk struct {
	mem  region
	used uint32 // bytes written
	live uint32 // bytes of messages still queued
}

// slot returns chunk slot i, one of the slots made.
func (c *chunks) slot(i uint32) *chunk {
	if i == 0 {
		return &c.first
	}
	return &c.more[i-1]
}

const (
	firstChunk = 1 << 10
	maxChunk   = 1 << 20
)

// fits reports whether the chunk being appended to has room for n bytes.
func (c *chunks) fits(n int) bool {
	if c.cur == 0 {
		return false
	}
	k := c.slot(c.cur - 1)
	return int(k.used)+n <= len(k.mem.b)
}

// reserve returns n bytes to write one message into and where they are.
func (c *chunks) reserve(n uint32) (at, off uint32, buf []byte) {
	if c.cur != 0 {
		k := c.slot(c.cur - 1)
		if int(k.used+n) <= len(k.mem.b) {
			off = k.used
			k.used += n
			k.live += n
			c.written += int64(n)
			c.live += int64(n)
			return c.cur - 1, off, k.mem.b[off : off+n : off+n]
		}
	}
	if c.cur != 0 && c.slot(c.cur-1).live == 0 {
		c.drop(c.cur - 1) // too small for n, and holds nothing
	}
	size := c.sizeFor(int(n))
	c.nextSize = min(growChunk(max(c.nextSize, firstChunk)), maxChunk)
	var k chunk
	if len(c.staged.b) >= size {
		k.mem, c.staged = c.staged, region{}
	} else {
		k.mem = allocRegion(size, false)
	}
	c.held += int64(len(k.mem.b))
	if len(c.spare) > 0 {
		at = c.spare[len(c.spare)-1]
		c.spare = c.spare[:len(c.spare)-1]
		*c.slot(at) = k
	} else {
		at = c.slots
		if at > 0 {
			c.more = append(c.more, k)
		} else {
			c.first = k
		}
		c.slots++
	}
	c.cur = at + 1
	return c.reserve(n)
}

// sizeFor returns the size of the chunk reserve makes next for a message
// of n bytes.
func (c *chunks) sizeFor(n int) int {
	size := max(c.nextSize, firstChunk)
	for size < n {
		size = growChunk(size)
	}
	return size
}

// growChunk returns the chunk size after size: up to slowGrowth, half as
// much again, then a third (1, 1.5, 2, 3, 4, 6 KiB...), doubling after.
// The chunk being appended to is on average half empty, and a small one
// is cut from a block mapped populated (arena_pool.go), so its empty part
// costs as much fresh memory as the full part: with 100,000 queues each
// holding about six 1 KiB messages, chunks that doubled took 2,043 bytes a
// message, these take 1,842. Sizes stay ones the blocks have pieces of.
func growChunk(size int) int {
	switch {
	case size >= slowGrowth:
		return size * 2
	case size&(size-1) == 0:
		return size + size/2
	}
	return size / 3 * 4
}

const slowGrowth = 64 << 10

// regionFor returns the size of the mapped region that reserving n more
// bytes, in messages of at most largest bytes, would map, or 0 if the chunk
// being appended to has room or the next chunk would be small (Go's heap).
func (c *chunks) regionFor(n, largest int) int {
	if c.fits(n) {
		return 0
	}
	size := c.sizeFor(largest)
	if size < bigRegion || len(c.staged.b) >= size {
		return 0
	}
	return size
}

// stage keeps r for the next chunk, freeing the region staged before.
func (c *chunks) stage(r region) {
	c.staged.free()
	c.staged = r
}

// bytes returns the message bytes of r: a view, for use under the queue's
// lock only; anything handed out is copied from it.
func (c *chunks) bytes(r *record) []byte {
	return c.slot(r.chunk).mem.b[r.off : r.off+r.size()]
}

// forget marks r's bytes dead, freeing its chunk when nothing in it lives.
func (c *chunks) forget(r *record) {
	n := r.size()
	k := c.slot(r.chunk)
	k.live -= n
	c.live -= int64(n)
	if k.live > 0 {
		return
	}
	if r.chunk+1 == c.cur {
		c.written -= int64(k.used)
		k.used = 0 // rewind: nothing in it is referenced
		return
	}
	c.drop(r.chunk)
}

func (c *chunks) drop(at uint32) {
	k := c.slot(at)
	c.written -= int64(k.used)
	c.held -= int64(len(k.mem.b))
	k.mem.free()
	*k = chunk{}
	c.spare = append(c.spare, at)
	if c.cur == at+1 {
		c.cur = 0
	}
}

// reset frees every chunk.
func (c *chunks) reset() {
	for i := range c.slots {
		c.slot(i).mem.free()
	}
	c.staged.free()
	*c = chunks{}
}

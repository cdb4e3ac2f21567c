package oplog

import "math/bits"

// keyIndex is the liveSet's index: a key's hash to where in ents its last
// write is. It is an open-addressed table of one word a slot (the upper
// half of the hash, which also places it, and the entry), probed
// linearly: a lookup of a key not seen before, which is most of a log's,
// costs one cache line of a table a million keys make 16 MiB, where Go's
// map cost two probes (a look-up, then the store) of a table half as big
// again. Keys whose hashes agree are told apart by the caller, by their
// bytes.
type keyIndex struct {
	slots []uint64 // 0: empty; tombSlot: deleted; else tag<<32 | (entry + 1)
	live  int      // slots holding an entry
	used  int      // slots not empty (live and deleted)
	mask  uint32
}

const tombSlot = ^uint64(0) // its entry + 1 would be 2^32-1, past any int32

// newKeyIndex returns an index with room for n keys.
func newKeyIndex(n int) keyIndex {
	size := 1 << bits.Len(uint(max(n*2, 16)-1)) // at most half full at n
	return keyIndex{slots: make([]uint64, size), mask: uint32(size - 1)}
}

func tagOf(h uint64) uint32 { return uint32(h >> 32) }

// home is the first slot of a hash's probe sequence.
func (x *keyIndex) home(tag uint32) uint32 { return tag & x.mask }

// touch reads h's first slot, so that the cache line is on its way before
// it is needed: a batch touches all its records' slots before it looks
// any up, and their misses overlap instead of following one another.
func (x *keyIndex) touch(h uint64) uint64 { return x.slots[x.home(tagOf(h))] }

// probe calls match for each entry whose slot holds h's tag, in probe
// order, until match says it is the one: it returns that slot, or the
// slot a new entry for h should take (the first deleted one met, else the
// empty one that ended the search) and false.
func (x *keyIndex) probe(h uint64, match func(entry int32) bool) (slot uint32, found bool) {
	tag := tagOf(h)
	free := int64(-1)
	for i := x.home(tag); ; i = (i + 1) & x.mask {
		s := x.slots[i]
		switch {
		case s == 0:
			if free >= 0 {
				return uint32(free), false
			}
			return i, false
		case s == tombSlot:
			if free < 0 {
				free = int64(i)
			}
		case uint32(s>>32) == tag && match(int32(uint32(s)-1)):
			return i, true
		}
	}
}

// entry is the entry slot holds (a live one).
func (x *keyIndex) entry(slot uint32) int32 { return int32(uint32(x.slots[slot]) - 1) }

// set makes slot, which probe returned for h, hold entry.
func (x *keyIndex) set(slot uint32, h uint64, entry int32) {
	switch x.slots[slot] {
	case 0:
		x.used++
		x.live++
	case tombSlot:
		x.live++
	}
	x.slots[slot] = uint64(tagOf(h))<<32 | uint64(uint32(entry)+1)
}

// full reports whether the table should grow before another key is
// added: past 3/4 used, probes get long.
func (x *keyIndex) full() bool { return (x.used+1)*4 > len(x.slots)*3 }

// grown returns a copy of x with room for twice its live keys.
func (x *keyIndex) grown() keyIndex { return x.resized(x.live * 2) }

// resized returns a copy of x with room for n keys (at least its own),
// without its deleted slots. The tags place the entries, so no key is
// read again.
func (x *keyIndex) resized(n int) keyIndex {
	y := newKeyIndex(max(n, x.live))
	for _, s := range x.slots {
		if s == 0 || s == tombSlot {
			continue
		}
		i := y.home(uint32(s >> 32))
		for y.slots[i] != 0 {
			i = (i + 1) & y.mask
		}
		y.slots[i] = s
		y.used++
		y.live++
	}
	return y
}

// remove deletes the entry in slot.
func (x *keyIndex) remove(slot uint32) {
	x.slots[slot] = tombSlot
	x.live--
}

// each calls f with every slot that holds an entry, and that entry.
func (x *keyIndex) each(f func(slot uint32, entry int32)) {
	for i, s := range x.slots {
		if s != 0 && s != tombSlot {
			f(uint32(i), int32(uint32(s)-1))
		}
	}
}

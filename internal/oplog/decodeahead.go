package oplog

import (
	"unsafe"

	"github.com/fanout/fanout/internal/persist"
)

// The verifier, which reads every byte of a file for its checksums anyway,
// can decode the batches it checks as well, and hash their keys: recovery's
// first core then finds each batch's records (views of the file, as
// decodeBatch makes them) and their hashes ready, instead of reading the
// headers of a million records and their keys again, a cache miss each,
// behind the verifier. The scanner still parses every frame itself and
// decodes any batch the verifier did not, so a flaw is found, and
// reported, exactly as without it.

// decodedBatches is the batches of one word of the verifier: for each
// frame, in order, where it starts and which of recs (and hashes) it holds.
type decodedBatches struct {
	frames []decodedFrame
	recs   []persist.Record
	hashes []uint64 // of recs' keys, when asked for
}

type decodedFrame struct {
	at     int64 // the frame's offset
	lo, hi int32 // its records in recs; lo < 0: not a batch that decodes
}

func (b *decodedBatches) reset() {
	b.frames = b.frames[:0]
	clear(b.recs) // no views of an unmapped file kept
	b.recs, b.hashes = b.recs[:0], b.hashes[:0]
}

// decoder is the verifier's side.
type decoder struct {
	hash    func(string) uint64 // nil: no hashes
	free    chan *decodedBatches
	cur     *decodedBatches
	scratch []persist.Record
}

// add decodes the frame at at, whose payload p checks.
func (d *decoder) add(at int64, p []byte) {
	if d.cur == nil {
		select {
		case d.cur = <-d.free:
			d.cur.reset()
		default:
			d.cur = &decodedBatches{}
		}
	}
	b := d.cur
	recs, err := decodeBatch(p, d.scratch)
	d.scratch = recs
	if err != nil {
		// Not a batch (a snapshot's end), or one the scanner will refuse
		// when it decodes it itself.
		b.frames = append(b.frames, decodedFrame{at: at, lo: -1})
		return
	}
	lo := int32(len(b.recs))
	b.recs = append(b.recs, recs...)
	if d.hash != nil {
		for _, r := range recs {
			b.hashes = append(b.hashes, d.hash(unsafe.String(unsafe.SliceData(r.Key), len(r.Key))))
		}
	}
	b.frames = append(b.frames, decodedFrame{at: at, lo: lo, hi: int32(len(b.recs))})
}

// take hands over what was decoded since the last take; nil for a verifier
// that does not decode.
func (d *decoder) take() *decodedBatches {
	if d == nil {
		return nil
	}
	b := d.cur
	d.cur = nil
	return b
}

// decodedAhead is the scanner's side: the verifier's latest word, read in
// order.
type decodedAhead struct {
	cur  *decodedBatches
	pos  int // next frame of cur
	free chan *decodedBatches
}

// next moves on to the batches of the verifier's next word: every frame of
// cur was read, since a word ends where a frame does.
func (a *decodedAhead) next(b *decodedBatches) {
	if a.cur != nil {
		select {
		case a.free <- a.cur:
		default:
		}
	}
	a.cur, a.pos = b, 0
}

// batch returns the records of the frame at at, and their keys' hashes
// (nil if not asked for), when the verifier decoded it. They are valid
// until the scanner reads a frame of the next word.
func (a *decodedAhead) batch(at int64) (recs []persist.Record, hashes []uint64, ok bool) {
	b := a.cur
	if b == nil {
		return nil, nil, false
	}
	for a.pos < len(b.frames) && b.frames[a.pos].at < at {
		a.pos++
	}
	if a.pos == len(b.frames) || b.frames[a.pos].at != at {
		return nil, nil, false
	}
	f := b.frames[a.pos]
	a.pos++
	if f.lo < 0 {
		return nil, nil, false
	}
	if len(b.hashes) > 0 {
		hashes = b.hashes[f.lo:f.hi:f.hi]
	}
	return b.recs[f.lo:f.hi:f.hi], hashes, true
}

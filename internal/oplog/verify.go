package oplog

import (
	"fmt"
	"io"
)

// verifier checks the checksums of a file's frames on another goroutine,
// a few MiB ahead of the frameScanner that parses them, which waits for
// its word instead of checking them itself: on two cores the checksums (a
// pass over every byte, and the first touch of each of the file's pages)
// then cost a recovery little of its wall time. Its lead is bounded, so
// the pages it touches ahead stay few.
type verifier struct {
	progress chan checkedUpTo // offsets up to which every frame checks, rising
	quit     chan struct{}
	exited   chan struct{}
	err      error // why it stopped short; read once progress is closed
	verified int64 // the scanner's: the latest offset received
	stopped  bool
	ahead    decodedAhead // the batches it decoded too, if asked to
}

// checkedUpTo is a word to the scanner: every frame before off checks, and
// these are the batches decoded among them (nil if none were).
type checkedUpTo struct {
	off     int64
	batches *decodedBatches
}

const (
	verifyChunk = 1 << 20 // bytes of frames per word to the scanner
	verifyAhead = 8       // words it may be ahead by
)

// startDecoder checks data's frames from off, whose bytes must stay
// mapped until stop returns. With decode set it also decodes the batches
// it checks, and hashes their keys with hash unless it is nil
// (decodeAhead).
func startDecoder(data []byte, off int64, decode bool, hash func(string) uint64) *verifier {
	v := &verifier{progress: make(chan checkedUpTo, verifyAhead), quit: make(chan struct{}),
		exited: make(chan struct{}), verified: off}
	var d *decoder
	if decode {
		v.ahead.free = make(chan *decodedBatches, verifyAhead+2)
		d = &decoder{hash: hash, free: v.ahead.free}
	}
	go v.run(data, off, d)
	return v
}

func (v *verifier) run(data []byte, off int64, d *decoder) {
	defer close(v.exited)
	defer close(v.progress) // after v.err is set
	fs := frameScanner{data: data, off: off}
	sent := off
	for {
		at := fs.off
		p, err := fs.next()
		if err == nil && d != nil {
			d.add(at, p)
		}
		if err != nil {
			// At the end, or at a frame it cannot vouch for: the scanner
			// parses its way to the same offset and finds any flaw but a
			// checksum's itself.
			if err != io.EOF {
				v.err = err
			}
			break
		}
		if fs.off-sent >= verifyChunk {
			select {
			case v.progress <- checkedUpTo{fs.off, d.take()}:
				sent = fs.off
			case <-v.quit:
				return
			}
		}
	}
	select {
	case v.progress <- checkedUpTo{fs.off, d.take()}:
	case <-v.quit:
	}
}

// await returns once every frame ending at or before end checks, or why
// one does not.
func (v *verifier) await(end int64) error {
	for v.verified < end {
		w, ok := <-v.progress
		if !ok {
			if v.err != nil {
				return v.err
			}
			return &tornError{v.verified, fmt.Sprintf("frame past byte %d unchecked", v.verified)}
		}
		v.verified = w.off
		v.ahead.next(w.batches)
	}
	return nil
}

// stop ends the checking and waits until the goroutine no longer reads the
// file's bytes (before they are unmapped or the file is cut). It may be
// called again.
func (v *verifier) stop() {
	if !v.stopped {
		v.stopped = true
		close(v.quit)
	}
	<-v.exited
}

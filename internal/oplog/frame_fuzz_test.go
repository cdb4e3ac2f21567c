package oplog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/fanout/fanout/internal/persist"
)

// FuzzFrameReader feeds arbitrary bytes to the frame scanner and the batch
// decoder, as recovery would after a crash or disk damage: they must never
// panic or allocate past maxFrame, must stop with a clean EOF or a
// *tornError, and every batch they accept must be exactly what appendBatch
// writes for its records (so nothing is misread as something else).
func FuzzFrameReader(f *testing.F) {
	var seed []byte
	for _, b := range [][]persist.Record{
		{kv("q/a/1", "hello")},
		{kv("q/a/2", string(bytes.Repeat([]byte{0xff}, 300))), del("q/a/1")},
		{persist.DeletePrefix([]byte("q/a/"))},
		{kv("", "")},
	} {
		var err error
		if seed, err = appendBatch(seed, b); err != nil {
			f.Fatal(err)
		}
	}
	end, _ := appendEnd(nil, 4)
	f.Add(seed)
	f.Add(seed[:len(seed)-3])
	f.Add(append(append([]byte(nil), seed...), end...))
	f.Add([]byte{0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0})
	f.Add([]byte{})
	f.Add(seed[frameHeaderSize:])
	f.Fuzz(func(t *testing.T, data []byte) {
		// The payload parser alone, on bytes no checksum vouches for.
		if recs, err := decodeBatch(data, nil); err == nil {
			for _, r := range recs {
				if !r.Op.Valid() || r.Op != persist.OpPut && len(r.Value) > 0 {
					t.Fatalf("decoded an invalid record %+v", r)
				}
			}
		}
		// A scanner whose checksums a verifier checks ahead must read
		// the same frames and stop where and as the plain one does, and
		// the batches the verifier decodes must be the scanner's own.
		hash := func(k string) uint64 { return uint64(len(k)) * 31 }
		ahead := &frameScanner{data: data, checked: startDecoder(data, 0, true, hash)}
		defer ahead.checked.stop()
		fr := &frameScanner{data: data}
		var recs []persist.Record
		var accepted int64
		for {
			at := fr.off
			p, err := fr.next()
			p2, err2 := ahead.next()
			if !bytes.Equal(p, p2) || fmt.Sprint(err) != fmt.Sprint(err2) || fr.off != ahead.off {
				t.Fatalf("checked ahead: %d bytes, %v at %d; checked in turn: %d bytes, %v at %d",
					len(p2), err2, ahead.off, len(p), err, fr.off)
			}
			if err == io.EOF {
				if accepted != int64(len(data)) {
					t.Fatalf("clean EOF after %d of %d bytes", accepted, len(data))
				}
				return
			}
			if err == errZeros { // the caller decides: the end of a preallocated segment, or damage
				if fr.off != accepted {
					t.Fatalf("zeros at %d, but %d bytes were accepted", fr.off, accepted)
				}
				return
			}
			var torn *tornError
			if errors.As(err, &torn) {
				if torn.Offset != accepted {
					t.Fatalf("torn at %d, but %d bytes were accepted", torn.Offset, accepted)
				}
				return
			}
			if err != nil {
				t.Fatalf("reader error of an unexpected kind: %v", err)
			}
			if len(p) > maxFrame {
				t.Fatalf("payload of %d bytes", len(p))
			}
			frame := data[accepted:fr.off]
			accepted = fr.off
			decoded, hashes, ok := ahead.checked.ahead.batch(at)
			if _, end := decodeEnd(p); end {
				if ok {
					t.Fatalf("the verifier decoded an end frame as a batch")
				}
				continue
			}
			if recs, err = decodeBatch(p, recs); err != nil {
				if ok {
					t.Fatalf("the verifier decoded a batch the scanner refuses: %v", err)
				}
				continue // checksummed but malformed: recovery refuses it
			}
			if !ok || len(decoded) != len(recs) || len(hashes) != len(recs) {
				t.Fatalf("the verifier's batch at %d: %v, %d records and %d hashes, want %d", at, ok, len(decoded), len(hashes), len(recs))
			}
			for i, r := range recs {
				d := decoded[i]
				if d.Op != r.Op || !bytes.Equal(d.Key, r.Key) || !bytes.Equal(d.Value, r.Value) || hashes[i] != hash(string(r.Key)) {
					t.Fatalf("the verifier's record %d at %d differs: %+v, want %+v", i, at, d, r)
				}
			}
			again, err := appendBatch(nil, recs)
			if err != nil || !bytes.Equal(again, frame) {
				t.Fatalf("decoded %d records that encode differently (%v)", len(recs), err)
			}
		}
	})
}

package oplog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/fanout/fanout/internal/persist"
)

// On disk, every file (a log segment or a snapshot) is a header followed by
// frames. A frame is
//
//	length uint32 LE | crc32c(payload) uint32 LE | payload (length bytes)
//
// and its payload is one atomic batch:
//
//	'B' | uvarint count | count × (op byte | uvarint len | key | uvarint len | value)
//
// or, as the last frame of a snapshot, 'E' | uvarint records in the snapshot.
// A frame is written whole or, after a crash, found torn: its length runs
// past the end of the file or its checksum fails. Either way nothing of it is
// applied, which is what makes a batch all or nothing.

const (
	// FormatVersion is the version of the layout above; a data dir written
	// with another is refused, never guessed at.
	FormatVersion = 1

	headerSize      = 16
	frameHeaderSize = 8
	// maxFrame bounds one batch, so a corrupt length never makes recovery
	// allocate gigabytes: ten 1 MiB SQS messages and their metadata fit
	// several times over.
	maxFrame = 64 << 20

	frameBatch = 'B'
	frameEnd   = 'E'
)

var (
	castagnoli = crc32.MakeTable(crc32.Castagnoli)
	logMagic   = [8]byte{'f', 'a', 'n', 'o', 'u', 't', 'L', 'G'}
	snapMagic  = [8]byte{'f', 'a', 'n', 'o', 'u', 't', 'S', 'N'}
)

// header is magic | version uint32 LE | crc32c of the first 12 bytes.
func header(magic [8]byte) []byte {
	h := make([]byte, headerSize)
	copy(h, magic[:])
	binary.LittleEndian.PutUint32(h[8:], FormatVersion)
	binary.LittleEndian.PutUint32(h[12:], crc32.Checksum(h[:12], castagnoli))
	return h
}

// errShortHeader marks a file cut before its header was complete: only the
// newest log segment may be in that state (a crash while it was created).
var errShortHeader = errors.New("header cut short")

// checkHeader checks the header at the start of a file's bytes.
func checkHeader(b []byte, magic [8]byte, name string) error {
	if len(b) < headerSize {
		return errShortHeader
	}
	h := b[:headerSize]
	if [8]byte(h[:8]) != magic {
		return fmt.Errorf("%s is not a fanout data file (bad magic %q)", name, h[:8])
	}
	if crc32.Checksum(h[:12], castagnoli) != binary.LittleEndian.Uint32(h[12:]) {
		return fmt.Errorf("%s has a corrupt header", name)
	}
	if v := binary.LittleEndian.Uint32(h[8:]); v != FormatVersion {
		return &VersionError{File: name, Version: v}
	}
	return nil
}

// VersionError refuses a data dir written in another storage format.
type VersionError struct {
	File    string
	Version uint32
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("%s uses storage format %d but this fanout reads format %d only: "+
		"start the fanout version that wrote it, or use a fresh data dir", e.File, e.Version, FormatVersion)
}

// appendBatch appends the frame for batch to dst.
func appendBatch(dst []byte, batch []persist.Record) ([]byte, error) {
	start := len(dst)
	dst = append(dst, make([]byte, frameHeaderSize)...)
	dst = append(dst, frameBatch)
	dst = binary.AppendUvarint(dst, uint64(len(batch)))
	for _, r := range batch {
		if !r.Op.Valid() {
			return dst[:start], fmt.Errorf("oplog: record with unknown op %d", r.Op)
		}
		dst = appendRecord(dst, r.Op, r.Key, r.Value)
	}
	return sealFrame(dst, start)
}

// appendRecord appends one record of a batch payload.
func appendRecord(dst []byte, op persist.Op, key, value []byte) []byte {
	dst = append(dst, byte(op))
	dst = binary.AppendUvarint(dst, uint64(len(key)))
	dst = append(dst, key...)
	if op != persist.OpPut {
		value = nil
	}
	dst = binary.AppendUvarint(dst, uint64(len(value)))
	return append(dst, value...)
}

// appendEnd appends a snapshot's closing frame.
func appendEnd(dst []byte, records uint64) ([]byte, error) {
	start := len(dst)
	dst = append(dst, make([]byte, frameHeaderSize)...)
	dst = append(dst, frameEnd)
	dst = binary.AppendUvarint(dst, records)
	return sealFrame(dst, start)
}

func sealFrame(dst []byte, start int) ([]byte, error) {
	payload := dst[start+frameHeaderSize:]
	if len(payload) > maxFrame {
		return dst[:start], fmt.Errorf("oplog: batch of %d bytes is over the %d-byte limit", len(payload), maxFrame)
	}
	binary.LittleEndian.PutUint32(dst[start:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(dst[start+4:], crc32.Checksum(payload, castagnoli))
	return dst, nil
}

// tornError says where and why a file's frames stop being trustworthy.
type tornError struct {
	Offset int64 // of the first byte not used
	Reason string
}

func (e *tornError) Error() string { return fmt.Sprintf("torn at byte %d: %s", e.Offset, e.Reason) }

// frameScanner reads the frames of a file's bytes (mapped, see mapped),
// from the end of its header. Payloads are views of those bytes.
type frameScanner struct {
	data []byte
	off  int64 // offset of the next frame
	// checked, when set, checks the checksums ahead of next, which waits
	// for it rather than checking them itself.
	checked *verifier
}

// next returns the next frame's payload, io.EOF at a clean end, or a
// *tornError.
func (fs *frameScanner) next() ([]byte, error) {
	rest := fs.data[fs.off:]
	if len(rest) == 0 {
		return nil, io.EOF
	}
	if len(rest) < frameHeaderSize {
		return nil, &tornError{fs.off, fmt.Sprintf("frame header cut short after %d of %d bytes", len(rest), frameHeaderSize)}
	}
	size := binary.LittleEndian.Uint32(rest)
	if size == 0 && binary.LittleEndian.Uint32(rest[4:]) == 0 {
		// Zeros: either the preallocated, never written rest of a
		// segment (the clean end) or damage; the caller tells which.
		return nil, errZeros
	}
	if size == 0 || size > maxFrame {
		return nil, &tornError{fs.off, fmt.Sprintf("frame length %d out of range", size)}
	}
	if n := len(rest) - frameHeaderSize; int64(size) > int64(n) {
		return nil, &tornError{fs.off, fmt.Sprintf("frame of %d bytes cut short after %d", size, n)}
	}
	p := rest[frameHeaderSize : frameHeaderSize+int(size) : frameHeaderSize+int(size)]
	if fs.checked != nil {
		if err := fs.checked.await(fs.off + frameHeaderSize + int64(size)); err != nil {
			return nil, err
		}
	} else if crc32.Checksum(p, castagnoli) != binary.LittleEndian.Uint32(rest[4:]) {
		return nil, &tornError{fs.off, "frame checksum mismatch"}
	}
	fs.off += frameHeaderSize + int64(size)
	return p, nil
}

// errZeros is next's answer at a frame header of zeros.
var errZeros = errors.New("a frame header of zeros")

// zeroTail reports whether everything from the zero frame header next
// just found is zeros too: the unwritten rest of a preallocated segment,
// which ends the log cleanly. A crash mid-write leaves no zero header in
// front of later data, since each group is written whole at the end.
func (fs *frameScanner) zeroTail() bool {
	rest := fs.data[fs.off:]
	for len(rest) >= 8 {
		if binary.LittleEndian.Uint64(rest) != 0 {
			return false
		}
		rest = rest[8:]
	}
	for _, b := range rest {
		if b != 0 {
			return false
		}
	}
	return true
}

// errBadPayload marks a frame whose checksum holds but whose content does
// not parse: not a torn write but a bug or deliberate damage.
var errBadPayload = errors.New("frame content does not parse")

// decodeBatch parses a batch payload into recs (reusing its storage); keys
// and values alias p. It checks the whole payload before returning, so a
// caller applies all of a batch or none of it.
func decodeBatch(p []byte, recs []persist.Record) ([]persist.Record, error) {
	recs = recs[:0]
	if len(p) == 0 || p[0] != frameBatch {
		return recs, errBadPayload
	}
	p = p[1:]
	count, n := binary.Uvarint(p)
	if n <= 0 || count > uint64(len(p)) { // each record takes at least 3 bytes
		return recs, errBadPayload
	}
	p = p[n:]
	for i := uint64(0); i < count; i++ {
		if len(p) < 1 {
			return recs, errBadPayload
		}
		op := persist.Op(p[0])
		if !op.Valid() {
			return recs, errBadPayload
		}
		p = p[1:]
		var key, value []byte
		var ok bool
		if key, p, ok = cutBytes(p); !ok {
			return recs, errBadPayload
		}
		if value, p, ok = cutBytes(p); !ok {
			return recs, errBadPayload
		}
		if op != persist.OpPut && len(value) > 0 {
			return recs, errBadPayload
		}
		recs = append(recs, persist.Record{Op: op, Key: key, Value: value})
	}
	if len(p) != 0 {
		return recs, errBadPayload
	}
	return recs, nil
}

// decodeEnd parses a snapshot's closing frame.
func decodeEnd(p []byte) (uint64, bool) {
	if len(p) == 0 || p[0] != frameEnd {
		return 0, false
	}
	v, n := binary.Uvarint(p[1:])
	return v, n > 0 && n == len(p)-1
}

func cutBytes(p []byte) (field, rest []byte, ok bool) {
	l, n := binary.Uvarint(p)
	if n <= 0 || l > uint64(len(p)-n) {
		return nil, nil, false
	}
	end := n + int(l)
	return p[n:end:end], p[end:], true
}

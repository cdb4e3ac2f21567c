package oplog

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/fanout/fanout/internal/persist"
)

// diskBytes is what the file's blocks take on disk.
func diskBytes(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Sys().(*syscall.Stat_t).Blocks * 512
}

// A relaxed segment reserves blocks ahead of its data but its size stays
// that of its data, so recovery reads it as before; closing it gives the
// reserved blocks back.
func TestRelaxedSegmentReservesBlocksAhead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l, _, err := Open(dir, Options{Mode: Relaxed}, func(k, v []byte) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	seg := filepath.Join(dir, segName(l.segNum))
	val := make([]byte, 1000)
	for i := range 700 { // past a spill: written ahead of the tick
		l.Enqueue([]persist.Record{persist.Put([]byte{byte(i), byte(i >> 8)}, val)})
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	data := fileLen(t, seg)
	if data < 700*1000 {
		t.Fatalf("segment holds %d bytes, want the 700 records' frames", data)
	}
	if disk := diskBytes(t, seg); disk < reserveStep {
		t.Skipf("the file system reserved nothing (%d bytes on disk for %d of data)", disk, data)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if got := fileLen(t, seg); got != data {
		t.Fatalf("closed segment is %d bytes, want its data's %d", got, data)
	}
	if disk := diskBytes(t, seg); disk >= data+reserveStep/2 {
		t.Fatalf("closed segment takes %d bytes on disk for %d of data: the reserved blocks were kept", disk, data)
	}
	got := 0
	l2, _, err := Open(dir, Options{Mode: Relaxed}, func(k, v []byte) error { got++; return nil })
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	if got != 700 {
		t.Fatalf("recovered %d records, want 700", got)
	}
}

// A snapshot reserves its blocks as it is written and gives back what it
// did not use: on disk it takes what it holds.
func TestSnapshotKeepsNoReservedBlocks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	val := make([]byte, 1000)
	snap := func(emit func(key, value []byte) error) error {
		for i := range 5000 {
			if err := emit([]byte{byte(i), byte(i >> 8)}, val); err != nil {
				return err
			}
		}
		return nil
	}
	l, _, err := Open(dir, Options{Mode: Relaxed, Snapshot: snap}, func(k, v []byte) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Compact(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, snapName(l.snapSeq))
	size := fileLen(t, path)
	if size < 5000*1000 || size != l.snapSize {
		t.Fatalf("snapshot is %d bytes (the log says %d), want the 5000 records", size, l.snapSize)
	}
	if disk := diskBytes(t, path); disk >= size+reserveStep/2 {
		t.Fatalf("snapshot takes %d bytes on disk for %d of data: the reserved blocks were kept", disk, size)
	}
}

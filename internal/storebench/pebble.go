package main

import (
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/fanout/fanout/internal/persist"
)

// pebble groups concurrent Sync commits into one WAL sync itself, so each
// writer commits its own batch; a counting FS reports the syncs it does.
type pebbleStore struct {
	db *pebble.DB
	fs *countFS
}

func openPebble(dir string, _ persist.Snapshotter, load persist.Loader) (store, error) {
	fs := &countFS{FS: vfs.Default}
	db, err := pebble.Open(dir, &pebble.Options{FS: fs})
	if err != nil {
		return nil, err
	}
	it, err := db.NewIter(nil)
	if err != nil {
		db.Close()
		return nil, err
	}
	for it.First(); it.Valid(); it.Next() {
		// The iterator's slices are valid only until Next: copy them out.
		if err := load(append([]byte(nil), it.Key()...), append([]byte(nil), it.Value()...)); err != nil {
			it.Close()
			db.Close()
			return nil, err
		}
	}
	if err := it.Close(); err != nil {
		db.Close()
		return nil, err
	}
	return &pebbleStore{db: db, fs: fs}, nil
}

func (s *pebbleStore) commit(batch []persist.Record) error {
	b := s.db.NewBatch()
	defer b.Close()
	for _, r := range batch {
		var err error
		if r.Op == persist.OpPut {
			err = b.Set(r.Key, r.Value, nil)
		} else {
			err = b.Delete(r.Key, nil)
		}
		if err != nil {
			return err
		}
	}
	return b.Commit(pebble.Sync)
}

func (s *pebbleStore) syncs() int64 { return s.fs.syncs.Load() }
func (s *pebbleStore) close() error { return s.db.Close() }

type countFS struct {
	vfs.FS
	syncs atomic.Int64
}

func (c *countFS) Create(name string, cat vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := c.FS.Create(name, cat)
	return c.wrap(f, err)
}

func (c *countFS) OpenReadWrite(name string, cat vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := c.FS.OpenReadWrite(name, cat, opts...)
	return c.wrap(f, err)
}

func (c *countFS) ReuseForWrite(oldname, newname string, cat vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := c.FS.ReuseForWrite(oldname, newname, cat)
	return c.wrap(f, err)
}

func (c *countFS) OpenDir(name string) (vfs.File, error) {
	f, err := c.FS.OpenDir(name)
	return c.wrap(f, err)
}

func (c *countFS) wrap(f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return &countFile{File: f, syncs: &c.syncs}, nil
}

type countFile struct {
	vfs.File
	syncs *atomic.Int64
}

func (f *countFile) Sync() error     { f.syncs.Add(1); return f.File.Sync() }
func (f *countFile) SyncData() error { f.syncs.Add(1); return f.File.SyncData() }
func (f *countFile) SyncTo(n int64) (bool, error) {
	full, err := f.File.SyncTo(n)
	if full {
		f.syncs.Add(1)
	}
	return full, err
}

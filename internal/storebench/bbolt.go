package main

import (
	"path/filepath"

	"github.com/fanout/fanout/internal/persist"
	bolt "go.etcd.io/bbolt"
)

type bboltStore struct {
	db *bolt.DB
	g  *groupCommit
}

var bucket = []byte("m")

func openBbolt(dir string, _ persist.Snapshotter, load persist.Loader) (store, error) {
	db, err := bolt.Open(filepath.Join(dir, "fanout.bolt"), 0o600, nil)
	if err != nil {
		return nil, err
	}
	err = db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(bucket)
		return err
	})
	if err == nil {
		err = db.View(func(tx *bolt.Tx) error {
			return tx.Bucket(bucket).ForEach(func(k, v []byte) error {
				// bbolt's slices point into its mmap: copy them out.
				return load(append([]byte(nil), k...), append([]byte(nil), v...))
			})
		})
	}
	if err != nil {
		db.Close()
		return nil, err
	}
	s := &bboltStore{db: db}
	s.g = newGroupCommit(func(batches [][]persist.Record) error {
		return db.Update(func(tx *bolt.Tx) error {
			b := tx.Bucket(bucket)
			for _, batch := range batches {
				for _, r := range batch {
					var err error
					if r.Op == persist.OpPut {
						err = b.Put(r.Key, r.Value)
					} else {
						err = b.Delete(r.Key)
					}
					if err != nil {
						return err
					}
				}
			}
			return nil
		})
	})
	return s, nil
}

func (s *bboltStore) commit(b []persist.Record) error { return s.g.commit(b) }
func (s *bboltStore) syncs() int64                    { return s.g.commits.Load() }
func (s *bboltStore) close() error                    { s.g.stop(); return s.db.Close() }

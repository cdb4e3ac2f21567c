package main

import (
	"database/sql"
	"path/filepath"

	"github.com/fanout/fanout/internal/persist"
	_ "modernc.org/sqlite"
)

type sqliteStore struct {
	db *sql.DB
	g  *groupCommit
}

func openSQLite(dir string, _ persist.Snapshotter, load persist.Loader) (store, error) {
	// WAL with synchronous=FULL: a commit returns after the WAL is synced
	// (NORMAL would not sync commits, so it would not be durable).
	dsn := "file:" + filepath.Join(dir, "fanout.db") + "?_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS m (k BLOB PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID`); err != nil {
		db.Close()
		return nil, err
	}
	rows, err := db.Query(`SELECT k, v FROM m`)
	if err != nil {
		db.Close()
		return nil, err
	}
	for rows.Next() {
		var k, v []byte
		if err := rows.Scan(&k, &v); err != nil {
			rows.Close()
			db.Close()
			return nil, err
		}
		if err := load(k, v); err != nil {
			rows.Close()
			db.Close()
			return nil, err
		}
	}
	if err := rows.Close(); err != nil {
		db.Close()
		return nil, err
	}
	s := &sqliteStore{db: db}
	s.g = newGroupCommit(func(batches [][]persist.Record) error {
		tx, err := db.Begin()
		if err != nil {
			return err
		}
		put, err := tx.Prepare(`INSERT OR REPLACE INTO m (k, v) VALUES (?, ?)`)
		if err != nil {
			tx.Rollback()
			return err
		}
		del, err := tx.Prepare(`DELETE FROM m WHERE k = ?`)
		if err != nil {
			tx.Rollback()
			return err
		}
		for _, batch := range batches {
			for _, r := range batch {
				if r.Op == persist.OpPut {
					_, err = put.Exec(r.Key, r.Value)
				} else {
					_, err = del.Exec(r.Key)
				}
				if err != nil {
					tx.Rollback()
					return err
				}
			}
		}
		return tx.Commit()
	})
	return s, nil
}

func (s *sqliteStore) commit(b []persist.Record) error { return s.g.commit(b) }
func (s *sqliteStore) syncs() int64                    { return s.g.commits.Load() }
func (s *sqliteStore) close() error                    { s.g.stop(); return s.db.Close() }

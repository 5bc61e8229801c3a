package store

import (
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/perfbot/perfbot/record"
)

// PutCommit records c, replacing what was known of the same hash, so that
// evidence can name a commit without opening the repository.
func (db *DB) PutCommit(c record.Commit) error {
	return db.bolt.Update(func(tx *bolt.Tx) error { return putCommit(tx, c) })
}

// Commit returns the commit with the full hash, and false if it is unknown.
func (db *DB) Commit(hash string) (c record.Commit, ok bool, err error) {
	err = db.view(func(tx *bolt.Tx) error {
		c, ok, err = getCommit(tx, hash)
		return err
	})
	return c, ok, err
}

func putCommit(tx *bolt.Tx, c record.Commit) error {
	if c.Hash == "" {
		return errors.New("put commit: empty hash")
	}
	if err := putJSON(tx.Bucket(bucketCommits), []byte(c.Hash), c); err != nil {
		return fmt.Errorf("put commit %s: %w", c.Hash, err)
	}
	return nil
}

func getCommit(tx *bolt.Tx, hash string) (record.Commit, bool, error) {
	var c record.Commit
	if hash == "" {
		return c, false, errors.New("get commit: empty hash")
	}
	ok, err := getJSON(tx.Bucket(bucketCommits), []byte(hash), &c)
	if err != nil {
		return c, false, fmt.Errorf("get commit %s: %w", hash, err)
	}
	return c, ok, nil
}

package store

import (
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Commit is what the store remembers of a commit of the watched repository,
// so that evidence can name it without opening the repository.
type Commit struct {
	Hash    string    `json:"hash"`
	Subject string    `json:"subject"`
	Author  string    `json:"author"`
	Email   string    `json:"email,omitempty"`
	Time    time.Time `json:"time"`
	Parents []string  `json:"parents,omitempty"`
}

// PutCommit records c, replacing what was known of the same hash.
func (db *DB) PutCommit(c Commit) error {
	return db.bolt.Update(func(tx *bolt.Tx) error { return putCommit(tx, c) })
}

// Commit returns the commit with the full hash, and false if it is unknown.
func (db *DB) Commit(hash string) (c Commit, ok bool, err error) {
	err = db.bolt.View(func(tx *bolt.Tx) error {
		c, ok, err = getCommit(tx, hash)
		return err
	})
	return c, ok, err
}

func putCommit(tx *bolt.Tx, c Commit) error {
	if c.Hash == "" {
		return errors.New("put commit: empty hash")
	}
	if err := putJSON(tx.Bucket(bucketCommits), []byte(c.Hash), c); err != nil {
		return fmt.Errorf("put commit %s: %w", c.Hash, err)
	}
	return nil
}

func getCommit(tx *bolt.Tx, hash string) (Commit, bool, error) {
	var c Commit
	if hash == "" {
		return c, false, errors.New("get commit: empty hash")
	}
	ok, err := getJSON(tx.Bucket(bucketCommits), []byte(hash), &c)
	if err != nil {
		return c, false, fmt.Errorf("get commit %s: %w", hash, err)
	}
	return c, ok, nil
}

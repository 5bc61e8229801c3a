package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/perfbot/perfbot/record"
)

// FindCommit returns the commit whose full hash is rev or, failing that,
// the only known commit whose hash starts with rev. A prefix that several
// commits share is an error wrapping ErrAmbiguous.
func (db *DB) FindCommit(rev string) (c record.Commit, ok bool, err error) {
	if rev == "" {
		return c, false, errors.New("find commit: empty revision")
	}
	err = db.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketCommits)
		if c, ok, err = getCommit(tx, rev); ok || err != nil {
			return err
		}
		var found [][]byte
		cur := b.Cursor()
		for k, _ := cur.Seek([]byte(rev)); k != nil && bytes.HasPrefix(k, []byte(rev)) && len(found) < 2; k, _ = cur.Next() {
			found = append(found, bytes.Clone(k))
		}
		switch len(found) {
		case 0:
			return nil
		case 1:
			c, ok, err = getCommit(tx, string(found[0]))
			return err
		}
		return fmt.Errorf("commit %q: %w: %s, %s, …", rev, ErrAmbiguous, found[0], found[1])
	})
	return c, ok, err
}

// RunKey is the host and status that runs are counted by.
type RunKey struct {
	Host   string
	Status record.Status
}

// RunTotal is how many runs of one RunKey there were and how long they
// took.
type RunTotal struct {
	Runs    int
	Seconds float64
}

// RunTotals adds the runs with ids after the id to totals (which it
// allocates when nil) and returns the id of the newest run it counted, so
// that a caller that keeps the totals reads each run once.
func (db *DB) RunTotals(after uint64, totals map[RunKey]RunTotal) (map[RunKey]RunTotal, uint64, error) {
	if totals == nil {
		totals = map[RunKey]RunTotal{}
	}
	last := after
	err := db.view(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketRuns).Cursor()
		for k, v := c.Seek(runKey(after + 1)); k != nil; k, v = c.Next() {
			var r struct {
				Host     string        `json:"host"`
				Status   record.Status `json:"status"`
				Duration time.Duration `json:"duration"`
			}
			if err := decodeJSON(k, v, &r); err != nil {
				return fmt.Errorf("run totals: decode run %x: %w", k, err)
			}
			key := RunKey{Host: r.Host, Status: r.Status}
			t := totals[key]
			t.Runs++
			t.Seconds += r.Duration.Seconds()
			totals[key] = t
			last = binary.BigEndian.Uint64(k)
		}
		return nil
	})
	return totals, last, err
}

// Commits returns the known commits among hashes, in one transaction (a
// page of history names a few hundred commits).
func (db *DB) Commits(hashes []string) (map[string]record.Commit, error) {
	out := make(map[string]record.Commit, len(hashes))
	err := db.view(func(tx *bolt.Tx) error {
		for _, h := range hashes {
			if _, done := out[h]; done || h == "" {
				continue
			}
			c, ok, err := getCommit(tx, h)
			if err != nil {
				return fmt.Errorf("commits: %w", err)
			}
			if ok {
				out[h] = c
			}
		}
		return nil
	})
	return out, err
}

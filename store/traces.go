package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// TraceLine is one progress line of a job: what the job said it was doing,
// and when.
type TraceLine struct {
	Time time.Time `json:"time"`
	Text string    `json:"text"`
}

// AppendTrace adds a line to the trace of job id. Lines keep the order in
// which they were appended.
func (db *DB) AppendTrace(id string, l TraceLine) error {
	if id == "" {
		return errors.New("append trace: empty job id")
	}
	return db.bolt.Update(func(tx *bolt.Tx) error {
		b, err := tx.Bucket(bucketTraces).CreateBucketIfNotExists([]byte(id))
		if err != nil {
			return fmt.Errorf("append trace of %s: %w", id, err)
		}
		seq, err := b.NextSequence()
		if err != nil {
			return fmt.Errorf("append trace of %s: %w", id, err)
		}
		if err := putJSON(b, binary.BigEndian.AppendUint64(nil, seq), l); err != nil {
			return fmt.Errorf("append trace of %s: %w", id, err)
		}
		return nil
	})
}

// Trace returns the trace of job id, oldest line first; nil when the job
// has none.
func (db *DB) Trace(id string) (lines []TraceLine, err error) {
	err = db.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketTraces).Bucket([]byte(id))
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			var l TraceLine
			if err := decodeJSON(k, v, &l); err != nil {
				return fmt.Errorf("trace of %s: decode line %x: %w", id, k, err)
			}
			lines = append(lines, l)
			return nil
		})
	})
	return lines, err
}

package store

import (
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/perfbot/perfbot/record"
)

// TriageFunc decides a triage inside the transaction that records it: it
// gets the finding, every night (oldest first) and the nightly state, and
// edits the finding and the state in place.
type TriageFunc func(f *record.Finding, nights []record.Night, s *record.NightlyState) error

// Triage records a triage decision about the finding named by id (or a
// unique prefix of it) in one transaction with the nightly state it
// changes: a decision that moves the baseline is never stored without the
// moved baseline, nor the reverse. It returns the finding as stored, and
// false when no finding has the id. An error of fn aborts the transaction
// and is returned as it is.
func (db *DB) Triage(id string, fn TriageFunc) (f record.Finding, ok bool, err error) {
	err = db.bolt.Update(func(tx *bolt.Tx) error {
		f, ok, err = getFinding(tx, id)
		if err != nil || !ok {
			return err
		}
		var nights []record.Night
		err := tx.Bucket(bucketNights).ForEach(func(k, v []byte) error {
			var n record.Night
			if err := decodeJSON(k, v, &n); err != nil {
				return fmt.Errorf("decode night %x: %w", k, err)
			}
			nights = append(nights, n)
			return nil
		})
		if err != nil {
			return fmt.Errorf("triage %s: %w", f.ID, err)
		}
		var s record.NightlyState
		if _, err := getJSON(tx.Bucket(bucketNightly), keyNightlyState, &s); err != nil {
			return fmt.Errorf("triage %s: nightly state: %w", f.ID, err)
		}
		if err := fn(&f, nights, &s); err != nil {
			return err
		}
		if err := putFinding(tx, f); err != nil {
			return err
		}
		return putNightlyState(tx, s)
	})
	return f, ok, err
}

package store

import (
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/perfbot/perfbot/record"
)

var keyNightlyState = []byte("state")

// AddNight records the night and the state it hands the next one, in one
// transaction: a cycle killed before it returns leaves neither, so the
// next cycle measures again instead of trusting half a night. The night's
// Seq is assigned here (and set in n).
func (db *DB) AddNight(n *record.Night, next record.NightlyState) error {
	if n == nil || n.Tip == "" {
		return errors.New("add night: no tip")
	}
	if !n.Status.Valid() {
		return fmt.Errorf("add night: unknown status %q", n.Status)
	}
	return db.bolt.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketNights)
		seq, err := b.NextSequence()
		if err != nil {
			return fmt.Errorf("add night: %w", err)
		}
		n.Seq = seq
		if err := putJSON(b, runKey(seq), n); err != nil {
			return fmt.Errorf("add night %d: %w", seq, err)
		}
		return putNightlyState(tx, next)
	})
}

// Nights returns every night, oldest first.
func (db *DB) Nights() (nights []record.Night, err error) {
	err = db.view(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketNights).ForEach(func(k, v []byte) error {
			var n record.Night
			if err := decodeJSON(k, v, &n); err != nil {
				return fmt.Errorf("nights: decode %x: %w", k, err)
			}
			nights = append(nights, n)
			return nil
		})
	})
	return nights, err
}

// NightlyState returns the state the last night handed on; the zero state
// before the first night.
func (db *DB) NightlyState() (s record.NightlyState, err error) {
	err = db.view(func(tx *bolt.Tx) error {
		s, err = getNightlyState(tx)
		return err
	})
	return s, err
}

// UpdateNightlyState changes the nightly state in one transaction: fn gets
// the stored state and edits it.
func (db *DB) UpdateNightlyState(fn func(*record.NightlyState) error) error {
	return db.bolt.Update(func(tx *bolt.Tx) error {
		s, err := getNightlyState(tx)
		if err != nil {
			return fmt.Errorf("nightly state: %w", err)
		}
		if err := fn(&s); err != nil {
			return err
		}
		return putNightlyState(tx, s)
	})
}

// SetAlertOutcome records what alert job found of its change on every
// alert of the nightly state that the job was enqueued for.
func (db *DB) SetAlertOutcome(job string, outcome record.AlertOutcome) error {
	return db.UpdateNightlyState(func(s *record.NightlyState) error {
		for k, a := range s.Alerts {
			if a.Job == job {
				a.Outcome = outcome
				s.Alerts[k] = a
			}
		}
		return nil
	})
}

// getNightlyState reads the nightly state. A state written before it kept
// its alerts (the keys of Handled and Transient) comes back with them in
// Alerts, as decisions act and transient.
func getNightlyState(tx *bolt.Tx) (s record.NightlyState, err error) {
	if _, err := getJSON(tx.Bucket(bucketNightly), keyNightlyState, &s); err != nil {
		return s, err
	}
	if len(s.Handled) == 0 && len(s.Transient) == 0 {
		return s, nil
	}
	if s.Alerts == nil {
		s.Alerts = map[string]record.Alert{}
	}
	for k, job := range s.Handled {
		if _, ok := s.Alerts[k]; !ok {
			s.Alerts[k] = record.Alert{Decision: record.DecisionAct, Job: job}
		}
	}
	for k, night := range s.Transient {
		if _, ok := s.Alerts[k]; !ok {
			s.Alerts[k] = record.Alert{Decision: record.DecisionTransient, Decided: night}
		}
	}
	s.Handled, s.Transient = nil, nil
	return s, nil
}

func putNightlyState(tx *bolt.Tx, s record.NightlyState) error {
	if err := putJSON(tx.Bucket(bucketNightly), keyNightlyState, s); err != nil {
		return fmt.Errorf("nightly state: %w", err)
	}
	return nil
}

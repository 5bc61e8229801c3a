package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/perfbot/perfbot/record"
)

// migrateV5 gives every finding the one id every view shows
// (record.Finding.DerivedID): a finding kept under its fingerprint
// ("perfbotfp" and twenty hex digits, with a suffix such as "-nr" for some
// outcomes) moves to record.FindingID of that key, and so does the key of
// each finding the nightly state remembers commenting on. The issues
// bucket stays keyed by fingerprint, the marker the issues carry. Should
// two old keys give one id, the finding created last keeps it.
func migrateV5(tx *bolt.Tx) error {
	fb := tx.Bucket(bucketFindings)
	moved := map[string]record.Finding{}
	var old [][]byte
	err := fb.ForEach(func(k, v []byte) error {
		if !bytes.HasPrefix(k, []byte(record.FindingMarker)) {
			return nil // an id already
		}
		id := record.FindingID(string(k))
		f, err := decodeFindingJSON(v)
		if err != nil {
			return fmt.Errorf("finding %s: %w", k, err)
		}
		old = append(old, k)
		if prev, ok := moved[id]; ok && prev.Created.After(f.Created) {
			return nil
		}
		f.ID = id
		moved[id] = f
		return nil
	})
	if err != nil {
		return err
	}
	for _, k := range old {
		if err := fb.Delete(k); err != nil {
			return fmt.Errorf("finding %s: %w", k, err)
		}
	}
	for id, f := range moved {
		if raw := fb.Get([]byte(id)); raw != nil && f.Triage == nil {
			if kept, err := decodeFindingJSON(raw); err == nil {
				f.Triage = kept.Triage
			}
		}
		f.LinkCommits()
		if err := putPlainJSON(fb, []byte(id), f); err != nil {
			return fmt.Errorf("finding %s: %w", id, err)
		}
	}
	return notedIDsV5(tx)
}

// notedIDsV5 re-keys the nightly state's "noted" findings by their new
// ids, leaving the rest of the state as it is stored.
func notedIDsV5(tx *bolt.Tx) error {
	nb := tx.Bucket(bucketNightly)
	raw := nb.Get(keyNightlyState)
	if raw == nil {
		return nil
	}
	var state map[string]json.RawMessage
	if err := json.Unmarshal(raw, &state); err != nil {
		return fmt.Errorf("nightly state: %w", err)
	}
	var noted map[string]uint64
	if state["noted"] == nil {
		return nil
	}
	if err := json.Unmarshal(state["noted"], &noted); err != nil {
		return fmt.Errorf("nightly state: noted: %w", err)
	}
	renamed := make(map[string]uint64, len(noted))
	for id, night := range noted {
		if strings.HasPrefix(id, record.FindingMarker) {
			id = record.FindingID(id)
		}
		renamed[id] = max(renamed[id], night)
	}
	var err error
	if state["noted"], err = json.Marshal(renamed); err != nil {
		return err
	}
	out, err := json.Marshal(state)
	if err != nil {
		return err
	}
	return nb.Put(keyNightlyState, out)
}

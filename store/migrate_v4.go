package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/perfbot/perfbot/record"
)

// migrateV4 stores every commit as record.Commit, the one commit record,
// and a finding's warnings as values: a commit of the commits bucket keeps
// its author date under "date" (it was "time"); a commit inside a finding
// keeps its parents' hashes where it kept their count; and a warning a
// finding kept in words becomes a record.WarnNote.
func migrateV4(tx *bolt.Tx) error {
	if err := commitDatesV4(tx); err != nil {
		return err
	}
	fb := tx.Bucket(bucketFindings)
	var fixed []record.Finding
	err := fb.ForEach(func(k, v []byte) error {
		raw, changed, err := findingV4(tx, v)
		if err != nil || !changed {
			return err
		}
		f, err := decodeFindingJSON(raw)
		if err != nil {
			return fmt.Errorf("finding %s: %w", k, err)
		}
		fixed = append(fixed, f)
		return nil
	})
	if err != nil {
		return err
	}
	for _, f := range fixed {
		if err := putPlainJSON(fb, []byte(f.ID), f); err != nil {
			return fmt.Errorf("finding %s: %w", f.ID, err)
		}
	}
	return nil
}

// commitDatesV4 moves each stored commit's "time" to "date".
func commitDatesV4(tx *bolt.Tx) error {
	cb := tx.Bucket(bucketCommits)
	var fixed []record.Commit
	err := cb.ForEach(func(k, v []byte) error {
		var c struct {
			record.Commit
			Time time.Time `json:"time"`
		}
		if err := json.Unmarshal(v, &c); err != nil {
			return fmt.Errorf("commit %s: %w", k, err)
		}
		if c.Date.IsZero() {
			c.Date = c.Time
		}
		fixed = append(fixed, c.Commit)
		return nil
	})
	if err != nil {
		return err
	}
	for _, c := range fixed {
		if err := putPlainJSON(cb, []byte(c.Hash), c); err != nil {
			return fmt.Errorf("put commit %s: %w", c.Hash, err)
		}
	}
	return nil
}

// findingV4 rewrites a finding's JSON as version 4 lays it out: the
// commits whose "parents" is a count (version 3 and before) hold their
// parents' hashes, as the commits bucket knows them (a commit it does not
// know loses the count), and warnings in words become WarnNote values. It
// reports whether anything changed. Every other key is kept as it was, so
// that an older migration can read its own fields after it.
func findingV4(tx *bolt.Tx, raw []byte) ([]byte, bool, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, false, err
	}
	changed := false
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			hash, isCommit := v["hash"].(string)
			if _, count := v["parents"].(json.Number); isCommit && count {
				delete(v, "parents")
				var known struct {
					Parents []string `json:"parents"`
				}
				if ok, err := getPlainJSON(tx.Bucket(bucketCommits), []byte(hash), &known); err == nil && ok && len(known.Parents) > 0 {
					v["parents"] = known.Parents
				}
				changed = true
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(doc)
	if f, ok := doc.(map[string]any); ok {
		if ws, ok := f["warnings"].([]any); ok {
			for i, w := range ws {
				if text, ok := w.(string); ok {
					ws[i] = record.Warning{Kind: record.WarnNote, Text: text}
					changed = true
				}
			}
		}
	}
	if !changed {
		return raw, false, nil
	}
	out, err := json.Marshal(doc)
	return out, true, err
}

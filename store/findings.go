package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/perfbot/perfbot/record"
)

// PutFinding records f under f.ID, replacing the finding with the same id;
// a triage decision stored with it stays when f carries none (a
// re-detection does not undo what a person decided). Each commit it names
// is stored with its URL (record.Finding.LinkCommits).
func (db *DB) PutFinding(f record.Finding) error {
	return db.bolt.Update(func(tx *bolt.Tx) error { return putFinding(tx, f) })
}

// PutFindingIssue records f and the issue it was filed as in one
// transaction, so that the finding is never stored as filed without the
// record that stops a second issue (or the reverse). The issue is recorded
// under the finding's fingerprint, the marker the issue carries.
func (db *DB) PutFindingIssue(f record.Finding, number int) error {
	return db.bolt.Update(func(tx *bolt.Tx) error {
		if err := putFinding(tx, f); err != nil {
			return err
		}
		return setIssue(tx, f.Fingerprint(), number)
	})
}

// Finding returns the finding whose id is id or, failing that, the only
// finding whose id starts with id. A prefix that several ids share is an
// error wrapping ErrAmbiguous. An older perfbot's id (the fingerprint,
// "perfbotfp…", or a prefix of it) names the finding it had become
// (record.FindingID).
func (db *DB) Finding(id string) (f record.Finding, ok bool, err error) {
	err = db.view(func(tx *bolt.Tx) error {
		f, ok, err = getFinding(tx, id)
		return err
	})
	return f, ok, err
}

// Findings returns every finding, newest first.
func (db *DB) Findings() (fs []record.Finding, err error) {
	err = db.view(func(tx *bolt.Tx) error {
		fs, err = listFindings(tx)
		return err
	})
	return fs, err
}

// IssueFor returns the number of the issue filed for the fingerprint, and
// false if none was.
func (db *DB) IssueFor(fingerprint string) (n int, ok bool, err error) {
	err = db.view(func(tx *bolt.Tx) error {
		n, ok, err = issueFor(tx, fingerprint)
		return err
	})
	return n, ok, err
}

// SetIssue records that the issue with the number was filed for the
// fingerprint.
func (db *DB) SetIssue(fingerprint string, number int) error {
	return db.bolt.Update(func(tx *bolt.Tx) error { return setIssue(tx, fingerprint, number) })
}

func putFinding(tx *bolt.Tx, f record.Finding) error {
	if f.ID == "" {
		return fmt.Errorf("put finding of %s: no id (set it to the fingerprint)", f.Metric)
	}
	if f.Triage == nil {
		if raw := tx.Bucket(bucketFindings).Get([]byte(f.ID)); raw != nil {
			if old, err := decodeFinding([]byte(f.ID), raw); err == nil {
				f.Triage = old.Triage
			}
		}
	}
	f.LinkCommits()
	if err := putJSON(tx.Bucket(bucketFindings), []byte(f.ID), f); err != nil {
		return fmt.Errorf("put finding %s: %w", f.ID, err)
	}
	return nil
}

func getFinding(tx *bolt.Tx, id string) (record.Finding, bool, error) {
	var f record.Finding
	if id == "" {
		return f, false, errors.New("get finding: empty id")
	}
	b := tx.Bucket(bucketFindings)
	key, err := uniqueKey(b, []byte(id))
	if err == nil && key == nil && strings.HasPrefix(id, record.FindingMarker) {
		key, err = uniqueKey(b, []byte(record.FindingID(id)))
	}
	if err != nil || key == nil {
		return f, false, err
	}
	raw := b.Get(key)
	if raw == nil {
		return f, false, nil
	}
	if f, err = decodeFinding(key, raw); err != nil {
		return f, false, fmt.Errorf("get finding %s: %w", key, err)
	}
	return f, true, nil
}

// decodeFinding unseals and decodes the finding stored under key.
func decodeFinding(key, raw []byte) (record.Finding, error) {
	value, err := unseal(key, raw)
	if err != nil {
		return record.Finding{}, err
	}
	return decodeFindingJSON(value)
}

// decodeFindingJSON decodes a finding's JSON. One stored before its
// commits carried their URLs has the pattern of them under "commit_url":
// its commits are linked by it as they are read.
func decodeFindingJSON(raw []byte) (record.Finding, error) {
	var stored struct {
		record.Finding
		CommitURL string `json:"commit_url"`
	}
	if err := json.Unmarshal(raw, &stored); err != nil {
		return record.Finding{}, err
	}
	f := stored.Finding
	if stored.CommitURL != "" {
		f.CommitURL = stored.CommitURL
		f.LinkCommits()
		f.CommitURL = ""
	}
	return f, nil
}

// uniqueKey is id itself when it is a key, else the only key that starts
// with it, else nil.
func uniqueKey(b *bolt.Bucket, id []byte) ([]byte, error) {
	if b.Get(id) != nil {
		return id, nil
	}
	var found []string
	c := b.Cursor()
	for k, _ := c.Seek(id); k != nil && bytes.HasPrefix(k, id); k, _ = c.Next() {
		found = append(found, string(k))
	}
	switch len(found) {
	case 0:
		return nil, nil
	case 1:
		return []byte(found[0]), nil
	default:
		return nil, fmt.Errorf("finding %q: %w: %d findings match: %s", id, ErrAmbiguous, len(found), candidates(found))
	}
}

// candidates lists the ids of an ambiguous prefix, at most eight.
func candidates(ids []string) string {
	if len(ids) > 8 {
		return strings.Join(ids[:8], ", ") + fmt.Sprintf(", and %d more", len(ids)-8)
	}
	return strings.Join(ids, ", ")
}

func listFindings(tx *bolt.Tx) ([]record.Finding, error) {
	var fs []record.Finding
	err := tx.Bucket(bucketFindings).ForEach(func(k, v []byte) error {
		f, err := decodeFinding(k, v)
		if err != nil {
			return fmt.Errorf("list findings: decode %s: %w", k, err)
		}
		fs = append(fs, f)
		return nil
	})
	sort.SliceStable(fs, func(a, b int) bool {
		if !fs[a].Created.Equal(fs[b].Created) {
			return fs[a].Created.After(fs[b].Created)
		}
		return fs[a].ID < fs[b].ID
	})
	return fs, err
}

func issueFor(tx *bolt.Tx, fingerprint string) (int, bool, error) {
	if fingerprint == "" {
		return 0, false, errors.New("issue for: empty fingerprint")
	}
	raw, err := getSealed(tx.Bucket(bucketIssues), []byte(fingerprint))
	if err != nil || raw == nil {
		return 0, false, err
	}
	n, err := strconv.Atoi(string(raw))
	if err != nil {
		return 0, false, fmt.Errorf("issue for %s: stored number %q: %w", fingerprint, raw, err)
	}
	return n, true, nil
}

func setIssue(tx *bolt.Tx, fingerprint string, number int) error {
	if fingerprint == "" {
		return errors.New("set issue: empty fingerprint")
	}
	if number <= 0 {
		return fmt.Errorf("set issue of %s: number %d is not a positive issue number", fingerprint, number)
	}
	if err := putSealed(tx.Bucket(bucketIssues), []byte(fingerprint), []byte(strconv.Itoa(number))); err != nil {
		return fmt.Errorf("set issue of %s: %w", fingerprint, err)
	}
	return nil
}

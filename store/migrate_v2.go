package store

import (
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/perfbot/perfbot/record"
)

// findingV1 is the part of a version 1 finding that version 2 lays out
// differently: hunks were one list beside the culprits (a hunk named its
// culprit only when there were several) and the hunks' effect was the
// finding's, with half-width intervals.
type findingV1 struct {
	Hunks []struct {
		record.Hunk
		Commit string `json:"commit"`
	} `json:"hunks"`
	HunkEffect *struct {
		AppliedPct    float64 `json:"applied_pct"`
		AppliedCIPct  float64 `json:"applied_ci_pct"`
		RevertedPct   float64 `json:"reverted_pct"`
		RevertedCIPct float64 `json:"reverted_ci_pct"`
	} `json:"hunk_effect"`
}

// migrateV2 adds the bucket of job traces and attaches the hunks of every
// finding to their culprit.
func migrateV2(tx *bolt.Tx) error {
	if _, err := tx.CreateBucketIfNotExists(bucketTraces); err != nil {
		return fmt.Errorf("create bucket %s: %w", bucketTraces, err)
	}
	return attachHunksV2(tx)
}

// attachHunksV2 moves every finding's hunks into the culprit they belong to
// and re-keys the finding (and its issue) under the fingerprint, which no
// longer covers the hunks: one regression is one finding whether or not a
// hunk search ran.
func attachHunksV2(tx *bolt.Tx) error {
	fb, ib := tx.Bucket(bucketFindings), tx.Bucket(bucketIssues)
	type rekey struct {
		old string
		f   record.Finding
	}
	var moved []rekey
	err := fb.ForEach(func(k, v []byte) error {
		// A version 1 finding kept its commits' parents as a count and
		// its warnings in words, which today's record reads otherwise.
		v, _, err := findingV4(tx, v)
		if err != nil {
			return fmt.Errorf("finding %s: %w", k, err)
		}
		f, err := decodeFindingJSON(v)
		if err != nil {
			return fmt.Errorf("finding %s: %w", k, err)
		}
		var old findingV1
		if err := json.Unmarshal(v, &old); err != nil {
			return fmt.Errorf("finding %s: %w", k, err)
		}
		for _, h := range old.Hunks {
			i := 0
			for j, c := range f.Culprits {
				if c.Commit.Hash == h.Commit {
					i = j
				}
			}
			if i < len(f.Culprits) {
				f.Culprits[i].Hunks = append(f.Culprits[i].Hunks, h.Hunk)
			}
		}
		if e := old.HunkEffect; e != nil && len(f.Culprits) == 1 {
			halfWidth := func(pct, ci float64) *record.Effect {
				return &record.Effect{Pct: pct, Interval: record.Interval{Lo: pct - ci, Hi: pct + ci}}
			}
			f.Culprits[0].HunkEffect = &record.HunkEffect{
				Applied:  halfWidth(e.AppliedPct, e.AppliedCIPct),
				Reverted: halfWidth(e.RevertedPct, e.RevertedCIPct),
			}
		}
		f.ID = f.Fingerprint()
		moved = append(moved, rekey{old: string(k), f: f})
		return nil
	})
	if err != nil {
		return err
	}
	for _, m := range moved {
		if err := fb.Delete([]byte(m.old)); err != nil {
			return err
		}
		if err := putPlainJSON(fb, []byte(m.f.ID), m.f); err != nil {
			return fmt.Errorf("finding %s: %w", m.f.ID, err)
		}
		if n := ib.Get([]byte(m.old)); n != nil && m.old != m.f.ID {
			if err := ib.Put([]byte(m.f.ID), append([]byte(nil), n...)); err != nil {
				return err
			}
		}
	}
	return nil
}

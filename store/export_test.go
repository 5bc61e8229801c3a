package store

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"

	bolt "go.etcd.io/bbolt"

	"github.com/perfbot/perfbot/record"
)

// WriteSchemaVersion sets the schema version of the closed store at path,
// to stand for a file written by another perfbot.
func WriteSchemaVersion(path string, version string) error {
	b, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		return err
	}
	defer b.Close()
	return b.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketMeta).Put(keySchemaVersion, []byte(version))
	})
}

// CheckConsistency verifies the file's structure and that every run has all
// its derived records and nothing derived lacks its run: the invariants
// that one transaction per run must keep through a crash.
func CheckConsistency(db *DB) error {
	return db.bolt.View(func(tx *bolt.Tx) error {
		var errs []error
		for err := range tx.Check() {
			errs = append(errs, err)
		}
		if len(errs) > 0 {
			return fmt.Errorf("bbolt check: %w", errors.Join(errs...))
		}
		runs := map[uint64]record.Run{}
		err := tx.Bucket(bucketRuns).ForEach(func(k, v []byte) error {
			var r record.Run
			if err := decodeJSON(k, v, &r); err != nil {
				return err
			}
			runs[r.ID] = r
			return nil
		})
		if err != nil {
			return err
		}
		derived := 0
		for id, r := range runs {
			st := stamp(r.Started, id)
			for _, ix := range []struct {
				bucket []byte
				key    []byte
			}{
				{bucketRunsByTime, st},
				{bucketRunsByTarget, indexKey(prefixKey(r.TargetKey), st)},
				{bucketRunsByCommit, indexKey(prefixKey(r.Target.Commit), st)},
			} {
				if !has(tx.Bucket(ix.bucket), ix.key) {
					return fmt.Errorf("run %d has no %s entry", id, ix.bucket)
				}
				derived++
			}
			if r.Status != record.StatusInfraError {
				if !has(tx.Bucket(bucketCache), indexKey(prefixKey(r.SpecHash, r.TargetKey), st)) {
					return fmt.Errorf("run %d has no cache entry", id)
				}
				derived++
			}
			if r.Status != record.StatusOK {
				continue
			}
			for m, want := range r.Values {
				var s sampleRecord
				ok, err := getJSON(tx.Bucket(bucketSamples).Bucket([]byte(m)), st, &s)
				if err != nil || !ok || s.Value != want {
					return fmt.Errorf("run %d: sample of %s: found %v, value %v, want %v (%v)", id, m, ok, s.Value, want, err)
				}
				derived++
			}
		}
		// Every derived record was reached from a run above; counting them
		// shows that none is left without its run.
		count := 0
		for _, name := range [][]byte{bucketRunsByTime, bucketRunsByTarget, bucketRunsByCommit, bucketCache} {
			count += tx.Bucket(name).Stats().KeyN
		}
		err = tx.Bucket(bucketSamples).ForEachBucket(func(k []byte) error {
			return tx.Bucket(bucketSamples).Bucket(k).ForEach(func(k, _ []byte) error {
				count++
				if len(k) != stampLen {
					return fmt.Errorf("sample key %x is not a stamp", k)
				}
				return nil
			})
		})
		if err != nil {
			return err
		}
		if count != derived {
			return fmt.Errorf("%d derived records for %d runs, want %d: some belong to no run", count, len(runs), derived)
		}
		return nil
	})
}

// has reports whether key is in b; Get cannot tell an empty value from none.
func has(b *bolt.Bucket, key []byte) bool {
	k, _ := b.Cursor().Seek(key)
	return bytes.Equal(k, key)
}

// WriteRawFinding stores raw JSON under key in the findings bucket and, when
// issue is not zero, the issue under key, to stand for a finding written by
// an older perfbot; the schema version is set to version.
func WriteRawFinding(path, key, raw string, issue int, version string) error {
	b, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		return err
	}
	defer b.Close()
	return b.Update(func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketFindings).Put([]byte(key), layoutOf(version, []byte(key), []byte(raw))); err != nil {
			return err
		}
		if issue != 0 {
			if err := tx.Bucket(bucketIssues).Put([]byte(key), layoutOf(version, []byte(key), []byte(fmt.Sprint(issue)))); err != nil {
				return err
			}
		}
		return tx.Bucket(bucketMeta).Put(keySchemaVersion, []byte(version))
	})
}

// WriteRawCommit stores raw JSON under hash in the commits bucket, to stand
// for a commit written by an older perfbot; the schema version is set to
// version.
func WriteRawCommit(path, hash, raw string, version string) error {
	b, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		return err
	}
	defer b.Close()
	return b.Update(func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketCommits).Put([]byte(hash), layoutOf(version, []byte(hash), []byte(raw))); err != nil {
			return err
		}
		return tx.Bucket(bucketMeta).Put(keySchemaVersion, []byte(version))
	})
}

// WriteRawNightlyState stores raw JSON as the nightly state of the closed
// store at path, to stand for a state written by another perfbot.
func WriteRawNightlyState(path, raw string) error {
	b, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		return err
	}
	defer b.Close()
	return b.Update(func(tx *bolt.Tx) error {
		version := string(tx.Bucket(bucketMeta).Get(keySchemaVersion))
		return tx.Bucket(bucketNightly).Put(keyNightlyState, layoutOf(version, keyNightlyState, []byte(raw)))
	})
}

// layoutOf is value as a store of the schema version writes it: sealed
// from version 6 on.
func layoutOf(version string, key, value []byte) []byte {
	if v, err := strconv.Atoi(version); err == nil && v >= 6 {
		return seal(key, value)
	}
	return value
}

// WriteVersion5 rewrites the closed store at path as perfbot wrote it at
// schema version 5: every value without its checksum.
func WriteVersion5(path string) error {
	b, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		return err
	}
	defer b.Close()
	return b.Update(func(tx *bolt.Tx) error {
		var strip func(b *bolt.Bucket) error
		strip = func(b *bolt.Bucket) error {
			type kv struct{ k, v []byte }
			var values []kv
			var nested [][]byte
			err := b.ForEach(func(k, v []byte) error {
				if v == nil && b.Bucket(k) != nil {
					nested = append(nested, bytes.Clone(k))
					return nil
				}
				plain, err := unseal(k, v)
				if err != nil {
					return err
				}
				values = append(values, kv{bytes.Clone(k), bytes.Clone(plain)})
				return nil
			})
			if err != nil {
				return err
			}
			for _, e := range values {
				if err := b.Put(e.k, e.v); err != nil {
					return err
				}
			}
			for _, k := range nested {
				if err := strip(b.Bucket(k)); err != nil {
					return err
				}
			}
			return nil
		}
		err := tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			if bytes.Equal(name, bucketMeta) {
				return nil
			}
			return strip(b)
		})
		if err != nil {
			return err
		}
		return tx.Bucket(bucketMeta).Put(keySchemaVersion, []byte("5"))
	})
}

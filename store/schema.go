package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"
)

// This file is the whole schema: every bucket, every key layout, the schema
// version and the migrations that bring an older file up to it. Values are
// JSON so that `bbolt get` shows something a person can read, each but the
// schema version followed by a checksum of its key and itself (since
// version 6, seal.go); an index entry's value is the checksum alone.
//
//	meta             "schema_version" → decimal version
//	commits          hash → record.Commit                        (a date, not a time, since version 4)
//	runs             BE64(run id) → record.Run
//	runs_by_time     BE64(started) BE64(id) → runHead
//	runs_by_target   target key 0x00 BE64(started) BE64(id) → empty
//	runs_by_commit   commit 0x00 BE64(started) BE64(id) → empty
//	cache            spec hash 0x00 target key 0x00 BE64(started) BE64(id) → cacheRecord
//	samples/<metric> BE64(started) BE64(id) → sampleRecord   (ok runs only)
//	jobs             job id → Job
//	traces/<job id>  BE64(sequence) → TraceLine                (since version 2)
//	findings         finding id → record.Finding                 (parents as hashes, warnings as values since version 4; ids of record.IDDigits hex digits since version 5)
//	issues           finding fingerprint → issue number
//	nights           BE64(night seq) → record.Night              (since version 3)
//	nightly          "state" → record.NightlyState              (since version 3)
//
// BE64(started) is the run's start in Unix nanoseconds, big-endian, so that
// byte order is time order and a cursor walks history newest first with
// Prev. The run id after it keeps keys of runs started in the same
// nanosecond apart. The key of a sample is the same "stamp" as the run's
// index keys, which lets a commit's index entries find its samples with
// one Get per metric.

var (
	bucketMeta         = []byte("meta")
	bucketCommits      = []byte("commits")
	bucketRuns         = []byte("runs")
	bucketRunsByTime   = []byte("runs_by_time")
	bucketRunsByTarget = []byte("runs_by_target")
	bucketRunsByCommit = []byte("runs_by_commit")
	bucketCache        = []byte("cache")
	bucketSamples      = []byte("samples")
	bucketJobs         = []byte("jobs")
	bucketTraces       = []byte("traces")
	bucketFindings     = []byte("findings")
	bucketIssues       = []byte("issues")
	bucketNights       = []byte("nights")
	bucketNightly      = []byte("nightly")

	keySchemaVersion = []byte("schema_version")
)

// SchemaVersion is the version of the layout this package reads and writes.
const SchemaVersion = 6

// migration brings a store from version-1 to version. Migrations run in
// order inside the transaction that opens the store, so a store is never
// left half migrated.
type migration struct {
	version int
	name    string
	apply   func(tx *bolt.Tx) error
}

var migrations = []migration{
	{version: 1, name: "create buckets", apply: createBucketsV1},
	{version: 2, name: "hunks belong to their culprit; job traces", apply: migrateV2},
	{version: 3, name: "nights of the scheduled service", apply: createBucketsV3},
	{version: 4, name: "one commit record; warnings as values", apply: migrateV4},
	{version: 5, name: "one short id of a finding", apply: migrateV5},
	{version: 6, name: "a checksum in every value", apply: migrateV6},
}

func createBucketsV1(tx *bolt.Tx) error {
	for _, name := range [][]byte{
		bucketMeta, bucketCommits, bucketRuns, bucketRunsByTime, bucketRunsByTarget,
		bucketRunsByCommit, bucketCache, bucketSamples, bucketJobs, bucketFindings, bucketIssues,
	} {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return fmt.Errorf("create bucket %s: %w", name, err)
		}
	}
	return nil
}

func createBucketsV3(tx *bolt.Tx) error {
	for _, name := range [][]byte{bucketNights, bucketNightly} {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return fmt.Errorf("create bucket %s: %w", name, err)
		}
	}
	return nil
}

// migrate reads the stored schema version and applies every migration above
// it. A store written by a newer perfbot is refused rather than misread.
func migrate(tx *bolt.Tx) error {
	from, err := storedVersion(tx)
	if err != nil {
		return err
	}
	if from > SchemaVersion {
		return fmt.Errorf("%w: the file has version %d, this perfbot reads up to version %d; upgrade perfbot",
			ErrNewerSchema, from, SchemaVersion)
	}
	for _, m := range migrations {
		if m.version <= from {
			continue
		}
		if err := m.apply(tx); err != nil {
			return fmt.Errorf("migrate to schema version %d (%s): %w", m.version, m.name, err)
		}
		if err := tx.Bucket(bucketMeta).Put(keySchemaVersion, []byte(strconv.Itoa(m.version))); err != nil {
			return fmt.Errorf("record schema version %d: %w", m.version, err)
		}
	}
	return nil
}

// storedVersion is the schema version of the file: 0 for a new, empty file.
func storedVersion(tx *bolt.Tx) (int, error) {
	meta := tx.Bucket(bucketMeta)
	if meta == nil {
		empty := true
		_ = tx.ForEach(func([]byte, *bolt.Bucket) error { empty = false; return nil })
		if !empty {
			return 0, fmt.Errorf("the file holds buckets but no %s bucket: not a perfbot store", bucketMeta)
		}
		return 0, nil
	}
	raw := meta.Get(keySchemaVersion)
	if raw == nil {
		return 0, fmt.Errorf("the %s bucket holds no %s", bucketMeta, keySchemaVersion)
	}
	v, err := strconv.Atoi(string(raw))
	if err != nil || v < 1 {
		return 0, fmt.Errorf("schema version %q is not a positive integer", raw)
	}
	return v, nil
}

// stampLen is the length of a stamp: BE64(started) BE64(id).
const stampLen = 16

// stamp is the time-ordered part of every run key.
func stamp(started time.Time, id uint64) []byte {
	k := make([]byte, stampLen)
	binary.BigEndian.PutUint64(k, uint64(started.UnixNano()))
	binary.BigEndian.PutUint64(k[8:], id)
	return k
}

// parseStamp is the inverse of stamp; k must end with a stamp.
func parseStamp(k []byte) (time.Time, uint64) {
	s := k[len(k)-stampLen:]
	return time.Unix(0, int64(binary.BigEndian.Uint64(s))).UTC(), binary.BigEndian.Uint64(s[8:])
}

// sinceKey is the smallest stamp at or after t.
func sinceKey(t time.Time) []byte {
	if t.IsZero() || t.Unix() < 0 {
		return nil
	}
	return stamp(t, 0)
}

func runKey(id uint64) []byte {
	k := make([]byte, 8)
	binary.BigEndian.PutUint64(k, id)
	return k
}

// prefixKey is the parts joined by 0x00 and followed by a 0x00, so that a
// prefix never matches a longer value ("ab" does not match "abc").
func prefixKey(parts ...string) []byte {
	var b bytes.Buffer
	for _, p := range parts {
		b.WriteString(p)
		b.WriteByte(0)
	}
	return b.Bytes()
}

func indexKey(prefix []byte, st []byte) []byte {
	return append(append(make([]byte, 0, len(prefix)+len(st)), prefix...), st...)
}

// walkNewest calls fn for every key of b that starts with prefix and is not
// below floor (nil: no floor), newest first, until fn returns false; fn
// gets the value unsealed.
func walkNewest(b *bolt.Bucket, prefix, floor []byte, fn func(k, v []byte) (bool, error)) error {
	c := b.Cursor()
	var k, v []byte
	if upper := prefixEnd(prefix); upper == nil {
		k, v = c.Last()
	} else if k, v = c.Seek(upper); k == nil {
		k, v = c.Last()
	} else {
		k, v = c.Prev()
	}
	for ; k != nil && bytes.HasPrefix(k, prefix); k, v = c.Prev() {
		if floor != nil && bytes.Compare(k[len(prefix):], floor) < 0 {
			return nil
		}
		value, err := unseal(k, v)
		if err != nil {
			return err
		}
		more, err := fn(k, value)
		if err != nil || !more {
			return err
		}
	}
	return nil
}

// prefixEnd is the smallest key greater than every key with the prefix, or
// nil when there is none (an empty prefix or one of only 0xff bytes).
func prefixEnd(prefix []byte) []byte {
	end := append([]byte(nil), prefix...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

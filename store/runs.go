package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/perfbot/perfbot/record"
)

// runHead is what runs_by_time says about a run: enough to filter runs
// without decoding their logs.
type runHead struct {
	TargetKey string `json:"target"`
	SpecHash  string `json:"spec"`
	Commit    string `json:"commit"`
}

// cacheRecord is one attempt at a (spec, target) pair.
type cacheRecord struct {
	Status record.Status      `json:"status"`
	Values map[string]float64 `json:"values,omitempty"`
	Host   string             `json:"host,omitempty"`
	Node   string             `json:"node,omitempty"`
}

// sampleRecord is one metric value of one ok run.
type sampleRecord struct {
	Value     float64       `json:"v"`
	Commit    string        `json:"commit"`
	TargetKey string        `json:"target"`
	SpecHash  string        `json:"spec"`
	Host      string        `json:"host"`
	Status    record.Status `json:"status"`
	// Plain is true for a commit measured as it is: no hunks, no
	// environment overrides. History shows only these by default.
	Plain bool `json:"plain"`
}

// RunRef is one recorded attempt at a target under a spec.
type RunRef struct {
	ID      uint64             `json:"id"`
	Started time.Time          `json:"started"`
	Status  record.Status      `json:"status"`
	Values  map[string]float64 `json:"values,omitempty"`
	// Host is the host that ran it; "" for runs cached before the cache
	// recorded hosts (the run record has it).
	Host string `json:"host,omitempty"`
	// Node is the node of a cluster's host that ran it (record.Run.Node);
	// "" on a host that is one machine, and for runs cached before the
	// cache recorded nodes.
	Node string `json:"node,omitempty"`
}

// CacheEntry is every attempt at one target under one spec, oldest first.
// Runs that ended in infra_error say nothing about the target and are not
// part of it.
type CacheEntry struct {
	// OK are the runs that measured the target.
	OK []RunRef `json:"ok"`
	// Failed are the runs that ended in build_failed or bench_failed.
	Failed []RunRef `json:"failed"`
}

// Values are the values of metric of the ok runs, oldest first; runs that
// did not produce the metric contribute nothing.
func (e CacheEntry) Values(metric string) []float64 {
	var vs []float64
	for _, r := range e.OK {
		if v, ok := r.Values[metric]; ok {
			vs = append(vs, v)
		}
	}
	return vs
}

// RunFilter selects runs. Empty fields match every run; Limit ≤ 0 means no
// limit.
type RunFilter struct {
	TargetKey string
	SpecHash  string
	Commit    string
	Limit     int
}

// AddRun records r, its samples and its cache entry in one transaction and
// returns the id it assigned (also set in r.ID once the transaction has
// committed; an id r already had is replaced). Only ok runs contribute
// samples.
func (db *DB) AddRun(r *record.Run) (uint64, error) {
	if err := db.AddRuns([]*record.Run{r}); err != nil {
		return 0, err
	}
	return r.ID, nil
}

// AddRunEntry records r as AddRun does and returns the cache entry of r's
// target as the same transaction left it: whoever measures a target learns
// its runs, the new one included, without reading them back.
func (db *DB) AddRunEntry(r *record.Run) (CacheEntry, error) {
	var e CacheEntry
	err := db.addRuns([]*record.Run{r}, func(tx *bolt.Tx) (err error) {
		e, err = cached(tx, r.SpecHash, r.TargetKey)
		return err
	})
	return e, err
}

// AddRuns records every run in one transaction: all of them or none. It is
// meant for imports and bulk loads; each run gets a new id as in AddRun.
func (db *DB) AddRuns(runs []*record.Run) error {
	return db.addRuns(runs, nil)
}

// addRuns is AddRuns, calling then, when set, inside the transaction after
// the runs are added.
func (db *DB) addRuns(runs []*record.Run, then func(*bolt.Tx) error) error {
	if len(runs) == 0 {
		return nil
	}
	for i, r := range runs {
		if err := validateRun(r); err != nil {
			return fmt.Errorf("add run %d of %d: %w", i+1, len(runs), err)
		}
	}
	ids := make([]uint64, len(runs))
	err := db.bolt.Update(func(tx *bolt.Tx) error {
		for i, r := range runs {
			id, err := addRun(tx, r)
			if err != nil {
				return err
			}
			ids[i] = id
		}
		if then != nil {
			return then(tx)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i, r := range runs {
		r.ID = ids[i]
	}
	return nil
}

// Run returns the run with the id, and false if there is none.
func (db *DB) Run(id uint64) (r record.Run, ok bool, err error) {
	err = db.view(func(tx *bolt.Tx) error {
		r, ok, err = getRun(tx, id)
		return err
	})
	return r, ok, err
}

// Runs returns the runs that match f, newest (by start time) first.
func (db *DB) Runs(f RunFilter) (runs []record.Run, err error) {
	err = db.view(func(tx *bolt.Tx) error {
		runs, err = listRuns(tx, f)
		return err
	})
	return runs, err
}

// Cached returns every attempt at the target under the spec.
func (db *DB) Cached(specHash, targetKey string) (e CacheEntry, err error) {
	err = db.view(func(tx *bolt.Tx) error {
		e, err = cached(tx, specHash, targetKey)
		return err
	})
	return e, err
}

// Values returns the values of metric measured on the target under the
// spec, oldest first.
func (db *DB) Values(specHash, targetKey, metric string) ([]float64, error) {
	e, err := db.Cached(specHash, targetKey)
	if err != nil {
		return nil, err
	}
	return e.Values(metric), nil
}

// Status returns the status of the latest attempt at the target under the
// spec (build_failed when the latest attempt failed to build), and false
// when the target was never attempted.
func (db *DB) Status(specHash, targetKey string) (s record.Status, ok bool, err error) {
	err = db.view(func(tx *bolt.Tx) error {
		s, ok, err = latestStatus(tx, specHash, targetKey)
		return err
	})
	return s, ok, err
}

// appendFill is the fill of pages of buckets whose keys mostly arrive in
// order (bbolt's default of one half suits random inserts).
const appendFill = 0.9

// latestStamp is the largest time a stamp holds.
var latestStamp = time.Unix(0, math.MaxInt64)

func validateRun(r *record.Run) error {
	if r == nil {
		return errors.New("nil run")
	}
	for _, f := range []struct{ name, value string }{
		{"target key", r.TargetKey}, {"spec hash", r.SpecHash}, {"target commit", r.Target.Commit},
	} {
		if f.value == "" {
			return fmt.Errorf("run has no %s", f.name)
		}
		if strings.IndexByte(f.value, 0) >= 0 {
			return fmt.Errorf("run %s %q holds a NUL byte", f.name, f.value)
		}
	}
	switch r.Status {
	case record.StatusOK, record.StatusBuildFailed, record.StatusBenchFailed, record.StatusInfraError:
	default:
		return fmt.Errorf("run of %s has unknown status %q", r.Target.Short(), r.Status)
	}
	if r.Started.IsZero() {
		return fmt.Errorf("run of %s has no start time", r.Target.Short())
	}
	if r.Started.Unix() < 0 || r.Started.After(latestStamp) {
		return fmt.Errorf("run of %s started at %s, outside 1970..2262", r.Target.Short(), r.Started)
	}
	for m, v := range r.Values {
		if m == "" {
			return fmt.Errorf("run of %s has a value without a metric name", r.Target.Short())
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("run of %s: metric %s value %v is not a finite number", r.Target.Short(), m, v)
		}
	}
	return nil
}

// addRun writes the run and everything derived from it; r must be valid.
func addRun(tx *bolt.Tx, r *record.Run) (uint64, error) {
	runs := tx.Bucket(bucketRuns)
	id, err := runs.NextSequence()
	if err != nil {
		return 0, fmt.Errorf("add run of %s: assign id: %w", r.Target.Short(), err)
	}
	rec := *r
	rec.ID = id
	// Ids and start times grow as runs arrive, so these buckets grow at
	// their end: fill their pages instead of leaving them half empty.
	runs.FillPercent = appendFill
	if err := putJSON(runs, runKey(id), rec); err != nil {
		return 0, fmt.Errorf("add run %d: %w", id, err)
	}
	st := stamp(r.Started, id)
	if err := indexRun(tx, id, st, r); err != nil {
		return 0, err
	}
	if r.Status != record.StatusInfraError {
		key := indexKey(prefixKey(r.SpecHash, r.TargetKey), st)
		if err := putJSON(tx.Bucket(bucketCache), key, cacheRecord{Status: r.Status, Values: r.Values, Host: r.Host, Node: r.Node}); err != nil {
			return 0, fmt.Errorf("add run %d: cache: %w", id, err)
		}
	}
	if r.Status == record.StatusOK {
		if err := addSamples(tx, id, st, r); err != nil {
			return 0, err
		}
	}
	return id, nil
}

// indexRun writes the run's entries in runs_by_time, runs_by_target and
// runs_by_commit.
func indexRun(tx *bolt.Tx, id uint64, st []byte, r *record.Run) error {
	byTime := tx.Bucket(bucketRunsByTime)
	byTime.FillPercent = appendFill
	head := runHead{TargetKey: r.TargetKey, SpecHash: r.SpecHash, Commit: r.Target.Commit}
	if err := putJSON(byTime, st, head); err != nil {
		return fmt.Errorf("add run %d: index %s: %w", id, bucketRunsByTime, err)
	}
	for _, ix := range []struct {
		bucket []byte
		key    []byte
	}{
		{bucketRunsByTarget, indexKey(prefixKey(r.TargetKey), st)},
		{bucketRunsByCommit, indexKey(prefixKey(r.Target.Commit), st)},
	} {
		if err := putSealed(tx.Bucket(ix.bucket), ix.key, nil); err != nil {
			return fmt.Errorf("add run %d: index %s: %w", id, ix.bucket, err)
		}
	}
	return nil
}

func addSamples(tx *bolt.Tx, id uint64, st []byte, r *record.Run) error {
	samples := tx.Bucket(bucketSamples)
	plain := len(r.Target.Hunks) == 0 && len(r.Target.Env) == 0
	for metric, v := range r.Values {
		b, err := samples.CreateBucketIfNotExists([]byte(metric))
		if err != nil {
			return fmt.Errorf("add run %d: samples of %s: %w", id, metric, err)
		}
		b.FillPercent = appendFill
		rec := sampleRecord{
			Value: v, Commit: r.Target.Commit, TargetKey: r.TargetKey, SpecHash: r.SpecHash,
			Host: r.Host, Status: r.Status, Plain: plain,
		}
		if err := putJSON(b, st, rec); err != nil {
			return fmt.Errorf("add run %d: sample of %s: %w", id, metric, err)
		}
	}
	return nil
}

func getRun(tx *bolt.Tx, id uint64) (record.Run, bool, error) {
	var r record.Run
	ok, err := getJSON(tx.Bucket(bucketRuns), runKey(id), &r)
	if err != nil {
		return r, false, fmt.Errorf("get run %d: %w", id, err)
	}
	return r, ok, nil
}

// listRuns walks the narrowest index the filter allows, newest first, and
// decodes only the runs that match.
func listRuns(tx *bolt.Tx, f RunFilter) ([]record.Run, error) {
	bucket, prefix := bucketRunsByTime, []byte(nil)
	switch {
	case f.TargetKey != "":
		bucket, prefix = bucketRunsByTarget, prefixKey(f.TargetKey)
	case f.Commit != "":
		bucket, prefix = bucketRunsByCommit, prefixKey(f.Commit)
	}
	byTime := tx.Bucket(bucketRunsByTime)
	var runs []record.Run
	err := walkNewest(tx.Bucket(bucket), prefix, nil, func(k, _ []byte) (bool, error) {
		st := k[len(k)-stampLen:]
		var h runHead
		if ok, err := getJSON(byTime, st, &h); err != nil || !ok {
			if err != nil {
				return false, fmt.Errorf("list runs: %s entry %x: %w", bucket, k, err)
			}
			// Written in one transaction with its run, an index entry
			// without it means the file was overwritten.
			return false, fmt.Errorf("list runs: %s entry %x has no head in %s: %w", bucket, k, bucketRunsByTime, ErrDamaged)
		}
		if !matches(f, h) {
			return true, nil
		}
		_, id := parseStamp(st)
		r, ok, err := getRun(tx, id)
		if err != nil {
			return false, err
		}
		if !ok {
			return false, fmt.Errorf("list runs: %s names run %d, which does not exist: %w", bucket, id, ErrDamaged)
		}
		runs = append(runs, r)
		return f.Limit <= 0 || len(runs) < f.Limit, nil
	})
	return runs, err
}

func matches(f RunFilter, h runHead) bool {
	return (f.TargetKey == "" || f.TargetKey == h.TargetKey) &&
		(f.SpecHash == "" || f.SpecHash == h.SpecHash) &&
		(f.Commit == "" || f.Commit == h.Commit)
}

func cached(tx *bolt.Tx, specHash, targetKey string) (CacheEntry, error) {
	var e CacheEntry
	prefix := prefixKey(specHash, targetKey)
	c := tx.Bucket(bucketCache).Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		value, err := unseal(k, v)
		if err != nil {
			return e, err
		}
		ref, err := decodeCacheRecord(k, value)
		if err != nil {
			return e, fmt.Errorf("cache of %s under spec %s: %w", targetKey, specHash, err)
		}
		if ref.Status == record.StatusOK {
			e.OK = append(e.OK, ref)
		} else {
			e.Failed = append(e.Failed, ref)
		}
	}
	return e, nil
}

func latestStatus(tx *bolt.Tx, specHash, targetKey string) (record.Status, bool, error) {
	var (
		ref   RunRef
		found bool
	)
	err := walkNewest(tx.Bucket(bucketCache), prefixKey(specHash, targetKey), nil, func(k, v []byte) (bool, error) {
		var err error
		ref, err = decodeCacheRecord(k, v)
		found = err == nil
		return false, err
	})
	if err != nil {
		return "", false, fmt.Errorf("status of %s under spec %s: %w", targetKey, specHash, err)
	}
	return ref.Status, found, nil
}

// decodeCacheRecord decodes an unsealed cache entry.
func decodeCacheRecord(k, v []byte) (RunRef, error) {
	var rec cacheRecord
	if err := json.Unmarshal(v, &rec); err != nil {
		return RunRef{}, fmt.Errorf("decode cache entry %x: %w", k, err)
	}
	started, id := parseStamp(k)
	return RunRef{ID: id, Started: started, Status: rec.Status, Values: rec.Values, Host: rec.Host, Node: rec.Node}, nil
}

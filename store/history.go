package store

import (
	"bytes"
	"fmt"
	"sort"
	"time"

	bolt "go.etcd.io/bbolt"
)

// HistoryQuery selects samples.
type HistoryQuery struct {
	// Metric is the metric to return; empty returns every metric.
	Metric string
	// Since drops samples of runs started before it; zero keeps all.
	Since time.Time
	// Limit caps the number of rows; ≤ 0 means no cap.
	Limit int
	// Commit keeps only samples of that commit (full hash).
	Commit string
	// All includes samples of targets with hunks or environment overrides;
	// by default only commits measured as they are are returned.
	All bool
}

// HistoryRow is one sample. The run's fingerprint and logs are not part of
// it: fetch them with Run(RunID) when they are wanted.
type HistoryRow struct {
	Metric    string    `json:"metric"`
	Commit    string    `json:"commit"`
	Time      time.Time `json:"time"` // start of the run
	RunID     uint64    `json:"run_id"`
	Host      string    `json:"host"`
	Status    string    `json:"status"`
	Value     float64   `json:"value"`
	SpecHash  string    `json:"spec_hash"`
	TargetKey string    `json:"target_key"`
}

// History returns the samples q selects, newest first; samples of one run
// are ordered by metric name.
func (db *DB) History(q HistoryQuery) (rows []HistoryRow, err error) {
	err = db.view(func(tx *bolt.Tx) error {
		rows, err = history(tx, q)
		return err
	})
	return rows, err
}

func history(tx *bolt.Tx, q HistoryQuery) ([]HistoryRow, error) {
	metrics, err := historyMetrics(tx, q.Metric)
	if err != nil {
		return nil, err
	}
	h := historyWalk{q: q}
	if q.Commit != "" {
		err = h.byCommit(tx, metrics)
	} else {
		err = h.byTime(tx, metrics)
	}
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	return h.rows, nil
}

// historyMetrics are the sample buckets to read, sorted by name; an unknown
// metric has no samples yet, which is not an error.
func historyMetrics(tx *bolt.Tx, metric string) ([]string, error) {
	samples := tx.Bucket(bucketSamples)
	if metric != "" {
		if samples.Bucket([]byte(metric)) == nil {
			return nil, nil
		}
		return []string{metric}, nil
	}
	var names []string
	err := samples.ForEachBucket(func(k []byte) error {
		names = append(names, string(k))
		return nil
	})
	sort.Strings(names)
	return names, err
}

// historyWalk collects rows until the query's limit.
type historyWalk struct {
	q    HistoryQuery
	from *historyPos // a page's start; nil is the newest sample
	rows []HistoryRow
}

func (h *historyWalk) full() bool { return h.q.Limit > 0 && len(h.rows) >= h.q.Limit }

// add decodes one sample and keeps it if the query wants it.
func (h *historyWalk) add(metric string, k, raw []byte) error {
	if !h.from.past(metric, k) {
		return nil
	}
	v, err := unseal(k, raw)
	if err != nil {
		return err
	}
	s, err := decodeSample(v)
	if err != nil {
		return fmt.Errorf("decode sample %s/%x: %w", metric, k, err)
	}
	if !s.Plain && !h.q.All {
		return nil
	}
	started, id := parseStamp(k)
	h.rows = append(h.rows, HistoryRow{
		Metric: metric, Commit: s.Commit, Time: started, RunID: id, Host: s.Host,
		Status: string(s.Status), Value: s.Value, SpecHash: s.SpecHash, TargetKey: s.TargetKey,
	})
	return nil
}

// byCommit walks the commit's runs newest first and looks their samples up
// by stamp, so its cost follows the commit's runs, not the whole history.
func (h *historyWalk) byCommit(tx *bolt.Tx, metrics []string) error {
	samples := tx.Bucket(bucketSamples)
	return walkNewest(tx.Bucket(bucketRunsByCommit), prefixKey(h.q.Commit), sinceKey(h.q.Since),
		func(k, _ []byte) (bool, error) {
			st := k[len(k)-stampLen:]
			for _, m := range metrics {
				if v := samples.Bucket([]byte(m)).Get(st); v != nil {
					if err := h.add(m, st, v); err != nil {
						return false, err
					}
				}
				if h.full() {
					return false, nil
				}
			}
			return true, nil
		})
}

// byTime merges the metrics' sample buckets newest first: one cursor per
// metric, each step taking the largest key (ties in metric order).
func (h *historyWalk) byTime(tx *bolt.Tx, metrics []string) error {
	type head struct {
		metric string
		c      *bolt.Cursor
		k, v   []byte
	}
	floor := sinceKey(h.q.Since)
	heads := make([]*head, 0, len(metrics))
	for _, m := range metrics {
		c := tx.Bucket(bucketSamples).Bucket([]byte(m)).Cursor()
		k, v := h.from.seek(c, m)
		heads = append(heads, &head{metric: m, c: c, k: k, v: v})
	}
	for !h.full() {
		var top *head
		for _, hd := range heads {
			if hd.k == nil || (floor != nil && bytes.Compare(hd.k, floor) < 0) {
				continue
			}
			if top == nil || bytes.Compare(hd.k, top.k) > 0 {
				top = hd
			}
		}
		if top == nil {
			return nil
		}
		if err := h.add(top.metric, top.k, top.v); err != nil {
			return err
		}
		top.k, top.v = top.c.Prev()
	}
	return nil
}
